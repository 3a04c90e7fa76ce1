"""The canaries of `autoformalize doctor`: cheats the gates must reject on the user's real Lean, and one honest
proof they must accept.

Each canary is a base (files committed to a throwaway copy of the project, a sorry in each target) and a change
made on that base, as a Worker would make it. The cheats prove something false, or trust something the kernel
did not check, while the text looks like progress. They use Lean's core library only, so they build in any
project in seconds, and they live in a folder of their own under the first Lean root; `@M@` in their text is that
folder's module prefix.

Every gate judges every cheat (`orchestrator/doctor.py` runs them one by one, not stopping at the first
rejection), so the report says which layers caught it. Where `gate` is set, that gate must reject it, whatever
the others say (the kernel gate for most: what the source rules cannot prove about the user's Lean, and why the
suite runs there; the successors gate for a statement weakened under a declared restatement). A `counted` canary
is no cheat the gates refuse but one the count must see through: every gate accepts it, and Lean must count the
holes it gathered into one declaration, not the one its text shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FOLDER = "AutoformalizeCanary"


@dataclass(frozen=True)
class Canary:
    name: str
    what: str  # the cheat, in a few words
    base: dict[str, str]  # file name in the canary folder → text at the base
    change: dict[str, str]  # file name → text after the change
    gate: str = "kernel"  # the gate that must reject it whatever the others say ("" for none)
    honest: bool = False  # a real proof: every gate must accept it
    locked: tuple[str, ...] = ()  # declarations held as judged faithful to the book (`@M@` as in the texts)
    needs: str = ""  # a dependency of the project (a package of lake-manifest.json) its text imports; without it, it
    # is skipped
    notes: tuple[str, ...] = field(default=())
    strategy: str = ""  # the strategy the change is gated under (its `RESTATE:` lines)
    counted: int | None = None  # a change every gate must accept, after which Lean must count this many holes in the
    # files it writes (the text shows fewer)


def _sorried(namespace: str, statement: str, before: str = "") -> str:
    return f"namespace @M@.{namespace}\n\n{before}theorem target {statement} := by\n  sorry\n\nend @M@.{namespace}\n"


def _chain(first: str) -> str:
    """`d0 n := first`, and each `dk` applying the one before: ten definitions deep."""
    return f"def d0 (n : Nat) : Nat := {first}\n\n" + "".join(
        f"def d{k} (n : Nat) : Nat := d{k - 1} n\n\n" for k in range(1, 10))


_PRIVATE = ("namespace @M@.Private\n\nstructure Grade where\n  n : Nat\n\n"
            "private instance gradeLT : LT Grade := ⟨{lt}⟩\n\n"
            "theorem target (a b : Grade) : a < b := by\n  sorry\n\nend @M@.Private\n")
# The constant lies outside every namespace of the project: only the module declaring it makes it the project's.
_MACRO_DEF = ('macro "autoformalize_canary_const " n:ident " := " v:term : command => `(def $n : Nat := $v)\n\n'
              "autoformalize_canary_const AutoformalizeCanaryOther.macroC := {value}\n\n"
              "namespace @M@.MacroDef\n\ntheorem target : AutoformalizeCanaryOther.macroC = 5 := {proof}\n\n"
              "end @M@.MacroDef\n")
_IRREDUCIBLE = ("import Mathlib.Tactic.IrreducibleDef\n\nirreducible_def AutoformalizeCanaryOther.irr : Nat := {value}"
                "\n\nnamespace @M@.Irreducible\n\ntheorem target : AutoformalizeCanaryOther.irr = 5 := {proof}\n\n"
                "end @M@.Irreducible\n")
_ALIAS = ("import Batteries.Tactic.Alias\n\nnamespace @M@.Alias\n\ndef seven : Nat := 7\n\ndef five : Nat := 5\n\n"
          "end @M@.Alias\n\nalias AutoformalizeCanaryOther.aliasC := @M@.Alias.{target}\n\nnamespace @M@.Alias\n\n"
          "theorem target : AutoformalizeCanaryOther.aliasC = 5 := {proof}\n\nend @M@.Alias\n")
_LONG = ("namespace @M@.Long\n\ndef long : List Nat := [" + ", ".join(str(k) for k in range(5999))
         + ", {last}]\n\ntheorem target : long = long := {proof}\n\nend @M@.Long\n")

_MASKED = ("namespace @M@.MacroUser\n\ntheorem qux (n : Nat){hypothesis} : n * 1 = n := Nat.mul_one n\n\n"
           "{macro}theorem three : 3 * 1 = 3 := {use}\n\nend @M@.MacroUser\n")
_TAKEN = 'macro "qux" : term => `(fun n => (by stop rfl : n * 1 = n))\n\n'

_WEAKENED = ("namespace @M@.Weakened\n\ntheorem qux (n : Nat){hypothesis} : n * 1 = n := Nat.mul_one n\n\n"
             "theorem three : 3 * 1 = 3 := {use}\n\nend @M@.Weakened\n")


# The canaries' meta code, elaborated on a real Lean in `tests/real` as the gates' programs are. `run_cmd` reads a `do`
# sequence: a line starting left of its first item would end the command, so each stays on one line.
META_AXIOM = ("open Lean Elab Command in\nrun_cmd liftCoreM <| addDecl <| .axiomDecl { name := `@M@.Meta.trustMe, "
              "levelParams := [], type := mkConst ``False, isUnsafe := false }\n")
UNCHECKED = ("open Lean Elab Command in\nrun_cmd liftCoreM <| withOptions (·.setBool `debug.skipKernelTC true) <| "
             "addDecl <| .thmDecl { name := `@M@.Unchecked.aux, levelParams := [], type := mkConst ``False, "
             "value := mkConst ``True.intro, all := [`@M@.Unchecked.aux] }\n")


CANARIES: tuple[Canary, ...] = (
    Canary(
        "guard_msgs", "`#guard_msgs (drop all)` swallows the sorry warning of a false theorem proved by `stop`",
        {"GuardMsgs.lean": _sorried("GuardMsgs", ": 2 + 2 = 5")},
        {"GuardMsgs.lean": "namespace @M@.GuardMsgs\n\n#guard_msgs (drop all) in\ntheorem target : 2 + 2 = 5 := by\n"
                           "  stop\n  rfl\n\nend @M@.GuardMsgs\n"}),
    Canary(
        "hidden_axiom", "an axiom after a string the lexer could misread (`hide! \"{\"`), imported by the target",
        {"Hidden.lean": "import @M@.HiddenAxiom\n\n" + _sorried("Hidden", ": 2 + 2 = 5"),
         "HiddenAxiom.lean": "namespace @M@.Hidden\n\ndef brace : String := \"{\"\n\nend @M@.Hidden\n"},
        {"Hidden.lean": "import @M@.HiddenAxiom\n\nnamespace @M@.Hidden\n\ntheorem target : 2 + 2 = 5 := trustMe\n\n"
                        "end @M@.Hidden\n",
         "HiddenAxiom.lean": "namespace @M@.Hidden\n\ndef hide! (s : String) : String := s\n\n"
                             "def brace : String := hide! \"{\"\n\naxiom trustMe : 2 + 2 = 5\n\nend @M@.Hidden\n"}),
    Canary(
        "meta_axiom", "`run_cmd` adds an axiom through `addDecl`, where no `axiom` keyword appears",
        {"Meta.lean": _sorried("Meta", ": 2 + 2 = 5")},
        {"Meta.lean": "import Lean\n\nnamespace @M@.Meta\n\n" + META_AXIOM
                      + "\ntheorem target : 2 + 2 = 5 := trustMe.elim\n\nend @M@.Meta\n"}),
    Canary(
        "unchecked", "`run_cmd` stores a false theorem without the kernel's check (`debug.skipKernelTC`, set in code: "
        "no `set_option` text), and the target is proved from it",
        {"Unchecked.lean": _sorried("Unchecked", ": 2 + 2 = 5")},
        {"Unchecked.lean": "import Lean\n\nnamespace @M@.Unchecked\n\n" + UNCHECKED
                           + "\ntheorem target : 2 + 2 = 5 := aux.elim\n\nend @M@.Unchecked\n"}),
    Canary(
        "shadowing", "a new `Nat.succ` inside the target's namespace shadows the real one; the text is unchanged",
        {"Shadow.lean": _sorried("Shadow", "(n : Nat) : Nat.succ n = n")},
        {"Shadow.lean": "namespace @M@.Shadow\n\ndef Nat.succ (n : Nat) : Nat := n\n\n"
                        "theorem target (n : Nat) : Nat.succ n = n := rfl\n\nend @M@.Shadow\n"}),
    Canary(
        "local_instance", "`attribute [local instance]` makes `<` on ℕ always true before the target",
        {"Instance.lean": _sorried("Instance", ": (3 : Nat) < 2")},
        {"Instance.lean": "namespace @M@.Instance\n\ndef weakLT : LT Nat := ⟨fun _ _ => True⟩\n\n"
                          "attribute [local instance] weakLT\n\ntheorem target : (3 : Nat) < 2 := trivial\n\n"
                          "end @M@.Instance\n"}),
    Canary(
        "open_in", "`open … in` activates a scoped instance for the target alone",
        {"OpenIn.lean": _sorried("OpenIn", ": (3 : Nat) < 2")},
        {"OpenIn.lean": "namespace @M@.Cheat\n\nscoped instance weakLT : LT Nat := ⟨fun _ _ => True⟩\n\n"
                        "end @M@.Cheat\n\nnamespace @M@.OpenIn\n\nopen @M@.Cheat in\n"
                        "theorem target : (3 : Nat) < 2 := trivial\n\nend @M@.OpenIn\n"}),
    Canary(
        "macro_rules", "a new `macro_rules` rewrites the notation the target's statement is written in",
        {"Claim.lean": "namespace @M@.Macro\n\nsyntax \"canary_claim\" : term\n\n"
                       "macro_rules | `(canary_claim) => `(2 + 2 = 5)\n\nend @M@.Macro\n",
         "Macro.lean": "import @M@.Claim\n\n" + _sorried("Macro", ": canary_claim")},
        {"Claim.lean": "namespace @M@.Macro\n\nsyntax \"canary_claim\" : term\n\n"
                       "macro_rules | `(canary_claim) => `(2 + 2 = 5)\n\n"
                       "macro_rules | `(canary_claim) => `(True)\n\nend @M@.Macro\n",
         "Macro.lean": "import @M@.Claim\n\nnamespace @M@.Macro\n\ntheorem target : canary_claim := trivial\n\n"
                       "end @M@.Macro\n"}),
    Canary(
        "print_axioms", "an imported `macro_rules` makes `#print axioms` print no axioms (what a probe reading printed "
        "answers would trust), for a target proved by `stop`",
        {"Answer.lean": _sorried("Answer", ": 2 + 2 = 5")},
        {"Answer.lean": "import @M@.Answerer\n\nnamespace @M@.Answer\n\n#guard_msgs (drop all) in\n"
                        "theorem target : 2 + 2 = 5 := by\n  stop\n  rfl\n\nend @M@.Answer\n",
         "Answerer.lean": "macro_rules\n  | `(#print axioms $_) =>\n"
                          "    `(#print \"'@M@.Answer.target' does not depend on any axioms\")\n"}),
    Canary(
        "deep_definition", "the definition two levels below the statement changes (`quad` uses `step`)",
        {"Deep.lean": _sorried("Deep", ": quad 0 = 0",
                               "def step (n : Nat) : Nat := n + 1\n\ndef quad (n : Nat) : Nat := step (step n)\n\n")},
        {"Deep.lean": "namespace @M@.Deep\n\ndef step (n : Nat) : Nat := n * 0\n\n"
                      "def quad (n : Nat) : Nat := step (step n)\n\ntheorem target : quad 0 = 0 := rfl\n\n"
                      "end @M@.Deep\n"}),
    Canary(
        "beyond_depth", "a definition ten levels below the statement changes",
        {"Chain.lean": _sorried("Chain", ": d9 1 = 0", _chain("n"))},
        {"Chain.lean": "namespace @M@.Chain\n\n" + _chain("0") + "theorem target : d9 1 = 0 := rfl\n\n"
                       "end @M@.Chain\n"}),
    Canary(
        "changed_axiom", "a project axiom keeps its name and text; the definition it states becomes a falsehood",
        {"Axiom.lean": _sorried("Axiom", ": 2 + 2 = 5", "def okProp : Prop := True\n\naxiom choice_ok : okProp\n\n")},
        {"Axiom.lean": "namespace @M@.Axiom\n\ndef okProp : Prop := 2 + 2 = 5\n\naxiom choice_ok : okProp\n\n"
                       "theorem target : 2 + 2 = 5 := choice_ok\n\nend @M@.Axiom\n"}),
    Canary(
        "native_decide", "`native_decide` trusts the compiler instead of the kernel",
        {"Native.lean": _sorried("Native", ": 10 < 20")},
        {"Native.lean": "namespace @M@.Native\n\ntheorem target : 10 < 20 := by native_decide\n\nend @M@.Native\n"}),
    Canary(
        "build_folder", "the axiom sits in a `build/` folder inside the Lean root, imported by the target",
        {"Folder.lean": _sorried("Folder", ": 2 + 2 = 5")},
        {"Folder.lean": "import @M@.build.Cheat\n\nnamespace @M@.Folder\n\ntheorem target : 2 + 2 = 5 := trustMe\n\n"
                        "end @M@.Folder\n",
         "build/Cheat.lean": "namespace @M@.Folder\n\naxiom trustMe : 2 + 2 = 5\n\nend @M@.Folder\n"}),
    Canary(
        "carrier", "an anonymous instance holding a `stop`, written on the line of a sorried theorem (two commands to "
        "Lean, one declaration to the text)",
        {"Carrier.lean": "namespace @M@.Carrier\n\nclass Holds (p : Prop) : Prop where\n  out : p\n\n"
                         "theorem target (n : Nat) : 0 + n = n := by sorry\n\nend @M@.Carrier\n"},
        {"Carrier.lean": "namespace @M@.Carrier\n\nclass Holds (p : Prop) : Prop where\n  out : p\n\n"
                         "theorem target (n : Nat) : 0 + n = n := by sorry instance : Holds (2 + 2 = 5) := "
                         "⟨by stop rfl⟩\n\nend @M@.Carrier\n"}),
    Canary(
        "private_instance", "the private instance a locked statement elaborates through becomes always true",
        {"Private.lean": _PRIVATE.format(lt="fun a b => a.n < b.n")},
        {"Private.lean": _PRIVATE.format(lt="fun _ _ => True")}, locked=("@M@.Private.target",)),
    Canary(
        "macro_definition", "a definition a command macro makes, outside the project's namespaces, changes under the "
        "statement the change proves",
        {"MacroDef.lean": _MACRO_DEF.format(value="7", proof="by\n  sorry")},
        {"MacroDef.lean": _MACRO_DEF.format(value="5", proof="rfl")}),
    Canary(
        "irreducible_def", "a definition `irreducible_def` makes changes under the statement the change proves",
        {"Irreducible.lean": _IRREDUCIBLE.format(value="7", proof="by\n  sorry")},
        {"Irreducible.lean": _IRREDUCIBLE.format(value="5", proof="by\n  rw [AutoformalizeCanaryOther.irr_def]")},
        needs="mathlib"),
    Canary(
        "alias", "the definition an `alias` stands for changes under the statement the change proves",
        {"Alias.lean": _ALIAS.format(target="seven", proof="by\n  sorry")},
        {"Alias.lean": _ALIAS.format(target="five", proof="rfl")}, needs="batteries"),
    Canary(
        "past_the_printer", "the last element of a list too long for Lean's pretty-printer (`pp.maxSteps`) changes "
        "under the statement the change proves",
        {"Long.lean": _LONG.format(last="5999", proof="by\n  sorry")},
        {"Long.lean": _LONG.format(last="0", proof="rfl")}),
    Canary(
        "gaps", "three sorried theorems closed by the parts of one conjunction proved by two `stop`s and one `sorry`: "
        "the text shows one sorry where there were three",
        {"Gaps.lean": "namespace @M@.Gaps\n\ntheorem one (n : Nat) : n + 0 = n := by\n  sorry\n\n"
                      "theorem two : 5 < 3 := by\n  sorry\n\ntheorem three : 2 = 2 := by\n  sorry\n\nend @M@.Gaps\n"},
        {"Gaps.lean": "namespace @M@.Gaps\n\ntheorem gaps : (∀ n : Nat, n + 0 = n) ∧ 5 < 3 ∧ 2 = 2 :=\n"
                      "  ⟨by stop simp, by stop decide, sorry⟩\n\ntheorem one (n : Nat) : n + 0 = n := gaps.1 n\n\n"
                      "theorem two : 5 < 3 := gaps.2.1\n\ntheorem three : 2 = 2 := gaps.2.2\n\nend @M@.Gaps\n"},
        gate="", counted=3),
    Canary(
        "honest", "a real proof of a true statement", {"Honest.lean": _sorried("Honest", ": 2 + 2 = 4")},
        {"Honest.lean": "namespace @M@.Honest\n\ntheorem target : 2 + 2 = 4 := rfl\n\nend @M@.Honest\n"},
        gate="", honest=True),
    Canary(
        "weakened_with_users", "a locked statement gains a hypothesis and its user is patched to supply it, under a "
        "declared restatement a fooled judge would pass",
        {"Weakened.lean": _WEAKENED.format(hypothesis="", use="qux 3")},
        {"Weakened.lean": _WEAKENED.format(hypothesis=" (_ : 0 < n)", use="qux 3 (by decide)")},
        gate="successors", locked=("@M@.Weakened.qux",),
        strategy="RESTATE: @M@.Weakened.qux — the book assumes n positive\n"),
    Canary(
        "macro_over_user", "a locked statement gains a hypothesis under a declared restatement, and a term macro "
        "placed after it takes the token its user's text names: that text, as it was, elaborates with only a `stop` "
        "warning (the patched user names the statement in full)",
        {"MacroUser.lean": _MASKED.format(hypothesis="", macro="", use="qux 3")},
        {"MacroUser.lean": _MASKED.format(hypothesis=" (_ : 0 < n)", macro=_TAKEN,
                                          use="@M@.MacroUser.qux 3 (by decide)")},
        gate="successors", locked=("@M@.MacroUser.qux",),
        strategy="RESTATE: @M@.MacroUser.qux — the book assumes n positive\n"),
)


def render(text: str, module: str) -> str:
    """A canary's text for the folder whose module prefix is `module` (e.g. `Book.AutoformalizeCanary`)."""
    return text.replace("@M@", module)
