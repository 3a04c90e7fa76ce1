"""The audit's assembly: robust to a judge that fails oddly, honest about samples, context as the book has it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from agents.model import Message, Reply, System, ToolSpec
from audit.extract import from_blueprint
from audit.run import Models, Options, audit
from gates.census import census
from gates.tree import DirTree

FAITHFUL = json.dumps({"lean_implies_nl": True, "nl_implies_lean": True, "score": 3, "reason": "same"})
BOOK = "namespace Book\n" + "".join(f"/-- Theorem 1.{i} Statement {i}. -/\ntheorem t{i} : {i} = {i} := rfl\n\n"
                                    for i in range(1, 6)) + "end Book\n"


@dataclass
class Answers:
    """A model behind the one model interface that answers from a script (an exception is raised)."""

    script: list[str | Exception]
    name: str = "scripted"
    calls: int = field(default=0)

    def send(self, system: System, messages: list[Message], tools: list[ToolSpec] | None = None, *,
             max_tokens: int = 8192) -> Reply:
        self.calls += 1
        answer = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(answer, Exception):
            raise answer
        return Reply(answer)


def book(tmp_path: Path) -> Path:
    (tmp_path / "Book").mkdir()
    (tmp_path / "Book" / "A.lean").write_text(BOOK, encoding="utf-8")
    return tmp_path


def test_a_surprising_failure_costs_one_entity_not_the_audit(tmp_path: Path) -> None:
    root = book(tmp_path)
    model = Answers([FAITHFUL, FAITHFUL, RuntimeError("unexpected"), FAITHFUL, FAITHFUL])
    doc = audit(root, census(DirTree(root)), Models(judge=model), Options(concurrency=1), datetime.now(UTC))
    assert doc["faithfulness"]["direct"] == {"faithful": 4, "stronger": 0, "different": 0, "unjudged": 1}
    assert [u["reason"] for u in doc["faithfulness"]["unjudged"]] == ["RuntimeError: unexpected"]


def test_the_summary_says_when_the_verdicts_are_a_sample(tmp_path: Path) -> None:
    root = book(tmp_path)
    doc = audit(root, census(DirTree(root)), Models(judge=Answers([FAITHFUL])), Options(sample=2, seed=7),
                datetime.now(UTC))
    assert doc["faithfulness"]["direct"]["faithful"] == 2
    assert "judged: a stratified sample of 2 formalized entities (seed 7)" in doc["summary"]


def test_a_blueprints_prose_reaches_the_judge_up_to_the_configured_cut(tmp_path: Path) -> None:
    src = tmp_path / "blueprint" / "src"
    src.mkdir(parents=True)
    prose = " ".join(f"Sentence {i} of the prose." for i in range(200))
    (src / "content.tex").write_text(prose + "\n\\begin{theorem}\\label{thm:a}\\lean{t}\nP.\n\\end{theorem}\n")
    entities, _ = from_blueprint(tmp_path)
    assert len(entities[0].context) > 2000 and entities[0].context.endswith("Sentence 199 of the prose.")
