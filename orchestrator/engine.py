"""Where a round's items are worked: an engine takes an item, says when it is done, and hands back its result.

The coordinator keeps everything that lands: the merge queue re-runs the gates on the branch as it is, and only
it commits and pushes; an engine never does. `LocalEngine` runs items on threads of this process (the work is
model calls and compiles, both waiting on other processes), bounded by `[parallel] workers`; its result is the
item's cycle, worked in place. `SubmititEngine` (`remote = True`) runs each item as a job of its own through
submitit (SLURM, or subprocesses here): its job is `remote.run` on a `remote.Job`, and its result a
`remote.Result` the coordinator applies and gates again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from gates.base import CheckResult, Compiler
from orchestrator.config import SubmititConfig
from state.errors import UsageError

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Results(Protocol[T_co]):
    """Where the items' results are had: every engine, and the `github` engine's land job, whose items were
    submitted by its workflow (`orchestrator.actions`)."""

    name: str

    def poll(self, ticket: str) -> bool:
        """Whether the item is done (worked, or failed)."""
        ...

    def collect(self, ticket: str) -> T_co:
        """The item's result, once done (waiting for it if not); raises what working it raised."""
        ...

    def close(self) -> None: ...


class Engine(Results[T], Protocol[T]):
    remote: bool  # its jobs run in another process: picklable, each `remote.run` of a `remote.Job`

    def submit(self, item: str, job: Callable[[], T]) -> str:
        """Start working `item`; a ticket to poll and collect it by."""
        ...


class LocalEngine(Generic[T]):
    name = "local"
    remote = False

    def __init__(self, workers: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="item")
        self._futures: dict[str, Future[T]] = {}

    def submit(self, item: str, job: Callable[[], T]) -> str:
        ticket = f"{len(self._futures)}:{item}"
        self._futures[ticket] = self._pool.submit(job)
        return ticket

    def poll(self, ticket: str) -> bool:
        return self._futures[ticket].done()

    def collect(self, ticket: str) -> T:
        return self._futures[ticket].result()

    def close(self) -> None:
        self._pool.shutdown(wait=True)


class SubmititEngine(Generic[T]):
    """Each item a job of submitit's `AutoExecutor`: a SLURM job (`cluster = "slurm"`), or a subprocess here."""

    name = "submitit"
    remote = True

    def __init__(self, cfg: SubmititConfig) -> None:
        try:
            import submitit
        except ImportError:
            raise UsageError('[parallel] engine = "submitit" needs submitit: pip install '
                             "'autoformalize[submitit]'") from None
        folder = Path(cfg.folder).expanduser()
        folder = folder if folder.is_absolute() else Path.home() / folder
        self._executor = submitit.AutoExecutor(folder=folder / "%j", cluster=cfg.cluster)
        params: dict[str, Any] = {"name": "autoformalize-item", "timeout_min": cfg.time_min,
                                  "cpus_per_task": cfg.cpus, "mem_gb": cfg.mem_gb}
        if cfg.partition:
            params["slurm_partition"] = cfg.partition
        if cfg.extra:
            params["slurm_additional_parameters"] = dict(cfg.extra)
        self._executor.update_parameters(**params)
        self._jobs: dict[str, Any] = {}

    def submit(self, item: str, job: Callable[[], T]) -> str:
        submitted = self._executor.submit(job)
        ticket = f"{submitted.job_id}:{item}"
        self._jobs[ticket] = submitted
        return ticket

    def poll(self, ticket: str) -> bool:
        return bool(self._jobs[ticket].done())

    def collect(self, ticket: str) -> T:
        result: T = self._jobs[ticket].result()
        return result

    def close(self) -> None:
        """Cancel the jobs still running: a round stopped leaves none behind."""
        for job in self._jobs.values():
            if not job.done():
                job.cancel(check=False)


def engine_of(workers: int, cfg: SubmititConfig, name: str) -> LocalEngine[Any] | SubmititEngine[Any]:
    """The configured engine (`[parallel] engine`)."""
    runs_here(name)
    return SubmititEngine(cfg) if name == "submitit" else LocalEngine(workers)


def runs_here(name: str) -> None:
    """Refuse, before a round starts, an engine whose jobs only a workflow submits."""
    if name == "github":
        raise UsageError('[parallel] engine = "github" works a round as the jobs of the workflow `autoformalize init '
                         "--github` writes (`autoformalize round plan`, `round work`, `round land`); `cycle` and "
                         '`run` work rounds with engine "local" or "submitit"')


class Bounded:
    """A compiler whose runs take one of the machine's build slots (`[parallel] max_builds`), shared by every
    Worker's tools and every item's gates."""

    def __init__(self, inner: Compiler, slots: threading.Semaphore) -> None:
        self.inner = inner
        self.slots = slots

    def check(self, path: str, module: str) -> CheckResult:
        with self.slots:
            return self.inner.check(path, module)

    def build_all(self) -> CheckResult:
        with self.slots:
            return self.inner.build_all()

    def probe(self, text: str) -> CheckResult:
        with self.slots:
            return self.inner.probe(text)

    def replay(self, modules: list[str]) -> CheckResult | None:
        with self.slots:
            return self.inner.replay(modules)
