"""structlog, configured once at the entry point: readable on a terminal, JSON lines otherwise, on stderr."""

from __future__ import annotations

import logging
import sys

import structlog


def configure(*, json_lines: bool | None = None, level: int = logging.INFO) -> None:
    """`json_lines` None: JSON unless stderr is a terminal. Standard output stays for the commands' own output."""
    as_json = not sys.stderr.isatty() if json_lines is None else json_lines
    renderer: structlog.typing.Processor = (structlog.processors.JSONRenderer() if as_json
                                            else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()))
    structlog.configure(
        processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso", utc=True),
                    renderer],
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
