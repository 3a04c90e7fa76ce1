"""The cost estimate of a session, which the dry run prints."""

from __future__ import annotations

import pytest

from agents.prices import TURN_OUTPUT, TURN_TOKENS, WINDOW, Price, session_cost

UNIT = {"m": Price(input=1.0, output=1.0, cache_read=1.0, cache_write=1.0)}


def test_each_turn_reads_the_session_so_far_from_the_cache() -> None:
    reads = 1_000 + (1_000 + TURN_TOKENS)
    writes = 1_000 + 2 * TURN_TOKENS
    assert session_cost("m", 1_000, 2, UNIT) == pytest.approx((reads + writes + 2 * TURN_OUTPUT) / 1e6)


def test_a_turn_reads_no_more_than_the_window() -> None:
    long = session_cost("m", WINDOW, 3, UNIT)
    assert long == pytest.approx((3 * WINDOW + WINDOW + 3 * TURN_TOKENS + 3 * TURN_OUTPUT) / 1e6)


def test_an_unpriced_model_has_no_estimate() -> None:
    assert session_cost("nobody-priced-this", 1_000, 2) is None
