"""The statement lock's bookkeeping: what is locked, unlocked and dropped after a cycle's verdicts."""

from __future__ import annotations

from audit.entities import Entity
from audit.loop import Judged, issue_slug, update_lock
from gates.census import census
from gates.meaning import changed_meanings
from gates.tree import MemTree
from state.history import Faithfulness
from state.statement_lock import Locked, StatementLock

BEFORE = b"namespace Book\ntheorem a : True := trivial\ntheorem b : 1 = 1 := rfl\ntheorem c : 2 = 2 := rfl\nend Book\n"
AFTER = BEFORE.replace(b"True := trivial", b"True := by trivial").replace(b"1 = 1", b"1 + 0 = 1").replace(
    b"theorem c : 2 = 2", b"theorem d : 3 = 3")


def judged(entity: str, name: str, score: int | None, digest: str) -> Judged:
    return Judged(Entity(id=entity, kind="theorem", name=entity, nl=""), "",
                  Faithfulness(entity=entity, declarations=[name], score=score), {name: digest})


def test_changed_meanings_ignore_proofs() -> None:
    before, after = census(MemTree({"A.lean": BEFORE})), census(MemTree({"A.lean": AFTER}))
    assert changed_meanings(before, after) == {"Book.b": "changed", "Book.d": "is new"}


def test_the_lock_follows_the_verdicts_and_drops_what_vanished_or_changed() -> None:
    after = census(MemTree({"A.lean": AFTER}))
    old = StatementLock(statements={n: Locked(hash="old", entity=f"e:{n}", score=3, cycle=1)
                                    for n in ("Book.a", "Book.b", "Book.c")})
    new = update_lock(old, [judged("e:b", "Book.b", 1, "h-b"), judged("e:d", "Book.d", 2, "h-d")],
                      {"Book.b", "Book.d"}, after, cycle=7)
    assert set(new.statements) == {"Book.a", "Book.d"}  # b judged different, c deleted (a restatement)
    assert new.statements["Book.a"].hash == "old"  # untouched: its lock stands
    assert new.statements["Book.d"] == Locked(hash="h-d", entity="e:d", score=2, cycle=7)


def test_a_restated_statement_the_judge_could_not_read_is_unlocked() -> None:
    after = census(MemTree({"A.lean": AFTER}))
    old = StatementLock(statements={"Book.b": Locked(hash="old", entity="e:b", score=3, cycle=1)})
    new = update_lock(old, [judged("e:b", "Book.b", None, "h-b")], {"Book.b"}, after, cycle=7)
    assert new.statements == {}  # the old hash no longer matches: keeping it would refuse every later cycle


def test_issue_slugs_are_plain_file_names() -> None:
    assert issue_slug("thm:2.1") == "unfaithful-thm-2.1"
    assert issue_slug("Théorème 3") == "unfaithful-th-or-me-3"
