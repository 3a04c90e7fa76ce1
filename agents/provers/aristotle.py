"""Aristotle (Harmonic) through `aristotlelib` 2.x, the last major version that fills Lean sorries.

A job is an Aristotle project: created from a prompt naming the targets and a
tar.gz of the Lean project; its latest task says how it ended; its result
archive holds the project with the sorries it filled.
"""

from __future__ import annotations

import asyncio
import io
import logging
import tarfile
import tempfile
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from agents.provers.base import Phase, Poll, ProverError, Target

T = TypeVar("T")
_DONE = {"COMPLETE": Phase.RETURNED, "COMPLETE_WITH_ERRORS": Phase.RETURNED, "OUT_OF_BUDGET": Phase.RETURNED,
         "FAILED": Phase.FAILED, "CANCELED": Phase.CANCELLED}

PROMPT = """\
Fill in the `sorry` in each of these declarations with a complete proof:
{targets}
Do not change any statement, name or other declaration, and add no axiom."""


def _library() -> ModuleType:
    """aristotlelib, imported once; its import adds a handler to the root logger, which is put back as it was."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    import aristotlelib

    root.handlers[:] = handlers
    root.setLevel(level)
    return aristotlelib


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """The library is async; its calls run on a loop of their own, so a caller inside a loop (the claude-code
    session's tools) can use it too."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class AristotleProver:
    name = "aristotle"

    def __init__(self, api_key: str, base_url: str) -> None:
        self._lib = _library()
        self._key, self._base_url = api_key, base_url.rstrip("/")

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        from aristotlelib import api_request

        api_request.set_api_key(self._key)
        api_request.BASE_URL = self._base_url  # read on every request: the stand-in in tests, a proxy in use
        try:
            return _run(coroutine)
        except (self._lib.AristotleAPIError, ValueError, KeyError, OSError, tarfile.TarError) as e:
            raise ProverError(f"aristotle: {e}") from e

    def submit(self, targets: list[Target], files: dict[str, bytes]) -> str:
        lines = "\n".join(f"- `{t.declaration}` in {t.file}" for t in targets)
        return self._call(self._submit(PROMPT.format(targets=lines), files))

    async def _submit(self, prompt: str, files: dict[str, bytes]) -> str:
        with tempfile.TemporaryDirectory() as tmp:
            archive = Path(tmp) / "project.tar.gz"
            with tarfile.open(archive, "w:gz") as tar:
                for path, data in sorted(files.items()):
                    info = tarfile.TarInfo(path)
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
            project = await self._lib.Project.create(prompt=prompt, tar_file_path=archive,
                                                     public_file_path="project.tar.gz")
        return str(project.project_id)

    def poll(self, job: str) -> Poll:
        return self._call(self._poll(job))

    async def _poll(self, job: str) -> Poll:
        project = await self._lib.Project.from_id(job)
        if project.status != self._lib.ProjectStatus.IDLE:
            return Poll(Phase.RUNNING)
        tasks, _ = await project.get_tasks(limit=1)
        if not tasks:
            return Poll(Phase.RUNNING)
        task = tasks[0]
        phase = _DONE.get(task.status.value, Phase.RUNNING)
        if phase is Phase.RETURNED and not project.has_files:
            phase = Phase.FAILED
        return Poll(phase, f"{task.status.value}: {task.output_summary or ''}".strip().rstrip(":"))

    def fetch(self, job: str) -> dict[str, str]:
        return self._call(self._fetch(job))

    async def _fetch(self, job: str) -> dict[str, str]:
        project = await self._lib.Project.from_id(job)
        with tempfile.TemporaryDirectory() as tmp:
            archive = await project.get_files(destination=Path(tmp) / "result.tar.gz")
            out: dict[str, str] = {}
            with tarfile.open(archive, "r:*") as tar:
                for member in tar.getmembers():
                    if member.isfile() and member.name.endswith(".lean"):
                        data = tar.extractfile(member)
                        if data is not None:
                            out[member.name.removeprefix("./")] = data.read().decode("utf-8", errors="replace")
        return out

    def cancel(self, job: str) -> None:
        self._call(self._cancel(job))

    async def _cancel(self, job: str) -> None:
        project = await self._lib.Project.from_id(job)
        tasks, _ = await project.get_tasks(limit=1)
        for task in tasks:
            await task.cancel()
