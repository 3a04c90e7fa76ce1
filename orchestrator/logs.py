"""structlog, configured once at the entry point: readable on a terminal, JSON lines otherwise, on stderr.

Every event passes through the redaction of this process's credentials (`gates/credentials.py`): a value that
slipped into a message (a compiler's output, an error quoting a URL) is logged as `[redacted: NAME]`. At the
entry point those are the credential-looking variables; once the configuration is read, `redact_also` adds the
key variables it names, whatever they are called (`api_key_env = "MY_LLM"`): the same `Secrets` the tools,
the model calls and the secrets gate use.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

from gates.credentials import Secrets


def configure(*, json_lines: bool | None = None, level: int = logging.INFO) -> None:
    """`json_lines` None: JSON unless stderr is a terminal. Standard output stays for the commands' own output."""
    as_json = not sys.stderr.isatty() if json_lines is None else json_lines
    _REDACT.secrets = Secrets.of(os.environ, _REDACT.secrets.values)
    renderer: structlog.typing.Processor = (structlog.processors.JSONRenderer() if as_json
                                            else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()))
    structlog.configure(
        processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso", utc=True),
                    _REDACT, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(_Stderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )


class _Stderr:
    """Whatever `sys.stderr` is when a line is written (a test runner swaps it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def redact_also(secrets: Secrets) -> None:
    """From now on, the logs redact `secrets`' values too (those the configuration names)."""
    _REDACT.secrets = Secrets({**_REDACT.secrets.values, **secrets.values})


class Redact:
    """A processor replacing the secrets' values in every string of an event."""

    def __init__(self, secrets: Secrets) -> None:
        self.secrets = secrets

    def __call__(self, logger: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        if self.secrets.values:
            for key, value in event.items():
                if isinstance(value, str):
                    event[key] = self.secrets.redact(value)
                elif isinstance(value, list | tuple | dict):
                    event[key] = self.secrets.redact(repr(value)) if self.secrets.found(repr(value)) else value
        return event


_REDACT = Redact(Secrets())
