"""Wrappers around any `Model`: metering into the ledger (with the budget guard), and fallback endpoints."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

import structlog

from agents.ledger import Charge, Ledger
from agents.model import Message, Model, ModelUnavailable, Reply, System, ToolSpec
from agents.prices import Price, cost, price_table
from gates.credentials import Secrets

log = structlog.get_logger()
CHARS_PER_TOKEN = 3  # a generous estimate, so the budget guard errs on the safe side


@dataclass
class Metered:
    """Charges every call of `inner` to `role` in `ledger`, refusing one whose worst case crosses a budget; no
    secret's value leaves in a prompt, whichever file, diff or tool result carried it there."""

    inner: Model
    role: str
    backend: str
    ledger: Ledger
    prices: dict[str, Price]
    secrets: Secrets = field(default_factory=Secrets)

    @property
    def name(self) -> str:
        return self.inner.name

    def send(self, system: System, messages: list[Message], tools: list[ToolSpec] | None = None, *,
             max_tokens: int = 8192) -> Reply:
        self.ledger.admit(self.role, self._worst_case(system, messages, tools, max_tokens))
        if self.secrets.values:
            system, messages = self._redacted(system, messages)
        reply = self.inner.send(system, messages, tools, max_tokens=max_tokens)
        served = reply.model or self.inner.name
        price = reply.cost_usd
        if price is None:  # priced by the configured name: servers answer with dated or resolved ids
            price = cost(self.inner.name, reply.usage, self.prices)
        if price is None and served != self.inner.name:
            price = cost(served, reply.usage, self.prices)
        self.ledger.add(Charge(self.role, self.backend, served, reply.usage, price))
        return reply

    def _redacted(self, system: System, messages: list[Message]) -> tuple[System, list[Message]]:
        redact = self.secrets.redact
        return (System(redact(system.stable), redact(system.volatile)),
                [replace(m, text=redact(m.text),
                         tool_results=tuple(replace(r, content=redact(r.content)) for r in m.tool_results))
                 for m in messages])

    def _worst_case(self, system: System, messages: list[Message], tools: list[ToolSpec] | None,
                    max_tokens: int) -> float:
        """The call's cost if nothing were cached and every output token were used; 0 for an unpriced model."""
        price = self.prices.get(self.inner.name) or price_table().get(self.inner.name)
        if price is None:
            return 0.0
        chars = len(system.stable) + len(system.volatile) + sum(
            len(m.text) + sum(len(r.content) for r in m.tool_results) + sum(len(json.dumps(c.arguments))
                                                                         for c in m.tool_calls)
            for m in messages) + sum(len(t.description) + len(json.dumps(t.input_schema)) for t in tools or [])
        # A cold prompt cache bills the prompt as a cache write, dearer than plain input.
        return (chars / CHARS_PER_TOKEN * max(price.input, price.cache_write) + max_tokens * price.output) / 1_000_000


@dataclass
class Fallback:
    """The first of `models` that answers: one still rate-limited or overloaded after its retries hands the
    call to the next."""

    models: list[Model]

    @property
    def name(self) -> str:
        return self.models[0].name

    def send(self, system: System, messages: list[Message], tools: list[ToolSpec] | None = None, *,
             max_tokens: int = 8192) -> Reply:
        last: ModelUnavailable | None = None
        for model in self.models:
            try:
                return model.send(system, messages, tools, max_tokens=max_tokens)
            except ModelUnavailable as e:
                log.warning("model.fallback", unavailable=model.name, error=str(e)[:300])
                last = e
        assert last is not None
        raise last
