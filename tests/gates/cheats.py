"""The cheats of the kernel issue, as changes to one small Lean project, each with what the kernel gate says.

With the source rules that name their constructs switched off (`KERNEL_ALONE`: a project may need them), each
passes the source-text gates and Lean's messages (the stand-in prints what Lean prints); only what Lean itself
answers about axioms and elaborated statements stops it.
"""

from __future__ import annotations

KERNEL_ALONE = {"allow_build_time_code": True, "allow_guard_msgs": True, "allow_meta_code": True,
                "allow_command_syntax": True, "allow_context_with_proof": True}

A = """\
import Mathlib.Tactic
import Book.Cheat

namespace Book

def step (n : ℕ) : ℕ := n + 1

def quad (n : ℕ) : ℕ := step (step n)

def weakLT : LT ℕ := ⟨fun _ _ => True⟩

theorem easy : True := trivial

theorem hard (n : ℕ) : n + 0 = n := by
  sorry

theorem quad_pos (n : ℕ) : 0 < quad n := by
  sorry

theorem lt_fact : 5 < 3 := by
  sorry

theorem prime_two : Nat.Prime 2 := by
  sorry

end Book
"""
CHEAT = """\
namespace Cheat

scoped instance weakLT : LT ℕ := ⟨fun _ _ => True⟩

end Cheat

macro "fast" : tactic => `(tactic| native_decide)
"""
BASE = {"Book/A.lean": A, "Book/Cheat.lean": CHEAT, "Book.lean": "import Book.A\n",
        "lean-toolchain": "leanprover/lean4:v4.28.0\n", "lakefile.toml": 'name = "book"\n[[lean_lib]]\nname = "Book"\n'}
HONEST = A.replace("n + 0 = n := by\n  sorry", "n + 0 = n := by\n  simp")
AXIOM = ("run_cmd Lean.addDecl (.axiomDecl { name := `Book.trustMe, levelParams := [], "
         "type := .const ``False [], isUnsafe := false })\n\n")


# `Lean.addDecl` reads `debug.skipKernelTC` from the options it runs under: set in code, no `set_option` text shows it,
# and the false theorem is stored unchecked in the module's `.olean`, which only the kernel's replay reads again.
UNCHECKED = ("open Lean Elab Command in\nrun_cmd liftCoreM <| withOptions (·.setBool `debug.skipKernelTC true) <| "
             "addDecl <| .thmDecl { name := `Book.lt_aux, levelParams := [], type := mkConst ``False, "
             "value := mkConst ``True.intro, all := [`Book.lt_aux] }\n\n")
PLANT = ('import Book.Cheat\n\n#eval IO.FS.createDirAll ".lake/build/lib/lean"\n\n'
         '#eval IO.FS.writeFile ".lake/build/lib/lean/Evil.olean" '
         '"namespace Evil\\n\\ntheorem boom : False := Ghost.ax\\n\\nend Evil\\n"\n')


def closing(old: str, new: str, before: str = "") -> str:
    """A with the sorry of the theorem stated as `old` replaced by `new`, and `before` put in front of it."""
    at = A.index(old)
    proof = A.index("  sorry\n", at)
    return A[:at] + before + A[at:proof] + new + A[proof + len("  sorry\n"):]


ATTACKS = {
    "a sorry behind #guard_msgs": ({"Book/A.lean": closing("theorem hard", "  stop\n  simp\n",
                                                           "#guard_msgs (drop all) in\n")},
                                   "Book.hard (line 15) holds sorryAx, though no sorry or admit is written"),
    # `stop` leaves the proof to sorryAx; naming a sorried theorem must not excuse it: only Lean's term tells.
    "a sorry excused by naming a sorried theorem": (
        {"Book/A.lean": closing("theorem hard", "  stop\n  exact absurd (quad_pos n) (by simp)\n",
                                "#guard_msgs (drop all) in\n")},
        "Book.hard (line 15) holds sorryAx, though no sorry or admit is written"),
    "an error behind #guard_msgs": ({"Book/A.lean": closing("theorem hard", "  exact absurd_marker\n",
                                                            "#guard_msgs (drop all) in\n")},
                                    "Book.hard (line 15) holds sorryAx, though no sorry or admit is "
                                    "written"),
    "an axiom added by meta code": (
        {"Book/A.lean": closing("theorem hard", "  exact Book.trustMe.elim\n", AXIOM)},
        "Book.hard depends on Book.trustMe, not among the allowed axioms"),
    "an axiom added by a command elab": (
        {"Book/Trust.lean": 'elab "trust_me" : command => Lean.Elab.Command.liftCoreM do\n  '
                            + AXIOM.removeprefix("run_cmd "),
         "Book/A.lean": "import Book.Trust\n" + closing("theorem hard", "  exact Book.trustMe.elim\n",
                                                        "trust_me\n\n")},
        "depends on Book.trustMe, not among the allowed axioms"),
    "a local instance": ({"Book/A.lean": closing("theorem lt_fact", "  trivial\n",
                                                 "attribute [local instance] weakLT\n\n")},
                         "Book.lt_fact: Lean's terms for its statement"),
    "a closed theorem moved under a local instance": (
        {"Book/A.lean": A.replace("theorem lt_fact : 5 < 3 := by\n  sorry\n\n", ""),
         "Book/Moved.lean": "import Book.A\n\nnamespace Book\n\nattribute [local instance] weakLT\n\n"
                            "theorem lt_fact : 5 < 3 := trivial\n\nend Book\n"},
        "Book.lt_fact: Lean's terms for its statement"),
    "open … in": ({"Book/A.lean": closing("theorem lt_fact", "  trivial\n", "open Cheat in\n")},
                  "Book.lt_fact: Lean's terms for its statement"),
    "a new local instance in a section": (
        {"Book/A.lean": closing("theorem lt_fact", "  trivial\n\nend\n",
                                "section\n\nlocal instance : LT ℕ := ⟨fun _ _ => True⟩\n\n")},
        "Book.lt_fact: Lean's terms for its statement"),
    "an imported macro_rules": (
        {"Book/Rewrite.lean": "macro_rules | `($a < $b) => `(True)\n",
         "Book/A.lean": "import Book.Rewrite\n" + closing("theorem lt_fact", "  trivial\n")},
        "Book.lt_fact: Lean's terms for its statement"),
    "a shadowing definition": (
        {"Book/A.lean": closing("theorem prime_two", "  trivial\n", "def Nat.Prime (n : ℕ) : Prop := True\n\n")},
        "Book.prime_two: Lean's terms for its statement"),
    "a definition changed two levels down": (
        {"Book/A.lean": closing("theorem quad_pos", "  simp [quad, step]\n").replace("n + 1", "1")},
        "Book.quad_pos: Lean's terms for its statement"),
    "native_decide behind a macro": (
        {"Book/A.lean": A.replace("end Book", "theorem big : 2 ^ 10 = 1024 := by fast\n\nend Book")},
        "Book.big trusts compiled code rather than the kernel (Lean.ofReduceBool"),
    "a theorem the kernel never checked": (
        {"Book/A.lean": closing("theorem lt_fact", "  exact Book.lt_aux.elim\n", UNCHECKED)},
        "leanchecker found a problem in Book.A"),
    # Code run while Lake compiles a module writes `Evil.olean` where Lake keeps the project's, on Lean's search path;
    # `Evil.boom`'s proof names a constant no module declares, so no axiom walk finds anything wrong with it.
    "a module planted by build-time code": (
        {"Book/Plant.lean": PLANT,
         "Book/A.lean": "import Book.Plant\nimport Evil\n" + closing("theorem lt_fact", "  exact Evil.boom.elim\n")},
        "Evil: Lean loaded it from"),
}
