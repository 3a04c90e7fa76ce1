"""A remote item's result as the coordinator reads it back: a file from a machine that ran Worker-written code, so
every charge in it is bounded before the ledger adds it, and it must be the result of the item it is read for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.ledger import Charge
from orchestrator.remote import PATCH, RESULT, Result, load_result, save_result
from state.history import Usage


def _written(folder: Path, cost: float | None, **usage: int) -> Path:
    """An honest result, then its charge set as a forging job would write it (JSON allows NaN and Infinity)."""
    save_result(folder, Result(b"", None, [Charge("worker", "anthropic", "m", Usage(input=10), 0.5)],
                               item="hard", base="b" * 40))
    data = json.loads((folder / RESULT).read_text())
    data["charges"][0]["cost_usd"] = cost
    data["charges"][0]["usage"] |= usage
    (folder / RESULT).write_text(json.dumps(data))
    return folder


@pytest.mark.parametrize("cost", [-0.01, -1e9, float("nan"), float("inf"), float("-inf")])
def test_a_negative_or_non_finite_charge_refuses_the_result(tmp_path: Path, cost: float) -> None:
    # A negative charge would refund the round's spend; a non-finite one poisons every sum after it.
    with pytest.raises(ValueError, match="charges a negative or unbounded spend"):
        load_result(_written(tmp_path, cost), "hard", "b" * 40)


@pytest.mark.parametrize("field", ["input", "output", "cache_read", "cache_write"])
def test_negative_tokens_refuse_the_result(tmp_path: Path, field: str) -> None:
    with pytest.raises(ValueError, match="charges a negative or unbounded spend"):
        load_result(_written(tmp_path, 0.5, **{field: -1}), "hard", "b" * 40)


@pytest.mark.parametrize("cost", [0.0, 0.5, None])
def test_a_bounded_charge_is_read_as_written(tmp_path: Path, cost: float | None) -> None:
    result = load_result(_written(tmp_path, cost), "hard", "b" * 40)
    assert [(c.cost_usd, c.usage.input) for c in result.charges] == [(cost, 10)]


def test_a_result_is_read_only_for_its_own_item_and_base(tmp_path: Path) -> None:
    folder = _written(tmp_path, 0.5)
    with pytest.raises(ValueError, match="its result is for item 'hard'"):
        load_result(folder, "other", "b" * 40)
    with pytest.raises(ValueError, match="not for 'hard' at cccccccccccc"):
        load_result(folder, "hard", "c" * 40)


def test_a_result_through_a_link_or_past_its_bound_is_refused(tmp_path: Path) -> None:
    folder = _written(tmp_path / "job", 0.5)
    (tmp_path / "elsewhere.json").write_bytes((folder / RESULT).read_bytes())
    (folder / RESULT).unlink()
    (folder / RESULT).symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(ValueError, match=r"no result\.json as a regular file"):
        load_result(folder, "hard", "b" * 40)
    (folder / RESULT).unlink()
    (folder / RESULT).write_bytes((tmp_path / "elsewhere.json").read_bytes())
    with (folder / PATCH).open("wb") as f:
        f.truncate((64 << 20) + 1)
    with pytest.raises(ValueError, match="larger than the bound"):
        load_result(folder, "hard", "b" * 40)
