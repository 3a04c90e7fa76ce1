"""What concerns a target: identifiers, never common words; the plan read by section; advice that still holds."""

from __future__ import annotations

from agents import briefs, relevance
from gates.census import Census
from gates.index import index_source
from state.history import HistoryRecord, Outcome

CENSUS = Census({
    "Book/Group.lean": index_source("Book/Group.lean", "namespace Book\ntheorem QuotEquiv.product_one_left : True := "
                                    "by sorry\ntheorem helper_lemma : True := trivial\nend Book\n"),
    "Book/Old.lean": index_source("Book/Old.lean", "namespace Book\ntheorem bdf4_lyapunov : True := trivial\n"
                                  "end Book\n"),
})


def test_identifiers_are_shaped_like_names_and_stand_for_their_tails() -> None:
    found = relevance.identifiers("Prove `QuotEquiv.product_one_left` with the lemma in Book/Group.lean, order 3.")
    assert {"QuotEquiv.product_one_left", "product_one_left", "Book/Group.lean", "Group.lean"} <= found
    assert not found & {"with", "lemma", "order", "Prove", "the"}


def test_an_identifier_most_texts_hold_tells_none_apart() -> None:
    texts = [f"OpenMath note {i}: about lemma_{i}" for i in range(6)]
    near = relevance.touching({"OpenMath", "lemma_3"}, texts)
    assert near == [False, False, False, True, False, False]


def test_issues_about_the_target_or_by_a_person_are_never_cut() -> None:
    """Ten issues newer than the two about the target, and one by a person: the cap drops only unrelated ones."""
    unrelated = [briefs.IssueText(f"other-{i}", f"with the order of {i} things", "the Worker of cycle 9")
                 for i in range(10)]
    about = [briefs.IssueText("shift", "`product_one_left` is false: 0 + t shifts nodes", "the Worker of cycle 3"),
             briefs.IssueText("butcher_section384_convolution", "needs a convolution", "the Worker of cycle 2")]
    person = briefs.IssueText("mine", "look at chapter 5", "a person", cycle=4)
    subject = relevance.identifiers("Prove QuotEquiv.product_one_left; see issues/butcher_section384_convolution.md")
    sure, rest, note = briefs.ranked_issues([*unrelated, *about, person], subject, others=3)
    assert [i.slug for i in sure] == ["shift", "butcher_section384_convolution", "mine"]
    assert [i.slug for i in rest] == ["other-0", "other-1", "other-2"] and note == (
        "7 more open issues not shown (none about this work)")
    section = briefs.issues_section("Open issues", [*unrelated, *about], subject, 100, others=0)
    assert section.budget > 100 and len(section.quotes) == 2  # grown to hold both, whatever its budget
    listed = briefs.issues_section("Open issues", [*unrelated, *about], subject, 100, others=2).quotes[-1]
    assert listed.text == ("- other-0 (the Worker of cycle 9): with the order of 0 things\n"
                           "- other-1 (the Worker of cycle 9): with the order of 1 things")


def test_the_current_target_comes_whole_and_first_and_the_rest_by_section() -> None:
    target = "## Current Target\n" + "Define `ButcherProduct` and prove its laws.\n" * 120 + "### Do NOT\n- no LMM\n"
    plan = ("# Plan\n## Chapter 1\n" + "status line\n" * 2000 + "## Backlog Queue\n" + "- `ButcherProduct` next\n" * 30
            + target + "## Blockers / Deferred\n- `bdf4_lyapunov`: spectral gap\n")
    context = briefs.planner(plan=plan, plan_name="plan.md", census=CENSUS, history=[], attempts=None,
                             last_result=None, issues=[], pivot=None, build="builds")
    text = context.render()
    first = text.split("\n## ", 2)
    assert first[1].startswith("Current Target") and "### Do NOT\n- no LMM" in first[1]
    assert text.count("Define `ButcherProduct`") == 120  # whole, and once
    rest = briefs.section(text, "plan.md, its other sections (headings demoted)")
    assert "##### Backlog Queue" in rest and rest.count("- `ButcherProduct` next") == 30  # work to come, whole
    assert "- `bdf4_lyapunov`: spectral gap" in rest
    assert "more characters]" in rest and rest.count("status line") < 2000
    assert any("1 of its sections cut to fit, each keeping its head" in d for d in context.dropped)


def test_advice_is_dated_newest_first_and_none_about_a_closed_proof() -> None:
    issues = [briefs.IssueText("consultant_advice_cycle_030", "## Plan\nClose `bdf4_lyapunov` by a certificate.",
                               "the Consultant"),
              briefs.IssueText("consultant_advice_cycle_070", "## Plan\nSplit `product_one_left` in two.",
                               "the Consultant"),
              briefs.IssueText("consultant_advice_cycle_072", "## Plan\nTry a smaller seam first.", "the Consultant")]
    history = [HistoryRecord(cycle=c, outcome=Outcome.NO_CHANGE) for c in (80, 90)]
    section = briefs.advice_section(issues, CENSUS, history, 5_000)
    assert section is not None
    assert [q.author for q in section.quotes] == ["the Consultant of cycle 72", "the Consultant of cycle 70"]
    assert section.quotes[0].text == "##### Plan\nTry a smaller seam first."  # its headings demoted, in a fence
    assert "1 older or settled piece of advice not shown" in section.note  # cycle 30's: bdf4_lyapunov is proved
    later = [*history, HistoryRecord(cycle=71, outcome=Outcome.ACCEPTED, restated=["Book.QuotEquiv.product_one_left"])]
    shown = briefs.advice_section(issues, CENSUS, later, 5_000)
    assert shown is not None and [q.author for q in shown.quotes] == ["the Consultant of cycle 72"]
    aged = [HistoryRecord(cycle=72 + briefs.ADVICE_AGE + 1, outcome=Outcome.NO_CHANGE)]
    kept = briefs.advice_section(issues, CENSUS, aged, 5_000)  # cycle 72's names nothing: too old to tell now
    assert kept is not None and [q.author for q in kept.quotes] == ["the Consultant of cycle 70"]
    rendered = briefs.planner(plan="# Plan\n## Current Target\nx\n", plan_name="plan.md", census=CENSUS,
                              history=history, attempts=None, last_result=None, issues=issues, pivot=None,
                              build="builds").render()
    assert "consultant_advice_cycle_072" not in briefs.section(rendered, "Open issues")  # shown once, as advice


def test_the_worker_sees_advice_and_issues_about_its_own_files_only() -> None:
    issues = [briefs.IssueText("consultant_advice_cycle_070", "Split `product_one_left` in two.", "the Consultant"),
              briefs.IssueText("consultant_advice_cycle_071", "Work on chapter 9's `Other.thing`.", "the Consultant")]
    text = briefs.worker(strategy="## Scope\n- Book/Group.lean\n", census=CENSUS, scope_files=["Book/Group.lean"],
                         issues=issues, history=[]).render()
    assert "Split `product_one_left` in two." in text and "Other.thing" not in text


def test_history_marks_the_cycles_on_the_current_target() -> None:
    records = [HistoryRecord(cycle=1, outcome=Outcome.ACCEPTED, targets=["Book.QuotEquiv.product_one_left"]),
               HistoryRecord(cycle=2, outcome=Outcome.ACCEPTED, targets=["Book.bdf4_lyapunov"])]
    subject = relevance.identifiers("Prove `QuotEquiv.product_one_left`.")
    assert [" [on the Current Target]" in briefs.history_line(r, subject) for r in records] == [True, False]


def test_a_flood_of_issues_about_the_work_is_capped_and_matched_only_where_shown() -> None:
    """A Worker's issues are about the work by what the shown part of each says: a name hidden past it does not
    count, and at most `ABOUT_SHOWN` of them are shown whole (the rest listed first). A person's review always is."""
    subject = relevance.identifiers("Prove `QuotEquiv.product_one_left`.")
    hidden = [briefs.IssueText(f"hidden-{i}", "harmless\n" + "x" * 2000 + " product_one_left", "the Worker of cycle 9")
              for i in range(3)]
    said = [briefs.IssueText(f"said-{i}", "product_one_left needs a shift", "the Worker of cycle 9") for i in range(5)]
    others = [briefs.IssueText(f"other-{i}", "unrelated", "the Worker of cycle 9") for i in range(2)]
    review = briefs.IssueText("review-thm-1", "the statement is wrong", "a person (Ada <a@x>)", cycle=0)
    sure, rest, _ = briefs.ranked_issues([*said, *hidden, *others, review], subject, others=0)
    assert [i.slug for i in sure] == [*(f"said-{i}" for i in range(briefs.ABOUT_SHOWN)), "review-thm-1"]
    assert [i.slug for i in rest] == ["said-4"]  # every issue about the work is at least listed, whatever the cap


def test_advice_stays_when_a_helper_it_names_is_closed_while_its_subject_is_open() -> None:
    advice = [briefs.IssueText("consultant_advice_cycle_070", "Prove `helper_lemma` first, then `product_one_left`.",
                               "the Consultant")]
    closed = [HistoryRecord(cycle=71, outcome=Outcome.ACCEPTED, closed=["Book.helper_lemma"])]
    section = briefs.advice_section(advice, CENSUS, closed, 5_000)
    assert section is not None and [q.author for q in section.quotes] == ["the Consultant of cycle 70"]
