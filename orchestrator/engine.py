"""Where a round's items are worked: an engine takes an item, says when it is done, and hands back its result
(the Worker's change as a scratch commit of the shared object store, its session and the gates' verdicts).

The coordinator keeps everything that lands: the merge queue re-runs the gates on the branch as it is, and only
it commits and pushes; an engine never does. `LocalEngine` runs items on threads of this process (the work is
model calls and compiles, both waiting on other processes), bounded by `[parallel] workers`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, Protocol, TypeVar

from gates.base import CheckResult, Compiler

T = TypeVar("T")


class Engine(Protocol[T]):
    name: str

    def submit(self, item: str, job: Callable[[], T]) -> str:
        """Start working `item`; a ticket to poll and collect it by."""
        ...

    def poll(self, ticket: str) -> bool:
        """Whether the item is done (worked, or failed)."""
        ...

    def collect(self, ticket: str) -> T:
        """The item's result, once done (waiting for it if not); raises what working it raised."""
        ...

    def close(self) -> None: ...


class LocalEngine(Generic[T]):
    name = "local"

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
