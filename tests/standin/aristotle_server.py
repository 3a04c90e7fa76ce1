"""A scripted stand-in for Aristotle's HTTP API (version 3, as aristotlelib 2.x speaks it), for the real client.

A real HTTP server on 127.0.0.1 (ephemeral port, background thread). Every
request must carry the `X-API-Key` it was given (else 401 with the API's
`{"detail": …}` body). It serves:

- `POST /api/v3/project`: multipart, a `body` field of JSON (`prompt`,
  `agent_questions_setting`) and the `input` tar.gz; creates a project whose
  one task is IN_PROGRESS, answers the project;
- `GET /api/v3/project/{id}`: the project (`status` 1 running, 2 idle);
- `GET /api/v3/project/{id}/tasks`: `{"agent_tasks": [...], "pagination_key": null}`;
- `GET /api/v3/project/{id}/result`: the result archive, a tar.gz of the
  returned files under a top folder, as Aristotle names its archives;
- `POST /api/v3/task/{id}/cancel`: cancels the task, answers it.

A test ends a job with `finish(job, files)` or `fail(job)`; `requests` records
every request (method, path, headers) and `jobs` what each submission held.
"""

from __future__ import annotations

import io
import itertools
import json
import re
import tarfile
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

_ids = itertools.count(1)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]


@dataclass
class Job:
    id: str
    task_id: str
    prompt: str
    files: dict[str, bytes]  # the submitted archive's content
    status: str = "IN_PROGRESS"
    result: dict[str, str] | None = None
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat())

    def project(self) -> dict[str, Any]:
        running = self.status in ("QUEUED", "IN_PROGRESS")
        return {"project_id": self.id, "created_at": self.created, "last_updated": self.created,
                "description": self.prompt[:80], "status": 1 if running else 2, "has_input": True,
                "has_files": self.result is not None}

    def task(self) -> dict[str, Any]:
        return {"project_id": self.id, "agent_task_id": self.task_id, "status": self.status,
                "created_at": self.created, "last_updated_at": self.created, "percent_complete": None,
                "file_name": "project.tar.gz", "description": self.prompt[:80],
                "output_summary": f"stand-in task {self.status.lower()}"}


class AristotleStandin:
    def __init__(self, api_key: str) -> None:
        self.api_key = api_key
        self.jobs: dict[str, Job] = {}
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/api/v3"

    def __enter__(self) -> AristotleStandin:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
                 ) -> None:
        self._server.shutdown()
        self._server.server_close()

    def finish(self, job: str, files: dict[str, str], status: str = "COMPLETE") -> None:
        with self._lock:
            self.jobs[job].status, self.jobs[job].result = status, files

    def fail(self, job: str) -> None:
        with self._lock:
            self.jobs[job].status = "FAILED"

    def paths(self, method: str) -> list[str]:
        return [r.path for r in self.requests if r.method == method]

    # -- serving -------------------------------------------------------------

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str, bytes]:
        self.requests.append(RecordedRequest(method, path, headers))
        if headers.get("x-api-key") != self.api_key:
            return _json(401, {"detail": "Invalid API key"})
        route = path.split("?")[0].removeprefix("/api/v3")
        with self._lock:
            if method == "POST" and route == "/project":
                return self._create(headers.get("content-type", ""), body)
            if m := re.fullmatch(r"/task/([\w-]+)/cancel", route):
                job = next((j for j in self.jobs.values() if j.task_id == m.group(1)), None)
                if job is None:
                    return _json(404, {"detail": "Task not found"})
                if job.status in ("QUEUED", "IN_PROGRESS"):
                    job.status = "CANCELED"
                return _json(200, job.task())
            m = re.fullmatch(r"/project/([\w-]+)(/tasks|/result)?", route)
            job = self.jobs.get(m.group(1)) if m else None
            if m is None or job is None or method != "GET":
                return _json(404, {"detail": "Not found"})
            if m.group(2) == "/tasks":
                return _json(200, {"agent_tasks": [job.task()], "pagination_key": None})
            if m.group(2) == "/result":
                if job.result is None:
                    return _json(404, {"detail": "Project has no result"})
                return 200, "application/gzip", _archive(job.result)
            return _json(200, job.project())

    def _create(self, content_type: str, body: bytes) -> tuple[int, str, bytes]:
        message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + body)
        fields = {part.get_param("name", header="content-disposition"): part.get_payload(decode=True)
                  for part in message.iter_parts()}
        if "body" not in fields or "input" not in fields:
            return _json(422, {"detail": "body and input are required"})
        prompt = json.loads(fields["body"])["prompt"]
        with tarfile.open(fileobj=io.BytesIO(fields["input"]), mode="r:gz") as tar:
            files = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]
        n = next(_ids)
        job = Job(f"prj-{n:04d}", f"task-{n:04d}", prompt, files)
        self.jobs[job.id] = job
        return _json(200, job.project())


def _json(status: int, data: Any) -> tuple[int, str, bytes]:
    return status, "application/json", json.dumps(data).encode()


def _archive(files: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"project_aristotle/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _handler(standin: AristotleStandin) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, kind, payload = standin.answer(self.command, self.path, headers, body)
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
