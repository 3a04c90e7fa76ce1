"""The Evaluator's rubric, the caps it is told, and the diff it reads within its budget."""

from __future__ import annotations

import re
from pathlib import Path

from agents import briefs, diffs, evaluator
from agents.config import AgentsConfig, EvaluatorConfig
from agents.prices import DEFAULT_WINDOW, _table
from agents.window import CHARS_PER_TOKEN
from orchestrator import facts
from orchestrator.config import CONFIG_FILE, load_config


def file_diff(path: str, added: list[str], removed: tuple[str, ...] = ()) -> str:
    body = "".join(f"-{line}\n" for line in removed) + "".join(f"+{line}\n" for line in added)
    return (f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -1,{len(removed)} +1,{len(added)} @@\n{body}")


def test_the_rubric_rewards_decomposition_and_states_no_contradiction() -> None:
    text = evaluator.prompt(facts.caps())
    scores = re.findall(r"^-\s+(-?\d): ", text, re.MULTILINE)
    assert [int(k) for k in scores] == [2, 1, 0, -1, -2]
    assert "a sorry closed" in text and "decomposition, infrastructure, or a partial proof that lands" in text
    assert "reasonable stall" in text and "regression" in text
    assert "rejected by the gates. A rejected change never scores" not in text  # -2 and "never above 0" at once


def test_the_caps_in_the_prompt_are_the_ones_the_code_applies() -> None:
    text = evaluator.prompt(facts.caps())
    assert f"a score above {facts.CEILING} stands only when" in text
    assert all(rule in text for rule in (*facts.GAINS.values(), *facts.LOSSES.values()))
    # Every fact the code measures is a rule the prompt states, and no rule is stated the code does not measure.
    every = facts.Facts(True, 2, 3, closed=["a"], faithful=["x"], different=["y"], grew=["g"])
    assert set(every._gains()) == set(facts.GAINS) and set(every._losses()) == set(facts.LOSSES)
    assert facts.Facts(False, 1, 1).cap(2) == facts.CEILING


def test_the_default_diff_budget_is_the_reference_loops_and_fits_every_known_window() -> None:
    assert EvaluatorConfig(model="claude-sonnet-4-6").diff_chars == 200_000
    caps = facts.caps()
    assert evaluator.diff_budget(AgentsConfig().evaluator, caps) == 200_000
    for model, window in [*_table()["windows"].items(), ("a-local-model", DEFAULT_WINDOW)]:
        budget = evaluator.diff_budget(EvaluatorConfig(model=model), caps)
        prompt = len(evaluator.prompt(caps)) + briefs.evaluator_rest() + budget
        assert prompt <= (window - evaluator.MAX_TOKENS) * CHARS_PER_TOKEN // 2 or budget == evaluator.DIFF_FLOOR
    small = evaluator.diff_budget(EvaluatorConfig(model="a-local-model"), caps)
    assert evaluator.DIFF_FLOOR < small < 200_000
    assert evaluator.diff_budget(EvaluatorConfig(model="claude-sonnet-4-6", diff_chars=5_000), caps) == 5_000


def test_the_diff_budget_is_a_config_key_of_the_evaluator(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text('[agents.evaluator]\ndiff_chars = 50000\n')
    assert load_config(tmp_path).agents.evaluator.diff_chars == 50_000


def test_a_diff_within_its_budget_is_shown_whole() -> None:
    diff = file_diff("Book/A.lean", ["simp"], ["sorry"])
    assert diffs.view(diff, 10_000) == diff


def test_a_change_hidden_behind_a_large_diff_is_still_named() -> None:
    # Padding the first file pushed the rest of the change out of a diff cut at its budget: the weakened
    # statement in the second file went unseen. Every file is now listed with its counts before any diff.
    padding = file_diff("Book/A.lean", [f"-- note {i}" for i in range(20_000)])
    weakened = file_diff("Book/B.lean", ["theorem other (n : ℕ) (h : n = 0) : 0 + n = n := by simp"],
                         ("theorem other (n : ℕ) : 0 + n = n := by",))
    diff = padding + weakened
    text = briefs.evaluator(diff=diff, report="", gates="", outcome="accepted", history=[], attempts=None,
                            diff_chars=30_000).render()
    shown = briefs.section(text, "Diff")
    assert "Book/A.lean: +20000 -0" in shown and "Book/B.lean: +1 -1" in shown
    assert "over its budget of 30,000" in shown and "diff --git a/Book/A.lean" in shown
    assert "(h : n = 0)" not in shown and "[the diffs of 1 more files not shown]" in shown
    assert len(shown) < 30_000 + 1_000


def test_the_summary_takes_a_files_path_from_its_header_never_from_its_lines() -> None:
    header_free = ("diff --git a/Book/A.lean b/Book/A.lean\nindex 1..2 100644\n--- a/Book/A.lean\n+++ b/Book/A.lean\n"
                   "@@ -1 +1,2 @@\n-x\n+++ b/Book/Innocent.lean\n+y\n")
    [one] = diffs.split(header_free)
    assert (one.path, one.added, one.removed) == ("Book/A.lean", 2, 1)
    deleted = ("diff --git a/Old.lean b/Old.lean\ndeleted file mode 100644\n--- a/Old.lean\n+++ /dev/null\n"
               "@@ -1 +0,0 @@\n-x\n")
    assert diffs.split(deleted)[0].path == "Old.lean"


def test_a_file_list_longer_than_half_the_budget_is_cut_with_a_count() -> None:
    diff = "".join(file_diff(f"Book/F{i}.lean", ["x"]) for i in range(2_000))
    shown = diffs.view(diff, 20_000)
    assert "more files, not listed" in shown and len(shown) <= 20_000 + 200
