"""What tokens cost: one price table (prices.toml), by model."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources

from pydantic import BaseModel

from state.history import Usage


class Price(BaseModel):
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float


@cache
def price_table() -> dict[str, Price]:
    raw = tomllib.loads(resources.files("agents").joinpath("prices.toml").read_text(encoding="utf-8"))
    return {name: Price.model_validate(p) for name, p in raw["models"].items()}


def cost(model: str, usage: Usage, overrides: dict[str, Price] | None = None) -> float | None:
    """The price of `usage` on `model` (a price in `overrides` wins), or None when it is unknown."""
    price = (overrides or {}).get(model) or price_table().get(model)
    if price is None:
        return None
    return (usage.input * price.input + usage.output * price.output + usage.cache_read * price.cache_read
            + usage.cache_write * price.cache_write) / 1_000_000
