"""The relay: what an engine's confined process asks, the product runs in the sandbox for Worker-written code."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agents.coding import Quarters, Setup
from agents.config import WorkerConfig
from agents.ledger import Ledger
from agents.relay import EXIT_UNRESOLVED
from agents.tools import Workspace
from agents.worker import Limits
from gates.build import LakeCompiler
from gates.config import BuildConfig
from tests.conftest import sandbox


@pytest.fixture
def quarters(make_repo: Callable[..., Path]) -> Iterator[Quarters]:
    repo = make_repo()
    confined = sandbox()
    workspace = Workspace(repo, ["Book/Basic.lean"], ["lakefile.toml"], ".prover-state", ["Book"],
                          LakeCompiler(repo, BuildConfig(), confined))
    servers = {"echo": {"command": "/bin/sh", "args": ["-c", "touch .lake/mark; echo \"touch: $?\"; cat"],
                        "env": {"MARK": "1"}}}
    setup = Setup(WorkerConfig(backend="claude-code", model="m"), "m", workspace, "", Limits(1, 60), Ledger(),
                  confined, mcp_servers=servers)
    made = Quarters(setup, permitted=lambda command: not command.startswith("curl"))
    yield made
    made.close()


def client(quarters: Quarters, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(quarters.relay.client(*args), capture_output=True, timeout=60, check=False)


def test_a_command_runs_in_the_sandbox_and_its_status_comes_back(quarters: Quarters) -> None:
    done = client(quarters, "run", "echo out; echo err >&2; id -u; echo $HOME; exit 3")

    assert done.returncode == 3
    lines = done.stdout.decode().splitlines()
    assert lines[:2] == ["out", "err"] and lines[3] == "/tmp/home"  # the sandbox's private home
    assert lines[2] != "0" or os.geteuid() != 0  # as root the sandboxed code runs as another user


def test_a_command_the_session_may_not_run_is_refused_without_running(quarters: Quarters) -> None:
    done = client(quarters, "run", "curl http://example.com")

    assert done.returncode == EXIT_UNRESOLVED
    assert b"refused: not a command this session may run" in done.stdout


def test_killing_the_client_ends_the_command(quarters: Quarters, tmp_path: Path) -> None:
    marker = quarters.setup.workspace.root / ".lake" / "still-running"
    process = subprocess.Popen(quarters.relay.client("run", f"sleep 2; touch {marker}"))
    time.sleep(0.5)
    process.kill()
    process.wait()
    time.sleep(2.5)

    assert not marker.exists()


def test_an_mcp_server_is_piped_through_and_sees_its_lake_read_only(quarters: Quarters) -> None:
    (entry,) = quarters.mcp_servers().values()

    done = subprocess.run(entry, input=b'{"jsonrpc": "2.0"}\n', capture_output=True, timeout=60, check=False)

    assert done.returncode == 0
    touched, echoed = done.stdout.decode().splitlines()
    assert touched != "touch: 0" and echoed == '{"jsonrpc": "2.0"}'  # it lives through the gates' compiles
    assert not (quarters.setup.workspace.root / ".lake" / "mark").exists()


def test_a_request_without_the_token_or_for_an_unknown_server_is_refused(quarters: Quarters) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(quarters.relay.path))
        conn.sendall(json.dumps({"token": "guess", "kind": "run", "command": "true"}).encode() + b"\n")
        assert conn.recv(1024) == b""  # closed without an answer
    done = client(quarters, "mcp", "nonesuch")
    assert done.returncode == 0 and done.stdout == b""


def test_closing_ends_every_process_and_the_socket(quarters: Quarters) -> None:
    process = subprocess.Popen(quarters.relay.client("run", "sleep 30"), stdout=subprocess.PIPE)
    time.sleep(0.5)
    root = quarters.root

    quarters.close()

    assert process.wait(timeout=10) in (128 + 9, EXIT_UNRESOLVED) and not root.exists()  # killed, or cut off


def test_a_malformed_request_is_refused_and_the_relay_goes_on(quarters: Quarters) -> None:
    errors: list[str] = []
    quarters.relay.on_error = errors.append
    for junk in (b"\xff\xfe not json\n", b'["a list"]\n', b'{"token": ' + json.dumps(quarters.relay.token).encode()
                 + b', "kind": "mcp"}\n'):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(str(quarters.relay.path))
            conn.sendall(junk)
            conn.settimeout(10)
            assert conn.recv(1024) == b""

    assert len(errors) == 3 and all(e.startswith("relay: ") for e in errors)
    assert client(quarters, "run", "echo still here").stdout == b"still here\n"


def test_closing_ends_an_idle_clients_connection(quarters: Quarters) -> None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(str(quarters.relay.path))
    time.sleep(0.2)

    quarters.close()

    conn.settimeout(10)
    assert conn.recv(1024) == b""
    conn.close()
