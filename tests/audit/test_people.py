"""How the judges agree with people: `reviews.toml` against the audit's judges, in the audit's JSON and Markdown and
on the dashboard. A small repository whose every answer is known: the judges answer through both wire formats (the
stand-in servers), people's verdicts are written by the review application's path (with reviewer and time), by hand
and committed (the git author is the reviewer), and by hand not committed yet."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from audit.run import markdown
from gates.census import census
from gates.meaning import closures
from gates.tree import DirTree
from orchestrator.cli import main
from orchestrator.git import Git
from orchestrator.report import build
from orchestrator.verdicts import current
from state.reviews import Review, Verdict, appended
from tests.audit.servers import scripted
from tests.conftest import git
from tests.standin import anthropic_server as claude_wire
from tests.standin import openai_server as openai_wire

KEY = "sk-test-people-Zp40-never-print-me"
PORT = 9123
EVIL = '<script>alert("note")</script> & <b>bold</b> | pipe'
BOOK = """\
import Mathlib

namespace Book

/-- Theorem 1.1 For every natural number $n$, $n + 0 = n$. -/
theorem add_zero' (n : ℕ) : n + 0 = n := by simp

/-- Lemma 1.2 Every natural number is at most its square. -/
lemma le_sq (n : ℕ) (h : 5 < n) : n ≤ n ^ 2 := by
  sorry

/-- Definition 1.3 A number is even when it is twice a number. -/
def IsEven' (n : ℕ) : Prop := ∃ k, n = 2 * k

/-- Theorem 1.4 Every even number squared is even. -/
theorem even_sq (n : ℕ) (h : IsEven' n) : IsEven' (n ^ 2) := by
  obtain ⟨k, rfl⟩ := h
  exact ⟨2 * k ^ 2, by ring⟩

/-- Theorem 1.5 One is a unit for multiplication. -/
theorem mul_one' (n : ℕ) : n * 1 = n + 0 := by simp

def helper : ℕ := 1

end Book
"""
# What each judge answers, by entity: (Q1, Q2, score); None: the direct judge's request is refused, the round-trip
# judge's answer unreadable (not judged either way).
DIRECT = {"Theorem 1.1": (True, True, 3), "Lemma 1.2": (False, True, 1), "Definition 1.3": None,
          "Theorem 1.4": (True, False, 2), "Theorem 1.5": (False, True, 1)}
ROUND_TRIP = {"Theorem 1.1": (True, True, 3), "Lemma 1.2": None, "Definition 1.3": (True, True, 3),
              "Theorem 1.4": (True, True, 3), "Theorem 1.5": (False, False, 1)}
HAND = "Hand Writer <hand@example.org>"
HAND_AT = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
APP = "Ada Reviewer <ada@example.org>"


def answer(body: str) -> tuple[str, int] | str:
    """What a model answers, whichever wire the configuration sends the role through: (reply, status) or text."""
    name = entity_of(body)
    if "You are a mathematician" in body:  # the back-translator
        return f"The statement of {name}, in words."
    if "BACK-TRANSLATION" in body:
        given = ROUND_TRIP[name]
        if given is None:
            return "It seems different to me."
        q1, q2, score = given
        return json.dumps({"back_implies_nl": q1, "nl_implies_back": q2, "score": score, "reason": "as scripted"})
    given = DIRECT[name]
    if given is None:
        return ("prompt is malformed", 400)
    q1, q2, score = given
    return json.dumps({"lean_implies_nl": q1, "nl_implies_lean": q2, "score": score, "reason": f"{name}: scripted"})


def entity_of(body: str) -> str:
    found = re.search(r"NAME: ([^\n]+)", body)
    assert found, "every audit request names its entity"
    return found.group(1)


def claude_answers(request: Any) -> claude_wire.Reply:
    reply = answer(json.dumps(request.body, ensure_ascii=False).replace("\\n", "\n"))
    if isinstance(reply, tuple):
        return claude_wire.error_reply(reply[1], "invalid_request_error", reply[0])
    return claude_wire.text_reply(reply)


def gpt_answers(request: Any) -> openai_wire.Reply:
    reply = answer(json.dumps(request.body, ensure_ascii=False).replace("\\n", "\n"))
    if isinstance(reply, tuple):
        return openai_wire.error_reply(reply[1], "invalid_request_error", reply[0])
    return openai_wire.text_reply(reply)


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    with scripted(monkeypatch, tmp_path, KEY, claude_answers, gpt_answers):
        yield


def review(declaration: str, verdict: Verdict, digest: str, *, note: str = "", by: str = APP,
           at: datetime | None = datetime(2026, 5, 1, tzinfo=UTC), entity: str = "") -> Review:
    return Review(declaration=declaration, entity=entity, verdict=verdict, note=note, digest=digest, reviewer=by,
                  at=at)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The book in a managed repository, and people's verdicts on it: through the application's path, by hand
    (committed by another author), and by hand not committed yet."""
    root = tmp_path / "book"
    (root / "Book").mkdir(parents=True)
    (root / "Book" / "Ch1.lean").write_text(BOOK, encoding="utf-8")
    (root / "autoformalize.toml").write_text(f'[project]\nlean_roots = ["Book"]\n\n[review]\nport = {PORT}\n',
                                             encoding="utf-8")
    digest = {name: ds[0] for name, ds in closures(census(DirTree(root), ["Book"])).items()}
    text = ""
    for r in (review("Book.add_zero'", Verdict.REJECT, digest["Book.add_zero'"], note="first thought"),
              review("Book.add_zero'", Verdict.APPROVE, digest["Book.add_zero'"]),  # the last decision holds
              review("Book.add_zero'", Verdict.COMMENT, digest["Book.add_zero'"], note=EVIL),
              review("Book.le_sq", Verdict.REJECT, digest["Book.le_sq"], note="the book has no `5 < n`"),
              # Approved when it meant something else: stale, in no table.
              review("Book.IsEven'", Verdict.APPROVE, "0123456789abcdef"),
              review("Book.helper", Verdict.COMMENT, digest["Book.helper"], note="no entity names it")):
        text = appended(text, r)
    (root / "reviews.toml").write_text(text, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the book and the first verdicts")
    # By hand, on GitHub say: no reviewer, no time; the commit's author and date give them.
    hand = appended(text, Review(declaration="Book.even_sq", verdict=Verdict.APPROVE, digest=digest["Book.even_sq"]))
    (root / "reviews.toml").write_text(hand, encoding="utf-8")
    git(root, "commit", "-qam", "approve even_sq", f"--author={HAND}", f"--date={HAND_AT.isoformat()}")
    # By hand, not committed yet: read, with no reviewer until it is.
    later = appended(hand, Review(declaration="Book.le_sq", verdict=Verdict.COMMENT, digest=digest["Book.le_sq"],
                                  note="still to discuss"))
    (root / "reviews.toml").write_text(later, encoding="utf-8")
    return root


def audit_of(root: Path, capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["audit", str(root), "--json", *args]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_hand_written_verdicts_are_the_git_authors(repo: Path) -> None:
    found = current(Git(repo), "reviews.toml")
    assert found.problems == []
    by = [(e.review.declaration, e.review.verdict.value, e.review.reviewer, e.review.at) for e in found.entries]
    assert by[-2] == ("Book.even_sq", "approve", HAND, HAND_AT)  # committed by hand: its commit's author and date
    assert by[-1] == ("Book.le_sq", "comment", "", None)  # not committed yet: no one to name
    assert by[0][2] == APP  # written by the application: its own


def test_the_judges_against_people_in_the_audit(repo: Path, servers: None,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    doc = audit_of(repo, capsys)
    s = doc["reviews"]
    assert s["source"] == "reviews.toml in the working tree" and s["problems"] == []
    # add_zero', le_sq, even_sq decided; helper only commented; IsEven' stale.
    assert (s["reviewed"], s["approved"], s["rejected"], s["commented"], s["stale"]) == (4, 2, 1, 3, 1)
    tables = {t["protocol"]: t for t in s["tables"]}
    assert {t["rubric"] for t in s["tables"]} == {"default"}
    direct = tables["direct"]
    assert direct["cells"] == {"faithful": {"approved": 1, "rejected": 0}, "stronger": {"approved": 1, "rejected": 0},
                               "different": {"approved": 0, "rejected": 1},
                               "not judged": {"approved": 0, "rejected": 0}}
    assert (direct["compared"], direct["agree"], direct["rate"]) == (3, 2, 0.6667)
    assert (direct["grouped"], direct["grouped_rate"]) == (3, 1.0)  # stronger taken as faithful
    rt = tables["round_trip"]
    assert rt["cells"] == {"faithful": {"approved": 2, "rejected": 0}, "stronger": {"approved": 0, "rejected": 0},
                           "different": {"approved": 0, "rejected": 0}, "not judged": {"approved": 0, "rejected": 1}}
    assert (rt["compared"], rt["agree"], rt["rate"]) == (2, 2, 1.0)

    by = {d["declaration"]: d for d in s["declarations"]}
    assert by["Book.even_sq"]["reviewer"] == HAND and by["Book.even_sq"]["at"] == HAND_AT.isoformat()
    assert by["Book.add_zero'"]["decision"] == "approved" and by["Book.add_zero'"]["reviewer"] == APP
    assert by["Book.add_zero'"]["comments"] == 1 and by["Book.le_sq"]["comments"] == 1
    assert by["Book.IsEven'"]["stale"] and by["Book.IsEven'"]["decision"] is None
    assert by["Book.helper"]["entity"] == "" and by["Book.helper"]["by"] == "file"
    assert by["Book.add_zero'"]["card"] == f"http://127.0.0.1:{PORT}/card/Book.add_zero%27"
    rows = {r["id"]: r for r in doc["entities"]}
    assert rows["thm:1.5"]["cards"] == {"Book.mul_one'": f"http://127.0.0.1:{PORT}/card/Book.mul_one%27"}

    assert [(g["book"], g["chapter"], g["by"], g["reviewed"], g["approved"], g["rejected"], g["commented"],
             g["stale"]) for g in s["books"]] == [(None, "1", "entity", 3, 2, 1, 2, 1),
                                                   (None, "Book", "file", 1, 0, 0, 1, 0)]
    assert "people: 4 declarations reviewed, 2 approved, 1 rejected, 3 commented, 1 stale; the judges agree with " \
           "them: direct 66.7% of 3, round trip 100.0% of 2" in doc["summary"]

    report = markdown(doc)
    section = report[report.index("## People's reviews"):]
    assert "### direct judge (rubric `default`) against people" in section
    assert "| stronger | 1 | 0 |" in section and "| not judged | 0 | 1 |" in section
    assert "Agreement: 2 of 3 (66.7%)" in section
    assert "| (no book) | 1 | 3 | 2 | 1 | 2 | 1 |" in section and "| (no book) | Book (folder) | 1 | 0 | 0 | 1 | 0 |" \
        in section
    assert f"| [`Book.even_sq`](http://127.0.0.1:{PORT}/card/Book.even_sq) | thm:1.4 | approved | {HAND} |" \
        in section
    assert EVIL not in section  # a person's note is one table cell: its pipe escaped
    # Entities a judge found different link to their cards.
    assert f"| lem:1.2 | [`Book.le_sq`](http://127.0.0.1:{PORT}/card/Book.le_sq) | different |" in report


class Page(HTMLParser):
    """The page's links, and its tables' cell texts by table id."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.links: dict[str, str] = {}
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._href: str | None = None
        self._text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self._table = a.get("id") or ""
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []
        elif tag == "a":
            self._href, self._text = a.get("href"), []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._table is not None:
            self.tables[self._table][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "table":
            self._table = None
        elif tag == "a" and self._href is not None:
            self.links["".join(self._text)] = self._href
            self._href = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._href is not None:
            self._text.append(data)


def test_the_dashboard_shows_people_against_the_judges(repo: Path, servers: None, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    audit_of(repo, capsys)  # kept in the state folder for the dashboard
    html = build(repo, tmp_path / "site", datetime.now(UTC)).read_text(encoding="utf-8")
    page = Page(html)
    assert page.tables["people-direct"][1:] == [["faithful", "1", "0"], ["stronger", "1", "0"],
                                                ["different", "0", "1"], ["not judged", "0", "0"]]
    assert page.tables["people-round_trip"][1:] == [["faithful", "2", "0"], ["stronger", "0", "0"],
                                                    ["different", "0", "0"], ["not judged", "0", "1"]]
    assert 'id="agreement-direct">Agreement: 2 of 3 (66.7%)' in html
    assert page.tables["people-books"][1:] == [["1", "3", "2", "1", "2", "1"],
                                               ["Book (folder)", "1", "0", "0", "1", "0"],
                                               ["All", "4", "2", "1", "3", "1"]]
    reviewed = {row[0]: row for row in page.tables["people-reviews"][1:]}
    assert reviewed["Book.even_sq"][2:4] == ["approved", HAND]
    assert reviewed["Book.le_sq"][2:4] == ["rejected", APP]
    assert reviewed["Book.IsEven'"][2] == "stale"
    # Each reviewed declaration, and each a judge doubts that no one decided (1.5: different), links to its card.
    assert page.links["Book.add_zero'"] == f"http://127.0.0.1:{PORT}/card/Book.add_zero%27"
    assert page.links["Book.mul_one'"] == f"http://127.0.0.1:{PORT}/card/Book.mul_one%27"
    assert 'id="people-awaiting"' in html and "Book.le_sq</code></a> <small>" not in html
    # A person's note is text: escaped, never markup.
    assert "<script>alert" not in html and "&lt;script&gt;alert(&quot;note&quot;)&lt;/script&gt;" in html


def test_a_verdict_on_a_changed_statement_turns_stale(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lean = repo / "Book" / "Ch1.lean"
    lean.write_text(lean.read_text().replace("n ≤ n ^ 2", "n ≤ n ^ 3"), encoding="utf-8")
    s = audit_of(repo, capsys, "--no-models")["reviews"]
    by = {d["declaration"]: d for d in s["declarations"]}
    # Its rejection and the comment after it were on the statement as it was: both stale, neither applied.
    assert by["Book.le_sq"]["decision"] is None and by["Book.le_sq"]["stale"] and by["Book.le_sq"]["comments"] == 0
    assert (s["reviewed"], s["rejected"], s["stale"]) == (3, 0, 2)
    assert s["tables"] == []  # no judge ran: nothing to set against people


DATA = Path(__file__).parent.parent / "data" / "reasbook_books"
TAO, ROCKAFELLAR = "Analysis2_Tao_2022", "ConvexAnalysis_Rockafellar_1970"


def test_each_book_is_counted_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "ReasBook-repo"
    shutil.copytree(DATA, repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "ReasBook, trimmed")
    assert main(["init", str(repo)]) == 0
    capsys.readouterr()
    assert main(["audit", "--no-models", "--json", "--repo", str(repo)]) == 0
    rows = {e["id"]: e for e in json.loads(capsys.readouterr().out)["entities"]}
    roots = ["ReasBook/ReasBook", "ReasBook/Books", "ReasBook/Papers"]
    digest = {n: ds[0] for n, ds in closures(census(DirTree(repo), roots)).items()}
    text = ""
    for key, verdict in ((f"{TAO}/thm:1.1", Verdict.APPROVE), (f"{ROCKAFELLAR}/thm:1.1", Verdict.REJECT),
                         (f"{ROCKAFELLAR}/cor:4.7.2", Verdict.APPROVE)):
        name = rows[key]["lean"][0]
        text = appended(text, review(name, verdict, digest[name], entity=key))
    (repo / "reviews.toml").write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init and the verdicts")
    assert main(["audit", "--no-models", "--json", "--repo", str(repo)]) == 0
    books = json.loads(capsys.readouterr().out)["reviews"]["books"]
    assert [(g["book"], g["chapter"], g["approved"], g["rejected"]) for g in books] == [
        (TAO, "1", 1, 0), (ROCKAFELLAR, "1", 0, 1), (ROCKAFELLAR, "4", 1, 0)]
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the audit")
    page = Page(build(repo, tmp_path / "site", datetime.now(UTC)).read_text(encoding="utf-8"))
    assert [row[:4] for row in page.tables["people-books"][1:]] == [
        [f"{TAO} · 1", "1", "1", "0"], [f"{ROCKAFELLAR} · 1", "1", "0", "1"], [f"{ROCKAFELLAR} · 4", "1", "1", "0"],
        ["All", "3", "2", "1"]]
