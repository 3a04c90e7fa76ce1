"""reviews.toml: entries read and appended as written, and which verdicts hold for a statement as it means now."""

from __future__ import annotations

import re
import tomllib
from datetime import UTC, datetime

from state.reviews import (
    Review,
    Verdict,
    appended,
    approved,
    issue_slug,
    legacy_slug,
    orphaned,
    parse,
    rejected,
    standing,
    unanswered,
)

AT = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


def review(verdict: str, digest: str = "d1", name: str = "Book.t", note: str = "") -> Review:
    return Review(declaration=name, entity="thm:1.1", verdict=Verdict(verdict), note=note, digest=digest,
                  reviewer="Ann <ann@example.org>", at=AT)


def test_an_appended_verdict_reads_back_and_leaves_the_rest_as_written() -> None:
    by_hand = "# verdicts written by hand stay as they are\n[[review]]\ndeclaration = \"Book.s\"\n" \
              "verdict = \"comment\"\ndigest = \"x\"\nnote = \"see §2\""
    note = 'too weak: "n > 0" is missing\n[[review]]\ndeclaration = "Evil"'
    text = appended(by_hand, review("reject", note=note))
    assert text.startswith(by_hand + "\n")
    got = parse(text)
    assert got.problems == []
    assert [r.declaration for r in got.reviews] == ["Book.s", "Book.t"]
    assert got.reviews[1].note == note  # a note holding TOML stays a string
    assert got.reviews[1].verdict is Verdict.REJECT and got.reviews[1].at == AT
    assert [e.line for e in got.entries] == [2, 8]
    assert tomllib.loads(text)["review"][1]["reviewer"] == "Ann <ann@example.org>"


def test_an_entry_that_is_not_a_verdict_is_named_and_the_others_hold() -> None:
    text = ("[[review]]\ndeclaration = \"A\"\nverdict = \"maybe\"\ndigest = \"x\"\n\n"
            "[[review]]\ndeclaration = \"B\"\nverdict = \"approve\"\ndigest = \"y\"\nextra = 1\n\n"
            "[[review]]\ndeclaration = \"C\"\nverdict = \"approve\"\ndigest = \"z\"\n")
    got = parse(text)
    assert [r.declaration for r in got.reviews] == ["C"]
    assert len(got.problems) == 2
    assert "line 1" in got.problems[0] and "verdict" in got.problems[0]
    assert "line 6" in got.problems[1] and "extra" in got.problems[1]


def test_a_file_toml_cannot_read_holds_no_verdict() -> None:
    got = parse("[[review]\n", "reviews.toml")
    assert got.reviews == [] and "cannot be read" in got.problems[0]


def test_the_last_decision_holds_while_the_statement_means_what_was_reviewed() -> None:
    reviews = [review("approve"), review("comment", note="why ℝ?"), review("reject", note="wrong"),
               review("approve", digest="old"), review("comment", name="Book.gone")]
    held = standing(reviews, {"Book.t": ["d1"]})
    t = held["Book.t"]
    assert t.rejected and t.decision is not None and t.decision.note == "wrong"
    assert [c.note for c in t.comments] == ["why ℝ?"]
    assert [s.digest for s in t.stale] == ["old"]
    assert rejected(held) == {"Book.t": reviews[2]} and approved(held) == {}
    gone = held["Book.gone"]  # a declaration no longer in the project: nothing of it holds
    assert gone.decision is None and gone.comments == [] and len(gone.stale) == 1


def test_a_verdict_on_another_meaning_is_stale_not_applied() -> None:
    held = standing([review("approve", digest="d1")], {"Book.t": ["d2"]})
    assert approved(held) == {} and not held["Book.t"].approved and len(held["Book.t"].stale) == 1
    assert approved(standing([review("approve", digest="d2")], {"Book.t": ["d2"]})) == {"Book.t": "d2"}


def test_the_issue_a_rejection_opens_has_a_plain_name_one_per_id() -> None:
    assert issue_slug("thm-1.1") == "review-thm-1.1"
    assert re.fullmatch(r"review-thm-1\.1-[0-9a-f]{8}", issue_slug("thm:1.1"))
    assert re.fullmatch(r"review-book\.ch2\.nice_thing-[0-9a-f]{8}", issue_slug("", "Book.Ch2.Nice_thing"))
    assert re.fullmatch(r"review-def-2\.3-ber-[0-9a-f]{8}", issue_slug("Def 2.3 (über)"))
    assert len(issue_slug("x" * 200)) == 81 and issue_slug("x" * 200) != issue_slug("x" * 201)
    assert issue_slug("", "Book.T") != issue_slug("", "Book.t")
    # An id that reads like another's name with its digest gets one of its own.
    assert issue_slug("Thm") != issue_slug(issue_slug("Thm").removeprefix("review-"))
    # The name before: where a rejection opened then left its issue.
    assert legacy_slug("thm:1.1") == "review-thm-1.1" and legacy_slug("x" * 200) == "review-" + "x" * 74


def test_a_rejection_stands_through_restatements_until_a_person_approves() -> None:
    rejection = review("reject", digest="d1", note="wrong")
    held = standing([review("approve", digest="d0"), rejection], {"Book.t": ["d2"]})  # restated since
    assert rejected(held) == {} and unanswered(held) == {"Book.t": rejection}  # stale, yet not answered
    comment = review("comment", digest="d2", note="better?")
    assert unanswered(standing([rejection, comment], {"Book.t": ["d2"]})) == {"Book.t": rejection}
    assert unanswered(standing([rejection, review("approve", digest="d2")], {"Book.t": ["d2"]})) == {}


def test_a_rejection_of_a_declaration_gone_follows_its_entity_until_a_person_approves_what_replaced_it() -> None:
    rejection = review("reject", digest="d1", name="Book.t")
    held = standing([rejection], {"Book.u": ["d9"]})  # `Book.t` renamed to `Book.u`
    assert orphaned(held, {"Book.u"}) == {"thm:1.1"}
    assert orphaned(standing([rejection], {"Book.t": ["d1"]}), {"Book.t"}) == set()  # still there: its own
    approval = review("approve", digest="d9", name="Book.u")
    assert orphaned(standing([rejection, approval], {"Book.u": ["d9"]}), {"Book.u"}) == set()
