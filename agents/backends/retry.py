"""The retry policy of the HTTP backends: a `Transient` failure is tried again, waiting as long as the server's
`retry-after` says and otherwise backing off exponentially with jitter; every retry and every call is logged."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import structlog
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from agents.model import Reply

log = structlog.get_logger()
T = TypeVar("T")


class Transient(Exception):
    """A failure worth another attempt; `summary` is safe to show, `retry_after` the server's requested wait,
    `attempts` how many were made once they are spent."""

    def __init__(self, summary: str, retry_after: float | None = None) -> None:
        super().__init__(summary)
        self.summary = summary
        self.retry_after = retry_after
        self.attempts = 0


class Policy:
    def __init__(self, backend: str, model: str, max_attempts: int, backoff_base_s: float, backoff_max_s: float
                 ) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts counts the first try, so it is at least 1, not {max_attempts}")
        self.backend, self.model, self.max_attempts = backend, model, max_attempts
        self._backoff = wait_random_exponential(multiplier=backoff_base_s, max=backoff_max_s, min=backoff_base_s)

    def run(self, call: Callable[[], T]) -> tuple[T, int]:
        """`call`'s result and the attempts it took; the last `Transient` (with `attempts`) once they are spent."""
        attempts = 0
        retrying = Retrying(stop=stop_after_attempt(self.max_attempts), wait=self._wait,
                            retry=retry_if_exception_type(Transient), before_sleep=self._log_retry, reraise=True)
        try:
            for attempt in retrying:
                with attempt:
                    attempts = attempt.retry_state.attempt_number
                    result = call()
        except Transient as err:
            err.attempts = attempts
            raise
        return result, attempts

    def log_call(self, reply: Reply, attempts: int, streamed: bool, started: float) -> None:
        log.info("model.call", backend=self.backend, model=self.model, attempt=attempts, streamed=streamed,
                 input_tokens=reply.usage.input, output_tokens=reply.usage.output,
                 cache_read_tokens=reply.usage.cache_read, cache_write_tokens=reply.usage.cache_write,
                 stop=str(reply.stop), duration_s=round(time.monotonic() - started, 3))

    def _wait(self, state: RetryCallState) -> float:
        err = state.outcome.exception() if state.outcome else None
        if isinstance(err, Transient) and err.retry_after is not None:
            return err.retry_after
        return float(self._backoff(state))

    def _log_retry(self, state: RetryCallState) -> None:
        err = state.outcome.exception() if state.outcome else None
        log.warning("model.retry", backend=self.backend, model=self.model, attempt=state.attempt_number,
                    error=err.summary if isinstance(err, Transient) else repr(err),
                    wait_s=round(state.next_action.sleep, 3) if state.next_action else None)


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"
