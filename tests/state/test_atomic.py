"""Atomic writes and appends under concurrent writers and a crash mid-write."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from state.atomic import append_line, write_atomic

CONTENTS = [bytes([65 + i]) * 200_000 for i in range(4)]


def _writer(path: str, i: int, rounds: int) -> None:
    for _ in range(rounds):
        write_atomic(Path(path), CONTENTS[i])


def _appender(path: str, i: int, rounds: int) -> None:
    for n in range(rounds):
        append_line(Path(path), json.dumps({"writer": i, "n": n, "pad": "x" * 2000}))


def test_readers_see_one_whole_version_while_writers_race(tmp_path: Path) -> None:
    path = tmp_path / "state.bin"
    write_atomic(path, CONTENTS[0])
    ctx = multiprocessing.get_context("fork")
    writers = [ctx.Process(target=_writer, args=(str(path), i, 40)) for i in range(4)]
    for w in writers:
        w.start()
    seen = set()
    while any(w.is_alive() for w in writers):
        data = path.read_bytes()
        assert data in CONTENTS
        seen.add(data[:1])
    for w in writers:
        w.join()
        assert w.exitcode == 0
    assert path.read_bytes() in CONTENTS
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_concurrent_appends_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_appender, args=(str(path), i, 50)) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    lines = path.read_text().splitlines()
    assert len(lines) == 200
    records = [json.loads(line) for line in lines]
    for i in range(4):
        assert [r["n"] for r in records if r["writer"] == i] == list(range(50))


def test_a_crash_mid_write_leaves_the_old_version(tmp_path: Path) -> None:
    path = tmp_path / "strategy.md"
    write_atomic(path, "old strategy\n")
    # A child writes 200 MB through write_atomic; it is killed while still writing.
    script = (f"import sys; sys.path[:0] = {sys.path!r}\n"
              "from pathlib import Path\nfrom state.atomic import write_atomic\n"
              f"write_atomic(Path({str(path)!r}), 'new ' * 50_000_000)\n")
    child = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]:
        time.sleep(0.005)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert path.read_text() == "old strategy\n"


def test_append_after_a_line_cut_short_starts_a_new_line(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text('{"cycle": 1}\n{"cycle": 2, "summ')
    append_line(path, '{"cycle": 3}')
    assert path.read_text() == '{"cycle": 1}\n{"cycle": 2, "summ\n{"cycle": 3}\n'


def test_a_written_file_has_a_new_files_mode_or_keeps_its_own(tmp_path: Path) -> None:
    # Not mkstemp's 0600: as root the sandbox compiles as another user, who must read what the Worker wrote.
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "A.lean", "x")
        (tmp_path / "run.sh").write_text("")
        (tmp_path / "run.sh").chmod(0o750)
        write_atomic(tmp_path / "run.sh", "y")
    finally:
        os.umask(old)

    assert (tmp_path / "A.lean").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "run.sh").stat().st_mode & 0o777 == 0o750
