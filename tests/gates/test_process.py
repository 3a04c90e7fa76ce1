"""The one way a subprocess is run: a command that had to succeed says what failed; a tree is killed whole."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gates import process


def test_a_command_that_had_to_succeed_names_itself_its_status_and_its_last_lines(tmp_path: Path) -> None:
    args = ["sh", "-c", "for i in $(seq 1 25); do echo line $i; done; exit 3"]
    with pytest.raises(process.CommandFailed) as failed:
        process.run(args, tmp_path, 30, check=True)
    lines = "\n".join(f"line {i}" for i in range(6, 26))
    assert str(failed.value) == f"`{' '.join(args)}` exited with 3:\n{lines}"
    assert failed.value.done.exit_code == 3
    assert process.run(args, tmp_path, 30).exit_code == 3  # without `check`, the status is only reported


def gone(pid: int) -> bool:
    """Ended: no such process, or a zombie no one reaps here."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


# A process two levels down, in a session of its own, deaf to TERM: only KILL ends it.
DEAF = ("import signal, subprocess\n"
        "deaf = subprocess.Popen(['sleep', '300'], start_new_session=True,\n"
        "                        preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN))\n"
        "print(deaf.pid, flush=True)\n"
        "deaf.wait()\n")


def test_killing_a_tree_ends_what_it_started_in_groups_of_its_own() -> None:
    starter = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {DEAF!r}])\n"
    command = subprocess.Popen([sys.executable, "-c", starter], stdout=subprocess.PIPE, start_new_session=True,
                               text=True)
    assert command.stdout is not None
    deaf = int(command.stdout.readline())
    try:
        tree = process.descendants(command.pid)
        assert len(tree) == 2 and tree[-1] == deaf and os.getpgid(deaf) != command.pid
        assert process.descendants(deaf) == []
        start = time.monotonic()
        process.kill_tree(command.pid, 0.2, reap=command.poll)
        took = time.monotonic() - start
        command.wait(timeout=30)
        assert gone(deaf) and took < 3  # after the grace given, not the default of five seconds
    finally:
        if not gone(deaf):
            os.kill(deaf, 9)
