"""What tokens cost: one price table (prices.toml), by model."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

from pydantic import BaseModel

from state.history import Usage


class Price(BaseModel):
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float


DEFAULT_WINDOW = 32_768  # for a model of unknown window: what the smaller local models serve


@cache
def _table() -> dict[str, Any]:
    return tomllib.loads(resources.files("agents").joinpath("prices.toml").read_text(encoding="utf-8"))


def price_table() -> dict[str, Price]:
    return {name: Price.model_validate(p) for name, p in _table()["models"].items()}


def window_of(model: str, configured: int | None = None) -> int:
    """The model's context window in tokens: as configured, else from the table, else `DEFAULT_WINDOW`."""
    return configured or int(_table().get("windows", {}).get(model, DEFAULT_WINDOW))


def cost(model: str, usage: Usage, overrides: dict[str, Price] | None = None) -> float | None:
    """The price of `usage` on `model` (a price in `overrides` wins), or None when it is unknown."""
    price = (overrides or {}).get(model) or price_table().get(model)
    if price is None:
        return None
    return (usage.input * price.input + usage.output * price.output + usage.cache_read * price.cache_read
            + usage.cache_write * price.cache_write) / 1_000_000


# A Worker turn adds a tool call and its result to the conversation; the whole conversation is read again on the
# next turn, from the prompt cache. Figures from the reference run: 5.4 B of its 5.73 B tokens were cache reads.
TURN_TOKENS = 2_500  # what one turn adds: the model's output and a tool's result
TURN_OUTPUT = 400  # of which the model wrote
WINDOW = 200_000  # a session never reads more than its context window per turn


def session_cost(model: str, prompt_tokens: int, turns: int, overrides: dict[str, Price] | None = None
                 ) -> float | None:
    """What a session of `turns` turns costs, estimated: each turn reads the conversation so far from the cache
    (up to the window), writes what it adds to the cache, and outputs `TURN_OUTPUT` tokens."""
    reads = sum(min(prompt_tokens + k * TURN_TOKENS, WINDOW) for k in range(turns))
    usage = Usage(input=0, output=turns * TURN_OUTPUT, cache_read=reads,
                  cache_write=prompt_tokens + turns * TURN_TOKENS)
    return cost(model, usage, overrides)
