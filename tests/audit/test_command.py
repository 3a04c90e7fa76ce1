"""`autoformalize audit` end to end: a small project whose every answer is known, judged through both wire
formats by the default roles (Anthropic judge and back-translator, an OpenAI-compatible round-trip judge)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.cli import main
from tests.audit.servers import scripted
from tests.conftest import git
from tests.standin import anthropic_server as claude_wire
from tests.standin import openai_server as openai_wire
from tests.standin.anthropic_server import AnthropicStandin
from tests.standin.openai_server import OpenAIStandin

KEY = "sk-test-audit-cmd-Qx81-never-print-me"
BOOK = """\
import Mathlib

namespace Book

/-- Theorem 1.1 For every natural number $n$, $n + 0 = n$. -/
theorem add_zero' (n : ℕ) : n + 0 = n := by simp

/-- Lemma 1.2 Every natural number is at most its square. -/
lemma le_sq (n : ℕ) (h : 5 < n) : n ≤ n ^ 2 := by
  sorry -- the hypothesis `h` is not in the book

/-- Definition 1.3 A number is even when it is twice a number. -/
def IsEven' (n : ℕ) : Prop := ∃ k, n = 2 * k

/-- Theorem 1.4 Every even number squared is even (by Definition 1.3). -/
theorem even_sq (n : ℕ) (h : IsEven' n) : IsEven' (n ^ 2) := by
  obtain ⟨k, rfl⟩ := h
  exact ⟨2 * k ^ 2, by ring⟩

end Book
"""
# What each judge answers, by entity: (Q1, Q2, score) for the direct judge and for the round trip.
DIRECT = {"Theorem 1.1": (True, True, 3), "Lemma 1.2": (False, True, 1), "Theorem 1.4": (True, False, 2)}
ROUND_TRIP = {"Theorem 1.1": (True, True, 3), "Lemma 1.2": (False, True, 1), "Definition 1.3": (True, True, 3),
              "Theorem 1.4": (True, True, 3)}


def entity_of(request: Any) -> str:
    found = re.search(r"NAME: ([^\n]+)", json.dumps(request.body, ensure_ascii=False).replace("\\n", "\n"))
    assert found, "every audit request names its entity"
    return found.group(1)


def claude_answers(request: Any) -> claude_wire.Reply:
    system = request.body["system"][0]["text"]
    name = entity_of(request)
    if system.startswith("You are a mathematician"):
        return claude_wire.text_reply(f"The statement of {name}, in words.")
    if name == "Definition 1.3":  # a request the provider refuses: not retried, named as unjudged
        return claude_wire.error_reply(400, "invalid_request_error", "prompt is malformed")
    q1, q2, score = DIRECT[name]
    return claude_wire.text_reply(json.dumps({"lean_implies_nl": q1, "nl_implies_lean": q2, "score": score,
                                              "reason": f"{name}: as scripted"}))


def gpt_answers(request: Any) -> openai_wire.Reply:
    name = entity_of(request)
    if name == "Lemma 1.2":  # two unreadable answers: unjudged, with the reason
        return openai_wire.text_reply("It seems different to me.")
    q1, q2, score = ROUND_TRIP[name]
    return openai_wire.text_reply(json.dumps({"back_implies_nl": q1, "nl_implies_back": q2, "score": score,
                                              "reason": "as scripted"}))


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[AnthropicStandin, OpenAIStandin]]:
    with scripted(monkeypatch, tmp_path, KEY, claude_answers, gpt_answers) as both:
        yield both


@pytest.fixture
def book(tmp_path: Path) -> Path:
    root = tmp_path / "book"
    (root / "Book").mkdir(parents=True)
    (root / "Book" / "Ch1.lean").write_text(BOOK, encoding="utf-8")
    return root


def run_audit(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["audit", *args, "--json"]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_every_part_of_the_audit_on_a_directory_that_is_no_repository(
        book: Path, servers: tuple[AnthropicStandin, OpenAIStandin], capsys: pytest.CaptureFixture[str]) -> None:
    claude, gpt = servers
    doc = run_audit(capsys, str(book))

    assert doc["proof_gap"]["census"]["sorries"] == 1
    assert doc["proof_gap"]["grep"]["sorry_lines"] == 1  # the same line: `sorry -- …` is code
    assert doc["statistics"]["declarations"]["theorem"] == 2 and doc["statistics"]["theorem+lemma"] == 3
    rows = {r["id"]: r for r in doc["entities"]}
    assert set(rows) == {"thm:1.1", "lem:1.2", "def:1.3", "thm:1.4"}
    assert rows["lem:1.2"]["formalized"] and not rows["lem:1.2"]["proved"] and rows["thm:1.1"]["proved"]

    f = doc["faithfulness"]
    assert f["direct"] == {"faithful": 1, "stronger": 1, "different": 1, "unjudged": 1}
    assert f["round_trip"] == {"faithful": 3, "stronger": 0, "different": 0, "unjudged": 1}
    unjudged = {(u["id"], u["protocol"]): u["reason"] for u in f["unjudged"]}
    assert unjudged.keys() == {("def:1.3", "direct"), ("lem:1.2", "round_trip")}
    assert unjudged[("def:1.3", "direct")].startswith("ModelRejected")
    assert unjudged[("lem:1.2", "round_trip")].startswith("unreadable answer")
    # Both judged 1.1 and 1.4; 1.4 is stronger in one and faithful in the other: agreeing when grouped.
    assert f["agreement"] == {"compared": 2, "grouped": 2, "exact": 1, "grouped_rate": 1.0, "exact_rate": 0.5}
    assert rows["thm:1.4"]["faithful"] == "stronger" and rows["def:1.3"]["faithful"] is None

    # The judges saw the book's statement and the Lean; the translator only the Lean.
    judged = [r for r in claude.requests if "Witnesses." in r.body["system"][0]["text"]]
    assert any("theorem add_zero' (n : ℕ) : n + 0 = n" in json.dumps(r.body, ensure_ascii=False) for r in judged)
    translated = [r for r in claude.requests if r.body["system"][0]["text"].startswith("You are a mathematician")]
    assert translated and all("NATURAL LANGUAGE" not in json.dumps(r.body) for r in translated)
    assert all("by simp" not in json.dumps(r.body, ensure_ascii=False) for r in translated)  # no proofs
    assert any("∃ k, n = 2 * k" in json.dumps(r.body, ensure_ascii=False) for r in translated)  # a def's body
    assert doc["spend"]["served_by"]["round_trip_judge"] == ["openai:gpt-5-mini"]
    assert len(gpt.requests) == 5  # four entities, one asked twice
    assert KEY not in json.dumps(doc)

    # Reuse: 1.4 cites Definition 1.3, and its Lean names IsEven'.
    assert doc["reuse"]["rates"]["all"] == {"reflected": 1, "total": 1, "rate": 1.0}


def test_without_credentials_the_model_parts_are_skipped_and_the_rest_runs(
        book: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "OPENAI_")):
            monkeypatch.delenv(name)
    assert main(["audit", str(book)]) == 0
    report = capsys.readouterr().out
    assert "| direct (book vs Lean) | not run: not set: ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN (for the judge)" \
        in report
    assert "| sorry | 1 | 1 lines |" in report and "## Cross-file reuse" in report
    assert "| theorem + lemma | 3 |" in report


def test_a_sample_is_stratified_reproducible_and_listed_for_regrading(
        book: Path, servers: tuple[AnthropicStandin, OpenAIStandin], capsys: pytest.CaptureFixture[str]) -> None:
    first = run_audit(capsys, str(book), "--sample", "2", "--seed", "42", "--no-models")
    again = run_audit(capsys, str(book), "--sample", "2", "--seed", "42", "--no-models")
    assert first["sample"] == again["sample"] and first["sample"]["size"] == 2
    assert first["faithfulness"]["entities"] == 2
    assert first["skipped"] == {"direct": "--no-models", "round_trip": "--no-models"}
    assert servers[0].requests == []
    out = book / "out"
    assert main(["audit", str(book), "--sample", "2", "--seed", "42", "--no-models", "--out", str(out)]) == 0
    assert f"wrote {out / 'audit.json'}, {out / 'audit.md'}" in capsys.readouterr().err
    sheet = (out / "audit.md").read_text()
    drawn = [i for s in first["sample"]["strata"] for i in s["ids"]]
    assert "## Re-grading sheet" in sheet and all(f"| {i} |" in sheet for i in drawn)
    assert json.loads((out / "audit.json").read_text())["sample"] == first["sample"]


def test_the_edge_filter_drops_what_it_judges_not_real(
        book: Path, servers: tuple[AnthropicStandin, OpenAIStandin], capsys: pytest.CaptureFixture[str]) -> None:
    claude, _ = servers
    claude_edges = 0

    def not_real(request: Any) -> claude_wire.Reply:
        nonlocal claude_edges
        if "dependency graph" in request.body["system"][0]["text"]:
            claude_edges += 1
            return claude_wire.text_reply(json.dumps({"verdict": "not_real", "confidence": "high",
                                                      "reasoning": "a co-mention"}))
        return claude_answers(request)

    claude._script.clear()
    for _ in range(40):
        claude.enqueue(not_real)
    doc = run_audit(capsys, str(book), "--filter-edges")
    assert claude_edges == doc["reuse"]["candidates"] >= 1
    assert doc["reuse"]["kept"] == 0 and doc["reuse"]["rates"]["all"]["total"] == 0


def test_in_a_managed_repository_the_latest_audit_is_kept_for_the_report(
        make_repo: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "OPENAI_")):
            monkeypatch.delenv(name)
    repo = make_repo({"Book/Ch1.lean": BOOK, "autoformalize.toml": '[project]\nlean_roots = ["Book"]\n'})
    monkeypatch.chdir(repo / "Book")
    assert main(["audit", "--no-models"]) == 0
    captured = capsys.readouterr()
    latest = json.loads((repo / ".prover-state/audit/latest.json").read_text())
    assert latest["lean_roots"] == ["Book"]
    assert {"thm:1.1", "lem:1.2", "def:1.3", "thm:1.4"} <= {e["id"] for e in latest["entities"]}
    assert (repo / ".prover-state/audit/latest.md").is_file()
    assert "Commit .prover-state/audit/ to show it in `autoformalize report`." in captured.err
    assert git(repo, "status", "--porcelain", "-uall").count("audit/latest") == 2  # left for the user to commit
