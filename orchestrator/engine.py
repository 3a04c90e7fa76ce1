"""Where a round's items are worked: an engine takes an item, says when it is done, and hands back its result.

The coordinator keeps everything that lands: the merge queue re-runs the gates on the branch as it is, and only
it commits and pushes; an engine never does. `LocalEngine` runs items on threads of this process (the work is
model calls and compiles, both waiting on other processes), bounded by `[parallel] workers`; its result is the
item's cycle, worked in place. `SubmititEngine` (`remote = True`) runs each item as a job of its own through
submitit (SLURM, or subprocesses here): its job is `remote.work` on a `remote.Job`, which writes the result as
files into a folder of its own, and its result is that folder, which the coordinator reads as bounded data
(`remote.load_result`), then applies and gates again. What the job's function returns is dropped in the job:
submitit would pickle it, and loading a pickle runs whatever code its writer chose.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from gates.base import CheckResult, Compiler
from orchestrator.config import SubmititConfig
from state.errors import UsageError

T = TypeVar("T")
POLL_S = 0.5  # between looks at a job that was collected before it ended
LOG_TAIL = 4000  # bytes of a job's log that say why it wrote no result
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


class Engine(Results[T_co], Protocol[T_co]):
    # Whether its jobs run in another process: then each is `remote.work` of a `remote.Job` (picklable), called
    # with the folder to write its result into, and its result is that folder.
    remote: bool

    def submit(self, item: str, job: Callable[..., Any]) -> str:
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


class SubmititEngine:
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
        self._folder = folder if folder.is_absolute() else Path.home() / folder
        self._executor = submitit.AutoExecutor(folder=self._folder / "%j", cluster=cfg.cluster)
        params: dict[str, Any] = {"name": "autoformalize-item", "timeout_min": cfg.time_min,
                                  "cpus_per_task": cfg.cpus, "mem_gb": cfg.mem_gb}
        if cfg.partition:
            params["slurm_partition"] = cfg.partition
        if cfg.extra:
            params["slurm_additional_parameters"] = dict(cfg.extra)
        self._executor.update_parameters(**params)
        self._jobs: dict[str, tuple[Any, Path]] = {}

    def submit(self, item: str, job: Callable[[Path], object]) -> str:
        """`job(out)` as a job of its own, `out` a new folder under the configured one (a shared file system on a
        cluster) that the job writes its result into."""
        out = self._folder / "results" / uuid.uuid4().hex
        submitted = self._executor.submit(_deliver, job, out)
        ticket = f"{submitted.job_id}:{item}"
        self._jobs[ticket] = (submitted, out)
        return ticket

    def poll(self, ticket: str) -> bool:
        return bool(self._jobs[ticket][0].done())

    def collect(self, ticket: str) -> Path:
        """The folder the item's job wrote its result into, once it ended; ValueError, with the end of its log,
        when it wrote none (killed, out of time or memory, or failed before it could)."""
        job, out = self._jobs[ticket]
        while not job.done():
            time.sleep(POLL_S)
        if not out.is_dir() or out.is_symlink():
            raise ValueError(f"job {job.job_id} ended without writing its result; the end of its log "
                             f"({job.paths.stderr}):\n{_tail(Path(job.paths.stderr))}")
        return out

    def close(self) -> None:
        """Cancel the jobs still running: a round stopped leaves none behind."""
        for job, _ in self._jobs.values():
            if not job.done():
                job.cancel(check=False)


def _deliver(job: Callable[[Path], object], out: Path) -> None:
    """In a submitit job's process: the job writes its result into `out`; what it returns is dropped here, so
    submitit pickles nothing of it for the coordinator."""
    job(out)


def _tail(path: Path, size: int = LOG_TAIL) -> str:
    """The last `size` bytes of the text file `path`, as text; a note when there is none."""
    try:
        with path.open("rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - size))
            return f.read().decode("utf-8", "replace").strip() or "(empty)"
    except OSError as e:
        return f"(none: {e.strerror or e})"


def engine_of(workers: int, cfg: SubmititConfig, name: str) -> LocalEngine[Any] | SubmititEngine:
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

    def probe(self, text: str, timeout_s: float | None = None) -> CheckResult:
        with self.slots:
            return self.inner.probe(text, timeout_s)

    def read(self, text: str, timeout_s: float | None = None) -> CheckResult:
        with self.slots:
            return self.inner.read(text, timeout_s)

    def compile(self, text: str, timeout_s: float | None = None) -> tuple[str, CheckResult]:
        with self.slots:
            return self.inner.compile(text, timeout_s)

    def discard(self, module: str) -> None:
        self.inner.discard(module)

    def replay(self, modules: list[str]) -> CheckResult | None:
        with self.slots:
            return self.inner.replay(modules)
