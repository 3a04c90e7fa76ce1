"""Time the audit's model-free parts and the dashboard on generated projects.

    python benchmarks/audit.py                      # 500, 2,000 and 8,000 entities; 1,000 and 5,000 cycles
    python benchmarks/audit.py --entities 2000 --cycles 5000

The audit project has one Lean file per chapter of 100 entities, each a
docstring `/-- Theorem c.i … -/` whose statement cites the previous theorem
("by Theorem c.(i-1)") and uses a term the first theorem of the chapter
introduces, and whose proof names the previous declaration: every entity is
formalized and every citation edge is reflected, which the run checks. The
dashboard's repository has a history of that many cycles with costs, gates and
summaries. Each figure is the median of --repeat runs.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from census import median_time

from audit.run import Models, Options, audit
from gates.census import census
from gates.tree import DirTree
from orchestrator.report import build
from state.history import GateVerdict, HistoryRecord, Outcome, Usage, append_record

PER_CHAPTER = 100
NOW = datetime(2026, 11, 1, tzinfo=UTC)


def write_book(root: Path, entities: int) -> None:
    chapters = (entities + PER_CHAPTER - 1) // PER_CHAPTER
    for c in range(1, chapters + 1):
        lines = ["import Mathlib", "", f"namespace Chapter{c}", ""]
        for i in range(1, min(PER_CHAPTER, entities - (c - 1) * PER_CHAPTER) + 1):
            cite = f" By Theorem {c}.{i - 1}, and since every \\emph{{tame sequence {c}}} is bounded." if i > 1 \
                else f" A sequence is a \\emph{{tame sequence {c}}} when it is bounded."
            proof = f"t{i - 1} n" if i > 1 else "Nat.le_refl n"
            lines += [f"/-- Theorem {c}.{i} For every natural number $n$, $n \\le n + {i}$.{cite} -/",
                      f"theorem t{i} (n : ℕ) : n ≤ n + {i} := by", f"  have := {proof}", "  omega", ""]
        lines.append(f"end Chapter{c}")
        (root / f"Book/Chapter{c}.lean").parent.mkdir(parents=True, exist_ok=True)
        (root / f"Book/Chapter{c}.lean").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_history(repo: Path, cycles: int) -> None:
    state = repo / ".prover-state"
    state.mkdir(parents=True)
    for n in range(1, cycles + 1):
        accepted = n % 3 != 0
        append_record(state / "history.jsonl", HistoryRecord(
            cycle=n, started_at=NOW + timedelta(hours=n), finished_at=NOW + timedelta(hours=n, minutes=40),
            outcome=Outcome.ACCEPTED if accepted else Outcome.REJECTED, progress_score=1 if accepted else -1,
            gates=[GateVerdict(name=g, passed=accepted or g != "build", detail="…") for g in
                   ("scope", "integrity", "sorry", "build")],
            pre_sorry_count=5000 - n, post_sorry_count=5000 - n - accepted, summary=f"cycle {n}: closed a sorry",
            usage={"worker": Usage(input=20_000, output=3_000)}, costs={"worker": 0.8, "planner": 0.2},
            cost_usd=1.0))
    (repo / "plan.md").write_text("# Plan\n\n## Chapter 1\n- [x] Theorem 1.1\n- [ ] Theorem 1.2\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, nargs="*", default=[500, 2000, 8000])
    parser.add_argument("--cycles", type=int, nargs="*", default=[1000, 5000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print("entities  lines   audit without models (s)  edges tested  reflected")
    for n in args.entities:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            write_book(root, n)
            tree = census(DirTree(root))
            doc: dict[str, object] = {}

            def run(tree=tree, root=root, doc=doc) -> None:  # type: ignore[no-untyped-def]
                doc.update(audit(root, tree, Models(), Options(), NOW))

            seconds = median_time(run, args.repeat)
            rows = doc["entities"]
            rates = doc["reuse"]["rates"]["all"]  # type: ignore[index]
            assert len(rows) == n and all(r["formalized"] for r in rows), "every entity is formalized"  # type: ignore[union-attr, index]
            print(f"{n:8,}  {tree.lines:7,}  {seconds:24.2f}  {rates['total']:12,}  {rates['reflected']:9,}")
    print("cycles  report build (s)  index.html (MB)")
    for n in args.cycles:
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp) / "repo"
            write_history(repo, n)
            out = Path(tmp) / "site"
            seconds = median_time(lambda repo=repo, out=out: build(repo, out, NOW), args.repeat)  # type: ignore[misc]
            size = (out / "index.html").stat().st_size / 1e6
            print(f"{n:6,}  {seconds:16.2f}  {size:15.1f}")


if __name__ == "__main__":
    main()
