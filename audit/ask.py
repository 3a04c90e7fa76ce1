"""Asking Lean `exact?` about many theorems: at most `workers` Lean runs at once, each within a time limit, every
answer kept as it arrives, so a run stopped (Ctrl-C, a budget spent) resumes where it was.

An answer depends on the theorem's file up to it, on every project file that file imports (transitively), on the
toolchain and the dependencies, and on nothing else Lean reads: its key is the digest of the probe's text (the nonce
left out), of its imports' closure keys (`gates.listing.closure_keys`) and of the chain they are keyed under. A
found proof or a "not found" is kept for good; a timeout only for runs with a limit no longer than the one it ran
out of; an error (the file not compiling, Lean not running) never, so it is asked again.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import structlog
from pydantic import BaseModel, ConfigDict

from audit import exact
from audit.exact import Answer, Kind
from gates.census import Census
from gates.diagnostics import CheckResult
from gates.env import header, printed
from gates.header import read_header
from gates.index import Decl
from gates.listing import closure_keys
from state.atomic import read_kept, write_atomic

log = structlog.get_logger()
FORMAT = 1  # of the cached answers and of the probe: answers of another format are asked again
KEPT = 50_000  # answers the cache keeps; the oldest go first


class Prober(Protocol):
    def probe(self, text: str, timeout_s: float | None = None) -> CheckResult: ...


@dataclass(frozen=True)
class Target:
    """A proved theorem of the project, as its file writes it."""

    name: str
    path: str
    decl: Decl

    @property
    def line(self) -> int:
        return self.decl.line

    def text(self, nonce: str) -> str:
        assert self.decl.source is not None
        return exact.probe(self.decl.source.text, self.decl, nonce)


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: int = FORMAT
    answer: Answer
    limit_s: float


@dataclass
class Cache:
    """Answers by key, one JSON file each."""

    folder: Path

    def get(self, key: str, limit_s: float) -> Answer | None:
        entry = read_kept(self.folder / f"{key}.json", Entry)
        if entry is None or entry.format != FORMAT or entry.answer.kind is Kind.ERROR:
            return None
        if entry.answer.kind is Kind.TIMEOUT and entry.limit_s < limit_s:
            return None  # it might finish within the longer limit asked for now
        return entry.answer

    def put(self, key: str, answer: Answer, limit_s: float) -> None:
        if answer.kind is not Kind.ERROR:
            write_atomic(self.folder / f"{key}.json", Entry(answer=answer, limit_s=limit_s).model_dump_json())

    def trim(self, kept: int = KEPT) -> None:
        try:
            entries = [e for e in os.scandir(self.folder) if e.name.endswith(".json")]
        except OSError:
            return
        if len(entries) > kept:
            entries.sort(key=lambda e: e.stat().st_mtime)
            for e in entries[:len(entries) - kept]:
                Path(e.path).unlink(missing_ok=True)


def keys(targets: Iterable[Target], census: Census, chain: str) -> dict[str, str]:
    """Per theorem: the digest of its probe's text, of its file's imports' closures and of `chain`."""
    closures = closure_keys(census, chain)
    imports = census.graph.imports
    out: dict[str, str] = {}
    for t in targets:
        parts = [f"exact? format {FORMAT}", chain, t.text(exact.NONCE),
                 *sorted(closures.get(q, q) for q in imports.get(t.path, ()))]
        out[t.name] = hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()[:32]
    return out


def imports_of(targets: Iterable[Target]) -> str:
    """A file importing what every theorem's file imports: built once, within the build's time limit, before the
    probes (each probe's `check_file` would otherwise build what is stale within the probe's own limit, and a
    dependency that does not build would cost every probe its whole limit)."""
    modules = {printed(m.split(".")) for t in targets if t.decl.source is not None
               for m in read_header(t.decl.source.text).imports}
    return header(modules) if modules else ""


@dataclass
class Asked:
    answers: dict[str, Answer] = field(default_factory=dict)  # theorem → Lean's answer
    cached: set[str] = field(default_factory=set)  # of those, the ones the cache held
    unasked: list[str] = field(default_factory=list)  # not asked: the budget ran out, or the run was stopped
    interrupted: bool = False
    seconds: float = 0.0  # wall clock of the asking


def ask(targets: Sequence[Target], prober: Prober, cache: Cache | None, keyed: dict[str, str], *, limit_s: float,
        workers: int, budget_s: float | None = None, progress: Callable[[int], None] | None = None,
        clock: Callable[[], float] = time.monotonic) -> Asked:
    """Lean's answer about each of `targets`: the cache's, else asked, `workers` at a time, each within `limit_s`;
    none asked once `budget_s` has passed (those left are `unasked`). Ctrl-C stops the asking: the probes running
    finish (within `limit_s`), their answers are kept, and the rest are `unasked`."""
    start = clock()
    out = Asked()
    todo: list[Target] = []
    for t in targets:
        found = cache.get(keyed[t.name], limit_s) if cache is not None else None
        if found is None:
            todo.append(t)
        else:
            out.answers[t.name] = found
            out.cached.add(t.name)
    if progress is not None and out.cached:
        progress(len(out.cached))
    if todo and (text := imports_of(todo)):
        built = prober.probe(text)  # the build's own time limit: Lake may build much here
        if not built.ok:
            failed = Answer(kind=Kind.ERROR, message=_built_failure(built))
            for t in todo:
                out.answers[t.name] = failed
            if progress is not None:
                progress(len(todo))
            out.seconds = clock() - start
            return out
    stop = threading.Event()
    lock = threading.Lock()

    def one(t: Target) -> Answer | None:
        if stop.is_set() or (budget_s is not None and clock() - start > budget_s):
            return None
        nonce = secrets.token_hex(12)
        answer = exact.read(prober.probe(t.text(nonce), limit_s), nonce)
        if cache is not None:
            with lock:
                cache.put(keyed[t.name], answer, limit_s)
        log.info("mathlib.asked", declaration=t.name, kind=str(answer.kind), seconds=answer.seconds)
        return answer

    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="exact")
    futures: dict[Future[Answer | None], Target] = {pool.submit(one, t): t for t in todo}
    try:
        for f in as_completed(futures):
            _take(out, futures[f], f)
            if progress is not None:
                progress(1)
    except KeyboardInterrupt:
        stop.set()
        out.interrupted = True
        pool.shutdown(wait=True, cancel_futures=True)  # those running finish within the limit; their answers stay
        for f, t in futures.items():
            if t.name not in out.answers and t.name not in out.unasked:
                _take(out, t, f)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if cache is not None:
            cache.trim()
    out.seconds = clock() - start
    return out


def _take(out: Asked, t: Target, f: Future[Answer | None]) -> None:
    answer = f.result() if f.done() and not f.cancelled() else None
    if answer is None:
        out.unasked.append(t.name)
    else:
        out.answers[t.name] = answer


def _built_failure(result: CheckResult) -> str:
    status = "timed out" if result.exit_code is None else f"exited with {result.exit_code}"
    tail = "\n".join(result.output.strip().splitlines()[-12:])
    return exact.clip(f"the theorems' imports do not build (`{result.command}` {status}):\n{tail}")
