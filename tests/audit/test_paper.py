"""`[audit] rubric = "paper"`: the judges asked exactly as the paper's Appendix A prints it (tests/data/paper)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agents.backends.anthropic import AnthropicModel
from agents.model import Message, Reply, System, ToolSpec
from audit.entities import Entity
from audit.extract import from_mapping
from audit.judge import DEFAULT, Rubric, Score, judge_direct, judge_round_trip, paper_message
from audit.loop import judge_changes
from audit.run import Models, Options, audit
from gates.census import census
from gates.tree import DirTree, MemTree
from orchestrator.config import CONFIG_FILE, load_config
from state.errors import UsageError
from tests.audit.test_run import Answers
from tests.standin.anthropic_server import AnthropicStandin

PAPER = Path(__file__).parent.parent / "data" / "paper"
OPENMATH = Path(__file__).parent.parent / "data" / "audit" / "openmath"
BUTCHER = 'J. C. Butcher’s\n"Numerical Methods for Ordinary Differential Equations"'
BOOK = 'Süli and Mayers\' "An Introduction to Numerical Analysis"'
PAPER_RUBRIC = Rubric("paper", BOOK)
KEY = "sk-test-paper-Qm4v8-never-print-me"


def paper(name: str) -> str:
    return (PAPER / f"{name}.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("role", ["direct_judge", "round_trip_judge", "back_translator"])
def test_the_paper_prompts_are_the_papers_text_with_only_the_book_filled_in(role: str) -> None:
    text = paper(role)
    if role == "direct_judge":
        assert text.count(BUTCHER) == 1
        text = text.replace(BUTCHER, BOOK)
    assert PAPER_RUBRIC.system(role).splitlines() == text.splitlines()  # type: ignore[arg-type]


def test_the_default_prompts_are_not_the_papers() -> None:
    assert DEFAULT.system("direct_judge").splitlines()[0] != paper("direct_judge").splitlines()[0]


def template() -> tuple[list[str], list[str]]:
    """Appendix A.4's template: the lines always sent, and the optional sections appended when present."""
    lines = paper("user_message").splitlines()
    cut = lines.index("When present and non-empty, three optional sections are appended:")
    return lines[:cut - 1], lines[cut + 2:]


def filled(lines: list[str], values: dict[str, str]) -> list[str]:
    out = "\n".join(lines)
    for placeholder, value in values.items():
        assert placeholder in out
        out = out.replace(placeholder, value)
    return out.split("\n")


def openmath(entity_id: str) -> Entity:
    found, problems = from_mapping(OPENMATH / "extraction/formalization_data/lean_status.json", OPENMATH)
    assert problems == []
    return next(e for e in found if e.id == entity_id)


def test_the_paper_message_is_appendix_a4_filled_from_a_real_entity() -> None:
    entity = openmath("thm:110C")  # OpenMath's record: a preamble, variables and a context
    raw = json.loads((OPENMATH / "extraction/formalization_data/entities/thm_110C.json").read_text())
    assert entity.preamble == raw["preamble"] and entity.variables == raw["variables"]
    lean = "theorem ode_existence_uniqueness (f : ℝ → E → E) : True"
    base, optional = template()
    values = {"{kind}": "theorem", "{name}": entity.name,
              "{statement_latex_or_text, with outer environment stripped}": entity.nl, "{lean_statement}": lean,
              "{preamble}": raw["preamble"], "{variables_json}": json.dumps(raw["variables"], ensure_ascii=False),
              '{context_latex, truncated at 2000 chars with " [...truncated]" suffix}': entity.context}
    assert len(entity.context) < 2000
    expected = filled([*base, "", *optional], values)
    assert paper_message(entity, "LEAN 4 STATEMENT", lean).split("\n") == expected


def test_the_paper_keeps_the_contexts_first_characters_and_drops_empty_sections() -> None:
    entity = Entity(id="t", kind="lemma", name="Lemma 1", nl="$x = x$", context="A" * 1500 + "B" * 1500)
    base, optional = template()
    expected = filled([*base, "", *optional[4:]], {
        "{kind}": "lemma", "{name}": "Lemma 1", "{statement_latex_or_text, with outer environment stripped}": "$x = x$",
        "{lean_statement}": "theorem t : x = x",
        '{context_latex, truncated at 2000 chars with " [...truncated]" suffix}': "A" * 1500 + "B" * 500
        + " [...truncated]"})
    assert paper_message(entity, "LEAN 4 STATEMENT", "theorem t : x = x").split("\n") == expected
    bare = Entity(id="t", kind="lemma", name="Lemma 1", nl="$x = x$")
    assert paper_message(bare, "LEAN 4 STATEMENT", "l").split("\n") == filled(base, {
        "{kind}": "lemma", "{name}": "Lemma 1", "{statement_latex_or_text, with outer environment stripped}": "$x = x$",
        "{lean_statement}": "l"})


@pytest.fixture
def claude() -> Iterator[AnthropicStandin]:
    with AnthropicStandin(api_key=KEY) as server:
        yield server
        assert not server.ran_out


def model(server: AnthropicStandin) -> AnthropicModel:
    return AnthropicModel("judge-a", 5.0, api_key=KEY, base_url=server.base_url, backoff_base_s=0.0,
                          backoff_max_s=0.0)


def sent(body: dict[str, object]) -> tuple[str, str]:
    """The system prompt and the user message of a request, as the server received them."""
    system = body["system"]
    text = system if isinstance(system, str) else "".join(b["text"] for b in system)  # type: ignore[attr-defined]
    content = body["messages"][-1]["content"]  # type: ignore[index]
    return text, content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def test_the_paper_direct_judge_over_the_wire_keeps_the_models_score_beside_the_tables(
        claude: AnthropicStandin) -> None:
    entity = openmath("thm:110C")
    claude.enqueue_text(json.dumps({"lean_implies_nl": False, "nl_implies_lean": True, "score": 3, "reason": "x"}))
    verdict = judge_direct(model(claude), entity, "theorem t : True", rubric=PAPER_RUBRIC)
    assert verdict.score is Score.DIFFERENT and verdict.claimed == 3 and verdict.corrected
    system, message = sent(claude.last_body)
    assert system.splitlines() == paper("direct_judge").replace(BUTCHER, BOOK).splitlines()
    assert message == paper_message(entity, "LEAN 4 STATEMENT", "theorem t : True")


def test_the_paper_round_trip_sends_the_translator_kind_name_and_lean_only(claude: AnthropicStandin) -> None:
    entity = openmath("thm:110C")
    claude.enqueue_text("Every Lipschitz IVP has a unique solution.")
    claude.enqueue_text(json.dumps({"back_implies_nl": True, "nl_implies_back": True, "score": 3, "reason": "ok"}))
    verdict = judge_round_trip(model(claude), model(claude), entity, "theorem t : True", rubric=PAPER_RUBRIC)
    assert verdict.score is Score.FAITHFUL and verdict.claimed == 3
    (translator_system, translated), (judge_system, judged) = (sent(r.body) for r in claude.requests)
    assert translator_system.splitlines() == paper("back_translator").splitlines()
    assert translated.split("\n") == ["KIND: theorem", f"NAME: {entity.name}", "", "LEAN 4 STATEMENT:",
                                      "theorem t : True"]
    assert judge_system.splitlines() == paper("round_trip_judge").splitlines()
    assert judged == paper_message(entity, "BACK-TRANSLATION", "Every Lipschitz IVP has a unique solution.")


@dataclass
class Recorded(Answers):
    """A scripted model that keeps each request's system prompt and last message."""

    seen: list[tuple[str, str]] = field(default_factory=list)

    def send(self, system: System, messages: list[Message], tools: list[ToolSpec] | None = None, *,
             max_tokens: int = 8192) -> Reply:
        self.seen.append((system.stable, messages[-1].text))
        return super().send(system, messages, tools, max_tokens=max_tokens)


DEFS = """namespace Book

/-- Definition 1.1 A number is small when it is below ten. -/
def Small (n : Nat) : Prop :=
  n < 10

end Book
"""


@pytest.mark.parametrize(("rubric", "body_seen"), [(PAPER_RUBRIC, False), (DEFAULT, True)])
def test_the_paper_judges_read_a_definitions_header_the_default_its_body(tmp_path: Path, rubric: Rubric,
                                                                       body_seen: bool) -> None:
    (tmp_path / "Book").mkdir()
    (tmp_path / "Book" / "A.lean").write_text(DEFS, encoding="utf-8")
    judge = Recorded([json.dumps({"lean_implies_nl": True, "nl_implies_lean": False, "score": 3, "reason": "r"})])
    doc = audit(tmp_path, census(DirTree(tmp_path)), Models(judge=judge), Options(rubric=rubric), datetime.now(UTC))
    [(_, message)] = judge.seen
    assert ("n < 10" in message) is body_seen and "def Small (n : Nat) : Prop" in message
    row = doc["entities"][0]["direct"]
    assert (row["score"], row["model_score"], row["corrected"]) == (Score.STRONGER, 3, True)
    assert doc["faithfulness"]["rubric"] == rubric.name


def test_the_paper_rubric_needs_the_books_name(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text('[audit]\nrubric = "paper"\n')
    with pytest.raises(UsageError, match="book_name"):
        load_config(tmp_path)
    (tmp_path / CONFIG_FILE).write_text(f'[audit]\nrubric = "paper"\nbook_name = {json.dumps(BOOK)}\n')
    assert load_config(tmp_path).audit.book_name == BOOK


def test_the_in_loop_judge_keeps_the_fenced_default_whatever_the_audit_asks() -> None:
    # The loop's verdict is a gate over a Worker's Lean: only the default rubric's fences keep a string literal in
    # it from passing for the book's context, so the paper's unfenced template is for the audit only.
    judge = Recorded([json.dumps({"lean_implies_nl": True, "nl_implies_lean": True, "score": 3, "reason": "r"})])
    tree = MemTree({"Book/A.lean": DEFS.encode()})
    entity = Entity(id="def:1.1", kind="definition", name="Definition 1.1", nl="small", lean=["Book.Small"])
    judge_changes(judge, [entity], {"Book.Small"}, census(tree, ["Book"]), context_chars=2000)
    assert [system for system, _ in judge.seen] == [DEFAULT.system("direct_judge")]
