"""The Aristotle prover through the real aristotlelib client, against the scripted stand-in server."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from agents.provers.aristotle import AristotleProver
from agents.provers.base import Off, Phase, ProverError, Target
from agents.provers.config import ProverConfig
from orchestrator.wiring import prover_for
from tests.standin.aristotle_server import AristotleStandin

KEY = "arist-test-key-never-print"
TARGETS = [Target(declaration="Book.hard", file="Book/A.lean")]
FILES = {"Book/A.lean": b"theorem hard : True := by\n  sorry\n", "lakefile.toml": b'name = "book"\n'}


@pytest.fixture
def standin() -> Iterator[AristotleStandin]:
    with AristotleStandin(api_key=KEY) as server:
        yield server


def test_submit_poll_fetch(standin: AristotleStandin) -> None:
    prover = AristotleProver(KEY, standin.base_url)

    job = prover.submit(TARGETS, FILES)

    sent = standin.jobs[job]
    assert sent.files == FILES
    assert "`Book.hard` in Book/A.lean" in sent.prompt
    assert prover.poll(job).phase is Phase.RUNNING
    standin.finish(job, {"Book/A.lean": "theorem hard : True := by\n  trivial\n"})
    poll = prover.poll(job)
    assert poll.phase is Phase.RETURNED and "COMPLETE" in poll.detail
    assert prover.fetch(job) == {"project_aristotle/Book/A.lean": "theorem hard : True := by\n  trivial\n"}
    assert all(r.headers["x-api-key"] == KEY for r in standin.requests)
    assert f"/api/v3/project/{job}/result" in standin.paths("GET")


def test_cancel_and_failure(standin: AristotleStandin) -> None:
    prover = AristotleProver(KEY, standin.base_url)
    first, second = prover.submit(TARGETS, FILES), prover.submit(TARGETS, FILES)

    prover.cancel(first)
    standin.fail(second)

    assert prover.poll(first).phase is Phase.CANCELLED
    assert standin.paths("POST")[-1] == f"/api/v3/task/{standin.jobs[first].task_id}/cancel"
    assert prover.poll(second).phase is Phase.FAILED


def test_a_wrong_key_and_a_dead_server_are_prover_errors(standin: AristotleStandin) -> None:
    with pytest.raises(ProverError, match="401"):
        AristotleProver("wrong", standin.base_url).submit(TARGETS, FILES)
    with AristotleStandin(api_key=KEY) as gone:
        url = gone.base_url
    with pytest.raises(ProverError, match="Request failed"):
        AristotleProver(KEY, url).poll("prj-0001")



def test_a_key_without_the_library_turns_the_prover_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARISTOTLE_API_KEY", "a-key")
    monkeypatch.setitem(sys.modules, "aristotlelib", None)  # what `import` meets when it is not installed
    off = prover_for(ProverConfig())
    assert isinstance(off, Off) and "aristotlelib is not installed" in off.reason
