"""Time the review queue (`orchestrator.review.queue.build`) on generated books committed to a git repository.

    python benchmarks/review_queue.py                     # 1,000, 3,000 and 8,000 declarations
    python benchmarks/review_queue.py --decls 3000 --repeat 5
    python benchmarks/review_queue.py --local              # each chapter's definitions its own

Each chapter is one Lean file of 100 declarations: 20 definitions, each using the one before it (the chapter's
first uses the previous chapter's last, so what a statement reaches grows with the book; with --local it uses
none), every fifth of them a numbered `Definition c.i`, and 80 numbered theorems, each naming one of its chapter's
definitions, every fourth holding a sorry. The history judges a theorem in each of its cycles (one per ten
declarations), with a successors gate naming none; `reviews.toml` holds a verdict on every tenth theorem. Timed: the
first build (the census's index cache empty) and the next ones (the cache filled), the median of --repeat.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from census import median_time

from gates.census import census
from gates.meaning import meanings
from gates.tree import DirTree
from orchestrator.config import load_config
from orchestrator.review.queue import build
from state.history import Faithfulness, GateVerdict, HistoryRecord, Outcome

PER_CHAPTER = 100
DEFS = 20
NOW = datetime(2026, 11, 1, tzinfo=UTC)
ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.org", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@example.org"}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=ENV, check=True, capture_output=True)


def write_book(root: Path, decls: int, *, local: bool = False) -> list[str]:
    """The book's files; the theorems' full names. `local`: each chapter's definitions use none of another's."""
    theorems: list[str] = []
    chapters = max(1, decls // PER_CHAPTER)
    for c in range(1, chapters + 1):
        lines = ["import Mathlib", "", f"namespace Chapter{c}", ""]
        for i in range(1, DEFS + 1):
            used = f"d{i - 1} n" if i > 1 else (f"Chapter{c - 1}.d{DEFS} n" if c > 1 and not local else "n")
            if i % 5 == 0:
                lines.append(f"/-- Definition {c}.{i} The {i}th shift of a number. -/")
            lines += [f"def d{i} (n : ℕ) : ℕ := {used} + 1", ""]
        for i in range(1, PER_CHAPTER - DEFS + 1):
            proof = "sorry" if i % 4 == 0 else "omega"
            lines += [f"/-- Theorem {c}.{DEFS + i} Every shift is at least its number. -/",
                      f"theorem t{i} (n : ℕ) : n ≤ d{1 + i % DEFS} n + {i} := by", f"  {proof}", ""]
            theorems.append(f"Chapter{c}.t{i}")
        lines.append(f"end Chapter{c}")
        path = root / f"Book/Chapter{c}.lean"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return theorems


def write_state(repo: Path, theorems: list[str], decls: int) -> None:
    state = repo / ".prover-state"
    state.mkdir(parents=True, exist_ok=True)
    records = []
    for n in range(1, decls // 10 + 1):
        name = theorems[(n * 7) % len(theorems)]
        records.append(HistoryRecord(
            cycle=n, outcome=Outcome.ACCEPTED, finished_at=NOW + timedelta(hours=n),
            changed_files=[f"Book/{name.split('.')[0]}.lean"],
            faithfulness=[Faithfulness(entity=f"thm:{n}", declarations=[name], score=1 + n % 3, reason="scripted")],
            gates=[GateVerdict(name="successors", passed=True, detail="no declaration the project uses means "
                                                                      "something else")]).to_line())
    (state / "history.jsonl").write_text("\n".join(records) + "\n", encoding="utf-8")
    digests = meanings(census(DirTree(repo), ["Book"]))
    (repo / "reviews.toml").write_text("".join(
        f'[[review]]\ndeclaration = "{t}"\nverdict = "approve"\ndigest = "{digests[t][0]}"\n'
        f'reviewer = "B <b@example.org>"\nat = 2026-11-01T00:00:00Z\n\n' for t in theorems[::10]), encoding="utf-8")
    (repo / "autoformalize.toml").write_text('[project]\nlean_roots = ["Book"]\n', encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decls", type=int, nargs="*", default=[1000, 3000, 8000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--local", action="store_true", help="no chapter's definitions use another chapter's")
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}")
    print("declarations  cards  first build (s)  next builds (s, median)")
    for n in args.decls:
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp)
            git(repo, "init", "-q", "-b", "main")
            theorems = write_book(repo, n, local=args.local)
            write_state(repo, theorems, n)
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", "book")
            config = load_config(repo)
            start = time.perf_counter()
            q = build(repo, config)
            first = time.perf_counter() - start
            assert not q.problems, q.problems[:3]
            warm = median_time(lambda: build(repo, config), args.repeat)  # noqa: B023
            print(f"{n:12,}  {len(q.cards):5,}  {first:15.2f}  {warm:23.2f}")


if __name__ == "__main__":
    main()
