"""The audit's assembly: robust to a judge that fails oddly, honest about samples, context as the book has it."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from agents.model import Message, Reply, System, ToolSpec
from audit.extract import from_blueprint
from audit.run import DEFINITIONS_CHARS, Models, Options, audit, declarations, definitions_read, markdown
from gates.census import census
from gates.meaning import reached
from gates.tree import DirTree, MemTree

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


# Two books in ReasBook's layout (`ReasBook/Books/<book>/Chapters/…`): Rockafellar's Theorem 20.0.1 has no sorry
# of its own but uses a sorried helper; Tao's Theorem 1.1 rests on an axiom of the project; Theorem 1.2 is proved.
# Both books have a Theorem 1.1: two entities, one per book.
ROCKAFELLAR = """namespace Rockafellar

/-- Theorem 1.1 Zero first. -/
theorem thm11 (n : Nat) : 0 + n = n := Nat.zero_add n

theorem helper (n : Nat) : n + 0 = n := by
  sorry

/-- Theorem 20.0.1 The sum with zero. -/
theorem thm20 (n : Nat) : n + 0 = n := helper n

end Rockafellar
"""
TAO = """namespace Tao

axiom choice_like : ∀ n : Nat, n = n

/-- Theorem 1.1 Every number is itself. -/
theorem thm11 (n : Nat) : n = n := choice_like n

/-- Theorem 1.2 Zero is zero. -/
theorem thm12 : (0 : Nat) = 0 := rfl

end Tao
"""


def test_proved_means_nothing_sorried_and_no_axiom_in_what_a_result_uses(tmp_path: Path) -> None:
    books = tmp_path / "ReasBook" / "Books"
    (books / "Rockafellar" / "Chapters").mkdir(parents=True)
    (books / "Tao" / "Chapters").mkdir(parents=True)
    (books / "Rockafellar" / "Chapters" / "Chap20.lean").write_text(ROCKAFELLAR, encoding="utf-8")
    (books / "Tao" / "Chapters" / "Chap01.lean").write_text(TAO, encoding="utf-8")
    doc = audit(tmp_path, census(DirTree(tmp_path)), Models(), Options(), datetime.now(UTC))
    rows = {tuple(r["lean"]): r for r in doc["entities"]}
    assert sorted(r["id"] for r in doc["entities"]) == ["Rockafellar/thm:1.1", "Rockafellar/thm:20.0.1",
                                                       "Tao/thm:1.1", "Tao/thm:1.2"]
    assert rows[("Tao.thm11",)]["book"] == "Tao" and rows[("Rockafellar.thm11",)]["lean"] == ["Rockafellar.thm11"]
    assert rows[("Rockafellar.thm20",)]["formalized"] and not rows[("Rockafellar.thm20",)]["proved"]
    assert rows[("Rockafellar.thm20",)]["rests_on"] == ["Rockafellar.helper"]
    assert rows[("Tao.thm11",)]["rests_on"] == ["Tao.choice_like"] and not rows[("Tao.thm11",)]["proved"]
    assert rows[("Tao.thm12",)]["proved"] and rows[("Tao.thm12",)]["rests_on"] == []
    assert "4 textbook entities: 4 formalized, 2 proved" in doc["summary"]
    report = markdown(doc)
    assert "## Formalized, not proved" in report
    assert ("| Rockafellar/thm:20.0.1 | Rockafellar.thm20 | Rockafellar.helper |\n"
            "| Tao/thm:1.1 | Tao.thm11 | Tao.choice_like |") in report
    assert "## By book\n\n| book | entities | formalized | proved |\n| --- | ---: | ---: | ---: |\n" \
           "| Rockafellar | 2 | 2 | 1 |\n| Tao | 2 | 2 | 1 |" in report


def test_a_judge_reads_the_definitions_a_statement_reaches_smallest_first_within_its_room() -> None:
    big = " ∧ ".join(["True"] * 4000)
    source = ("namespace Book\n\ndef Small : Prop := True\n\ndef Big : Prop := " + big + "\n\n"
              "def Mid (n : Nat) : Prop := Small ∧ n = n\n\ntheorem t (n : Nat) : Mid n ∧ Big := by\n  sorry\n\n"
              "def Unused : Prop := False\n\nend Book\n")
    found = census(MemTree({"Book/A.lean": source.encode()}), ["Book"])
    decls = declarations(found)
    text = definitions_read(decls, reached(found, ["Book.t"]), ["Book.t"])
    assert text.startswith("\n\n-- The project's definitions the statements above reach")
    clipped = text.index("def Big : Prop\n  -- … its whole text")
    small, mid = text.index("def Small"), text.index("def Mid")
    assert small < mid < clipped and "Unused" not in text  # what it reaches, smallest first
    whole = decls["Book.Big"].written(body=True)
    assert len(whole) > DEFINITIONS_CHARS and whole not in text
    assert f"its whole text, {len(whole):,} characters (sha256 {hashlib.sha256(whole.encode()).hexdigest()[:12]}…)" \
        in text
    assert definitions_read(decls, reached(found, ["Book.Small"]), ["Book.Small"]) == ""  # it reaches nothing


def test_padding_a_definition_with_spaces_does_not_push_its_body_out_of_what_the_judge_reads() -> None:
    padded = ("namespace Book\ndef Good (n : Nat) : Prop :=" + " " * 12_100 + "True\n\n\n\n\n"
              "theorem t (n : Nat) : Good n := sorry\nend Book\n")
    found = census(MemTree({"Book/A.lean": padded.encode()}), ["Book"])
    text = definitions_read(declarations(found), reached(found, ["Book.t"]), ["Book.t"])
    assert "def Good (n : Nat) : Prop := True" in text and "its whole text" not in text
