"""Time the sorry ages (`git blame` of every hole line) on generated repositories with a history.

    python benchmarks/blame.py                          # 100, 400 and 1,000 files; 300 commits
    python benchmarks/blame.py --files 400 --commits 1000

Each repository holds generated Lean files of ~1,300 lines (`leangen.py`)
committed 400 days ago, then --commits back-dated commits spread over the
days since, each editing --touch files: a sorry line rewritten, a proof line
changed, a line inserted (so blame must follow moved lines). Timed, each the
median of --repeat runs: `blame.ages` with no cache (every file with holes
blamed), with the cache of the same commit (nothing blamed), and after one
more commit touching --touch files, with the cache of the commit before (the
usual cycle: the files the last cycle changed are blamed again).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from census import DECLS_PER_FILE, median_time
from leangen import write_tree

from gates.census import Census, census
from gates.tree import DirTree
from orchestrator import blame
from orchestrator.git import Git

HISTORY = timedelta(days=400)


def commit(repo: Path, when: datetime, message: str, *paths: str) -> None:
    stamp = f"@{int(when.timestamp())} +0000"
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.com", "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    subprocess.run(["git", "commit", "-q", "-m", message, "--", *paths], cwd=repo, env=env, check=True)


def edit(path: Path, rng: random.Random, n: int) -> None:
    """Rewrite one sorry line and one proof line, and insert a proof line after another: holes stay as many."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    sorries = [i for i, t in enumerate(lines) if t == "  sorry\n" or t.startswith("  sorry  -- ")]
    proofs = [i for i, t in enumerate(lines) if t.startswith("  rw [")]
    if sorries:
        lines[rng.choice(sorries)] = f"  sorry  -- revisited in commit {n}\n"
    lines[rng.choice(proofs)] = f"  rw [Finset.sum_range_succ, step_{n}] at h{rng.randint(0, 9)} ⊢\n"
    at = rng.choice(proofs) + 1
    lines.insert(at, f"  have h_{n} : {n} ≤ {n} + 1 := by omega\n")
    path.write_text("".join(lines), encoding="utf-8")


def hole_lines(tree: Census) -> int:
    return len({(p, h.line) for p, f in tree.files.items() for h in f.holes})


def build(repo: Path, files: int, commits: int, touch: int, now: datetime, rng: random.Random) -> list[str]:
    """The generated tree committed `HISTORY` ago, then `commits` edits spread evenly up to a day ago."""
    tally = write_tree(repo, files=files, decls_per_file=DECLS_PER_FILE)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    commit(repo, now - HISTORY, "initial")
    paths = sorted(p.relative_to(repo).as_posix() for p in (repo / "Book").rglob("*.lean"))
    step = (HISTORY - timedelta(days=1)) / commits
    for n in range(1, commits + 1):
        touched = rng.sample(paths, min(touch, files))
        for p in touched:
            edit(repo / p, rng, n)
        commit(repo, now - HISTORY + n * step, f"commit {n}", *touched)
    assert hole_lines(census(DirTree(repo), ["Book"])) == tally.sorries + tally.admits, "census disagrees"
    return paths


def timings(repo: Path, paths: list[str], touch: int, repeat: int, now: datetime, rng: random.Random
            ) -> tuple[int, float, float, float]:
    """Hole lines, then seconds for `blame.ages` cold, warm, and after one more commit with the previous cache."""
    git = Git(repo)
    cache = Path(git.run("rev-parse", "--absolute-git-dir")) / "autoformalize" / "blame"
    head, holes = git.head(), census(DirTree(repo), ["Book"])

    def forget() -> None:  # a new process: nothing read yet
        blame._LIVE.clear()

    def cold() -> list[blame.SorryAge]:
        shutil.rmtree(cache, ignore_errors=True)
        forget()
        return blame.ages(git, head, holes, now)

    cold_s = median_time(cold, repeat)
    found = blame.ages(git, head, holes, now)
    assert len(found) == hole_lines(holes), "a hole line has no age"
    assert len({a.commit for a in found}) > 1, "the history did not reach the sorry lines"
    warm_s = median_time(partial(blame.ages, git, head, holes, now), repeat)

    before = {f.name: f.read_bytes() for f in cache.iterdir()}
    touched = rng.sample(paths, min(touch, len(paths)))
    for p in touched:
        edit(repo / p, rng, 0)
    commit(repo, now, "one more cycle", *touched)
    after, changed = git.head(), census(DirTree(repo), ["Book"])

    def one_change() -> list[blame.SorryAge]:
        shutil.rmtree(cache)
        cache.mkdir()
        for name, data in before.items():
            (cache / name).write_bytes(data)
        forget()
        return blame.ages(git, after, changed, now)

    change_s = median_time(one_change, repeat)
    fresh = [a for a in blame.ages(git, after, changed, now) if a.commit == after]
    assert fresh and all(a.age_days < 1 for a in fresh), "the last commit's lines are not seen"
    return len(found), cold_s, warm_s, change_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, nargs="+", default=[100, 400, 1_000])
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--touch", type=int, default=3, help="files each commit edits")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    print(f"# {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, {cpu}")
    print(f"{'files':>6} {'holes':>8} {'commits':>8} {'cold s':>7} {'warm s':>7} {'one change s':>13}")
    now = datetime.now(UTC).replace(microsecond=0)
    for files in args.files:
        rng = random.Random(files)
        with tempfile.TemporaryDirectory() as tmp:
            paths = build(Path(tmp), files, args.commits, args.touch, now, rng)
            holes, cold_s, warm_s, change_s = timings(Path(tmp), paths, args.touch, args.repeat, now, rng)
            print(f"{files:>6} {holes:>8,} {args.commits:>8} {cold_s:>7.2f} {warm_s:>7.2f} {change_s:>13.2f}")


if __name__ == "__main__":
    main()
