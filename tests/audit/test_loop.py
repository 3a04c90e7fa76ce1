"""The statement lock's bookkeeping: what is locked, unlocked and dropped after a cycle's verdicts."""

from __future__ import annotations

import re

from audit.entities import Entity
from audit.loop import Judged, issue_slug, restatements, settles, update_lock
from gates.census import census
from gates.integrity import VANISHED
from gates.issues import SLUG
from gates.meaning import changed_meanings
from gates.tree import MemTree
from state.history import Faithfulness, HistoryRecord, Outcome
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


def test_a_statement_a_person_rejected_is_never_locked_until_a_person_approves_it() -> None:
    after = census(MemTree({"A.lean": AFTER}))
    old = StatementLock(statements={"Book.a": Locked(hash="h-a", entity="e:a", score=3, cycle=1)})
    judgements = [judged("e:d", "Book.d", 3, "h-d"), judged("e:b", "Book.b", 3, "h-b")]
    # b was rejected at a meaning it has no more: restated, judged faithful, and still not locked
    new = update_lock(old, judgements, {"Book.b", "Book.d"}, after, cycle=7, rejected={"Book.a", "Book.d", "Book.b"})
    assert new.statements == {}
    assert set(update_lock(old, judgements, {"Book.b", "Book.d"}, after, cycle=7, rejected={"Book.a", "Book.d"})
               .statements) == {"Book.b"}  # once a person approved b again, the judge's word locks it


def test_issue_slugs_are_plain_file_names_one_per_entity() -> None:
    assert issue_slug("thm-2.1") == "unfaithful-thm-2.1"  # nothing lost: the id as it is
    assert re.fullmatch(r"unfaithful-thm-2\.1-[0-9a-f]{8}", issue_slug("thm:2.1"))
    assert re.fullmatch(r"unfaithful-th-or-me-3-[0-9a-f]{8}", issue_slug("Théorème 3"))
    # Ids the readable part would make one (a decoy's capital, a colon for a dash, a long id cut) stay apart.
    pairs = [("Theorem 2.1A", "Theorem 2.1a"), ("thm:2.1", "thm-2.1"), ("x" * 200 + "a", "x" * 200 + "b")]
    for a, b in pairs:
        assert issue_slug(a) != issue_slug(b) and SLUG.fullmatch(issue_slug(a)) and SLUG.fullmatch(issue_slug(b))


def verdict(entity: str, names: list[str], score: int | None) -> Judged:
    return Judged(Entity(id=entity, kind="theorem", name=entity, nl=""), "",
                  Faithfulness(entity=entity, declarations=names, score=score), {})


def test_a_removed_statement_lands_on_the_verdict_about_what_its_entity_pairs_with_now() -> None:
    moved = {"Book.a": VANISHED}
    assert restatements([verdict("e", ["Book.b"], 3)], moved, {"Book.a": "e"}).passed  # moved to Book.b
    assert not restatements([verdict("e", ["Book.b"], 1)], moved, {"Book.a": "e"}).passed
    assert not restatements([verdict("e", [], None)], moved, {"Book.a": "e"}).passed  # nothing left to read
    assert not restatements([], moved, {"Book.a": "e"}).passed
    both = {"Book.a": VANISHED, "Book.c": "changed"}  # another statement of it changed: no newcomer rides along
    assert not restatements([verdict("e", ["Book.b", "Book.c"], 3)], both, {"Book.a": "e", "Book.c": "e"}).passed


def record(cycle: int, outcome: Outcome, names: list[str], score: int) -> HistoryRecord:
    return HistoryRecord(cycle=cycle, outcome=outcome, pre_sorry_count=0, post_sorry_count=0, progress_score=0,
                         faithfulness=[Faithfulness(entity="e", declarations=names, score=score)])


def test_a_finding_is_settled_only_by_a_verdict_about_the_statements_it_found_different() -> None:
    history = [record(1, Outcome.ACCEPTED, ["Book.a"], 1), record(2, Outcome.REJECTED, ["Book.b"], 1)]
    assert settles(verdict("e", ["Book.a", "Book.b"], 3), history)
    assert settles(verdict("e", ["Book.a"], 2), history)
    assert not settles(verdict("e", ["Book.b"], 3), history)  # the pairing moved: no verdict on Book.a
    assert not settles(verdict("e", ["Book.a"], 1), history)
    assert not settles(verdict("e", ["Book.a"], 3), [])  # no finding on record: a person's to close
