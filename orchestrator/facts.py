"""What a cycle measurably did, and the score those facts allow.

The Evaluator reads the Worker's report, and the Worker writes that report, so its score is bounded by facts the
orchestrator measures itself:

- above 0 only when the change landed and sorries were closed (declarations that held one at the base hold none
  now, nor name a declaration still holding one, and no declaration holds one that did not: a sorry moved or
  two merged into one is no progress), a statement was judged faithful or stronger against the book's trusted
  text (not against a doc comment the change itself first wrote) for an entity none of whose declarations was
  faithful or stronger at the base (a copy of a faithful statement is no progress, however often it is judged),
  or a declared decomposition split a sorry into parts (a declared restructuring in which a declaration holding a
  sorry uses a new declaration holding one: `split_off`; more sorries inside one proof, which nothing has to use,
  are not a split). Line counts and file sizes are never progress: a file over the cap shrinking one line a cycle
  would farm a score forever;
- at most 0 when the change did not land, the sorry count rose without such a decomposition, a statement was
  judged DIFFERENT from the book (or judged, as a person rejected it: a person's rejection in `reviews.toml`
  counts as DIFFERENT whatever the judge said, and the entity never counts as faithful by it), or a file over
  the cap grew.

The escalation to the Consultant and the stall alerts count cycles without progress by these facts
(`HistoryRecord.progress`), never by the score.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from audit.judge import Score
from audit.loop import Judged
from gates.census import Census
from gates.env import SORRY, Module, normal
from gates.environment import lean_names
from gates.index import Decl
from gates.lexer import ID_FIRST, ID_REST
from gates.size import grown
from gates.sorry import leaners, restructuring
from state.statement_lock import StatementLock

_NAMES = re.compile(rf"[{ID_FIRST}][{ID_REST}.]*")

CEILING = 0
"""The most a score may be when no fact shows progress, or one counts against it."""
GAINS = {
    "closed": "sorries were closed: declarations that held one hold none now, nor name a declaration still "
              "holding one, and no declaration holds one that did not (a sorry moved, or two merged into one, is "
              "not closed; a part a recent declared decomposition made counts only once the declaration it was "
              "split from holds none)",
    "faithful": "a statement was judged faithful or stronger against the book's trusted text (not against a doc "
                "comment the change itself first wrote), for a book entity none of whose statements was judged "
                "faithful or stronger before",
    "decomposed": "a declared decomposition (`RESTRUCTURING:`) split a sorry into parts: the declaration that "
                  "held it uses a new declaration holding one (more sorries inside one proof are not a split)",
}
"""The facts that allow a score above `CEILING`, as the Evaluator is told them (`Facts._gains` measures them)."""
LOSSES = {
    "not_landed": "the change did not land (the gates rejected it, or there was no change)",
    "rose": "the sorry count rose without such a decomposition",
    "different": "a statement was judged DIFFERENT from the book, or is one a person rejected",
    "grew": "a Lean file over the size cap grew",
}
"""The facts that hold a score at `CEILING` or below, as the Evaluator is told them (`Facts._losses`)."""


def caps() -> str:
    """The caps as the Evaluator's prompt states them, from the values the code applies."""
    gains = "".join(f"\n- {text}" for text in GAINS.values())
    losses = "".join(f"\n- {text}" for text in LOSSES.values())
    return (f"The orchestrator caps your score by facts it measures itself, whatever you answer: a score above "
            f"{CEILING} stands only when the change landed and at least one of these holds:{gains}\n"
            f"and none of these holds (any one of them holds the score at {CEILING} or below):{losses}\n"
            "The Facts section says which apply to this cycle.")


def holes(census: Census) -> int:
    """The sorries and admits that count as unfinished work. The hook for the kernel: where Lean's kernel can
    say which declarations depend on `sorryAx`, that count replaces the source census's here."""
    return census.holes


@dataclass
class Facts:
    landed: bool
    before: int  # sorries and admits at the base
    after: int  # and with the change (the base's count when it did not land)
    closed: list[str] = field(default_factory=list)  # declarations whose sorries the change closed
    opened: list[str] = field(default_factory=list)  # declarations holding a sorry that held none at the base
    faithful: list[str] = field(default_factory=list)  # entities judged faithful or stronger against the book
    different: list[str] = field(default_factory=list)  # entities judged DIFFERENT from the book, or rejected
    rejected: list[str] = field(default_factory=list)  # those of them a person rejected, whatever the judge said
    grew: list[str] = field(default_factory=list)  # files over the size cap the change made longer
    decomposed: list[str] = field(default_factory=list)  # declarations whose sorry a declared split divided
    parts: dict[str, list[str]] = field(default_factory=dict)  # each of those → the new declarations it uses
    # Closed parts of a recent declared split whose declaration still holds a hole → that declaration: closing a part
    # is progress only with the statement it was split from (else a split into `True` parts farms a score).
    waiting: dict[str, str] = field(default_factory=dict)

    def gains(self) -> list[str]:
        return [text for text in self._gains().values() if text]

    def losses(self) -> list[str]:
        return [text for text in self._losses().values() if text]

    def _gains(self) -> dict[str, str | None]:
        """Each rule of `GAINS`: what the change did by it, or None."""
        landed = self.landed
        counted = [c for c in self.closed if c not in self.waiting]
        return {
            "closed": f"sorries closed in {', '.join(counted)} (sorries and admits {self.before} → {self.after})"
            if landed and counted and not self.opened and self.after <= self.before else None,
            "faithful": f"judged faithful or stronger: {', '.join(self.faithful)}" if landed and self.faithful
            else None,
            "decomposed": f"a declared decomposition split the sorry of {', '.join(self.decomposed)}"
            if landed and self.decomposed else None,
        }

    def _losses(self) -> dict[str, str | None]:
        """Each rule of `LOSSES`: what the change did by it, or None."""
        return {
            "not_landed": "the change did not land" if not self.landed else None,
            "rose": f"sorries rose {self.before} → {self.after} without a decomposition"
            if self.after > self.before and not self.decomposed else None,
            "different": self._different(),
            "grew": f"files over the size cap grew: {', '.join(self.grew)}" if self.grew else None,
        }

    def _different(self) -> str | None:
        judged = [e for e in self.different if e not in self.rejected]
        parts = ([f"judged DIFFERENT from the book: {', '.join(judged)}"] if judged else []) + (
            [f"rejected by a person (reviews.toml), whatever the judge said: {', '.join(self.rejected)}"]
            if self.rejected else [])
        return "; ".join(parts) or None

    @property
    def progress(self) -> bool:
        return bool(self.gains()) and not self.losses()

    def cap(self, score: int) -> int:
        """The Evaluator's score as the facts allow it."""
        return score if self.progress else min(score, CEILING)

    def render(self) -> str:
        lines = [f"- sorries and admits: {self.before} → {self.after}" + ("" if self.landed else " (not landed)")]
        lines += [f"- progress: {g}" for g in self.gains()] + [f"- against: {loss}" for loss in self.losses()]
        lines += [f"- not counted: the sorry closed in {part}, a part split from {whole}, which still holds one"
                  for part, whole in self.waiting.items()]
        verdict = (f"a score above {CEILING} is possible" if self.progress else
                   f"no fact shows progress: the score is at most {CEILING}, whatever the report says")
        return "\n".join([*lines, f"- so {verdict}"])


def measure(before: Census, after: Census | None, judged: list[Judged], report: str, cap: int, *,
            settled: Collection[str], rejected: Collection[str] = (), orphans: Collection[str] = (),
            split: Mapping[str, str] | None = None) -> Facts:
    """The facts of a change: `after` is the census with it when it landed, else None. `settled`: the book's
    entities one of whose declarations was faithful or stronger at the base (`faithful_at`). `rejected`:
    declarations whose last decision by a person, on whatever meaning, rejects them (`state.reviews.unanswered`);
    an entity judged with one of them counts as different, whatever the judge said, restated or not, until a
    person approves it (a person's word is final); so does one of `orphans` (`state.reviews.orphaned`: its rejected
    declaration renamed or moved away). `split`: each part recent declared decompositions made → the declaration
    it was split from (`HistoryRecord.parts` within the restructure window)."""
    if after is None:
        return Facts(False, holes(before), holes(before))
    refused = {j.entity.id for j in judged if any(n in rejected for n in j.hashes) or j.entity.id in orphans}
    scored = [j for j in judged if j.verdict.score is not None and j.entity.id not in refused]
    done, opened = closed(before, after)
    parts = split_off(before, after) if restructuring(report) else {}
    waiting = {d: split[d] for d in done if split and d in split and _open(after, split[d])}
    return Facts(
        True, holes(before), holes(after), closed=done, opened=opened,
        faithful=[j.entity.id for j in scored if j.verdict.score is not None and j.verdict.score >= Score.STRONGER
                  and not j.entity.fresh and j.entity.id not in settled],
        different=[*sorted(refused), *(j.entity.id for j in scored if j.verdict.score == Score.DIFFERENT)],
        rejected=sorted(refused),
        grew=[g.path for g in grown(before, after, cap)],
        decomposed=list(parts), parts=parts, waiting=waiting)


def _open(census: Census, name: str) -> bool:
    """Whether the declaration `name` holds a hole, or uses one that does (a part of it still open)."""
    holed = {h.name for h in census.holed()}
    found = [(p, d) for p, d in census.decls() if d.name == name]
    holding = Names.of(d.name for _, d in census.decls() if d.name and d.key in holed and d.name != name)
    return any(d.key in holed or uses(d, holding, census.lean.get(p)) for p, d in found)


def closed(before: Census, after: Census) -> tuple[list[str], list[str]]:
    """Declarations that held a hole at the base (as Lean says where it listed the file) and, still there, hold
    none now nor rest on one (where Lean listed it: no `sorryAx` among its axioms; elsewhere: it names no
    declaration holding one); and declarations that hold one now and held none at the base (new ones, or proofs
    traded)."""
    was = {h.name for h in before.holed()}
    now = {h.name for h in after.holed()}
    present = after.by_key
    closing = sorted(k for k in was if k not in now and k in present)
    leaned = set(leaners(before, after)) if closing else set()
    modules = list(after.lean.values())
    for name in closing:  # the last listing holding its constant says what it rests on
        lean = after.lean_name(name)
        const = next((m.consts[lean] for m in reversed(modules) if lean in m.consts), None) if lean else None
        if const is not None and SORRY in const.axioms:
            leaned.add(name)
    done = [_shown(k, before, after) for k in closing if k not in leaned]
    opened = [_shown(k, before, after) for k in sorted(now) if k not in was]
    return done, opened


def _shown(key: str, before: Census, after: Census) -> str:
    """A declaration key as the facts name it: by the change's declaration so keyed, else the base's."""
    d = after.by_key.get(key) or before.by_key.get(key)
    return key if d is None else _named(d)


def _named(d: Decl) -> str:
    return d.name or f"{d.kind} at line {d.line}"


def faithful_at(lock: StatementLock, pairing: dict[str, str], rejected: Collection[str] = ()) -> set[str]:
    """The book's entities one of whose declarations was faithful or stronger at the base: those the lock holds
    (the judge's verdicts that still stand), by the entity the lock names and the one the book pairs it with;
    never by a declaration a person rejected (`rejected`), which the judge's verdict does not make faithful."""
    held = {n: s for n, s in lock.statements.items() if n not in rejected}
    return {s.entity for s in held.values()} | {pairing[n] for n in held if n in pairing}


def decomposed(before: Census, after: Census) -> list[str]:
    """Declarations holding a sorry at the base whose sorry a declared restructuring split off into new
    declarations holding one, which they use (`split_off`)."""
    return list(split_off(before, after))


def split_off(before: Census, after: Census) -> dict[str, list[str]]:
    """Each declaration holding a sorry at the base (as the base has it) → the new declarations holding one that
    it uses now: the parts its sorry was split into. A new hole counts only when the declaration it was split
    from uses it; a sorry added inside a proof never does by itself (`have _ : True := sorry` is used by
    nothing), so more holes in place are no split."""
    old_keys = before.by_key.keys()
    new_holding = {d.name for path, d in after.decls() if d.name and after.holds(path, d) and d.key not in old_keys}
    now = after.located
    short = Names.of(new_holding)
    out: dict[str, list[str]] = {}
    for path, old in before.decls():
        found = now.get(old.key)
        if found is not None and before.holds(path, old) and (
                parts := sorted(uses(found[1], short, after.lean.get(found[0])))):
            out[_named(old)] = parts
    return out


def tails(names: Iterable[str]) -> dict[str, set[str]]:
    """`names` by their last component."""
    out: dict[str, set[str]] = {}
    for n in names:
        out.setdefault(n.rsplit(".", 1)[-1], set()).add(n)
    return out


@dataclass(frozen=True)
class Names:
    """Full names as `uses` looks them up: by their last component (in a proof's text) and as Lean prints them (in
    a listing). Built once by a caller asking of many declarations."""

    short: dict[str, set[str]]
    printed: dict[str, set[str]]

    @classmethod
    def of(cls, names: Iterable[str]) -> Names:
        names = list(names)
        printed: dict[str, set[str]] = {}
        for n in names:
            printed.setdefault(normal(n), set()).add(n)
        return cls(tails(names), printed)


def uses(decl: Decl, names: Names, module: Module | None = None, written: Iterable[str] | None = None
         ) -> set[str]:
    """Which of `names` the value of `decl` uses: where Lean listed its file (`module`), the constants its value
    uses, and those of the constants Lean generated for it (`T._proof_1`); else from its text: a name its proof
    writes (`written`, where the caller has read them), a short name standing for every one of `names` it ends."""
    lean = lean_names(module).get(normal(decl.name)) if module is not None and decl.name else None
    if module is not None and lean is not None:
        return {n for u in module.value_users().get(lean, ()) for n in names.printed.get(u, ())}
    found: set[str] = set()
    for token in _NAMES.findall(decl.body_code) if written is None else written:
        token = token.removeprefix("_root_.")
        found |= {n for n in names.short.get(token.rsplit(".", 1)[-1], set()) if n == token or n.endswith("." + token)}
    return found
