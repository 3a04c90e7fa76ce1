"""The ledger's budget arithmetic and the metering wrapper, on a model that answers with fixed usage."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from agents.config import BudgetConfig
from agents.ledger import Budget, BudgetExceeded, Ledger, Limit
from agents.metered import Metered
from agents.model import Message, Reply, System, ToolResult, ToolSpec
from agents.prices import Price, price_table
from gates.credentials import Secrets
from state.history import Usage


@dataclass
class Fixed:
    """Answers every call with the same usage, under a served name that may differ from the configured one."""

    name: str
    usage: Usage
    served: str = ""

    def send(self, system: System, messages: list[Message], tools: list[ToolSpec] | None = None, *,
             max_tokens: int = 8192) -> Reply:
        return Reply("ok", usage=self.usage, model=self.served or self.name)


def test_the_tightest_limit_binds_and_says_which_it_is() -> None:
    budget = Budget(BudgetConfig(per_cycle_usd=3.0, per_day_usd=10.0, total_usd=100.0), today_usd=8.5,
                    total_usd=50.0)
    assert budget.tightest(0.0) == (Limit.DAY, 1.5)
    assert budget.tightest(2.0) == (Limit.DAY, -0.5)
    assert Budget(BudgetConfig()).tightest(1e9) is None


def test_a_refusal_names_its_limit_and_the_ledger_remembers_it() -> None:
    ledger = Ledger(Budget(BudgetConfig(total_usd=1.0), total_usd=0.9))
    ledger.admit("planner", 0.05)
    with pytest.raises(BudgetExceeded, match=r"the total would reach \$1.10, over \[budget\] total_usd \$1.00") as e:
        ledger.admit("planner", 0.2)
    assert e.value.limit is Limit.TOTAL and ledger.refused is Limit.TOTAL
    assert ledger.headroom() == pytest.approx(0.1)


def test_a_dated_answer_is_priced_under_the_configured_name() -> None:
    ledger = Ledger()
    model = Metered(Fixed("house-model", Usage(input=1_000_000), served="house-model-2026-01-01"), "evaluator",
                    "openai", ledger, {"house-model": Price(input=2.0, output=0.0, cache_read=0.0, cache_write=0.0)})
    model.send(System("s"), [Message("user", "hi")])
    assert ledger.charges[0].cost_usd == pytest.approx(2.0) and ledger.charges[0].model == "house-model-2026-01-01"


def test_the_worst_case_covers_a_prompt_billed_as_a_cache_write() -> None:
    opus = price_table()["claude-opus-4-6"]
    admitted: list[float] = []

    class Recording(Ledger):
        def admit(self, role: str, worst_case_usd: float) -> None:
            admitted.append(worst_case_usd)

    ledger = Recording()
    prompt = "x" * 300_000  # 100k tokens at the estimate's 3 characters a token
    Metered(Fixed("claude-opus-4-6", Usage(cache_write=100_000, output=16_384)), "worker", "anthropic", ledger,
            {}).send(System(""), [Message("user", prompt)], max_tokens=16_384)
    assert ledger.charges[0].cost_usd == pytest.approx((100_000 * opus.cache_write + 16_384 * opus.output) / 1e6)
    assert admitted[0] >= ledger.charges[0].cost_usd  # type: ignore[operator]


def test_every_charge_is_reported_as_it_happens() -> None:
    seen: list[float] = []
    ledger = Ledger(on_charge=lambda spent: seen.append(spent.spent()))
    model = Metered(Fixed("claude-sonnet-4-6", Usage(input=1_000_000)), "planner", "anthropic", ledger, {})
    model.send(System("s"), [Message("user", "a")])
    model.send(System("s"), [Message("user", "b")])
    assert seen == pytest.approx([3.0, 6.0])


def test_no_secret_leaves_in_a_prompt_whatever_carried_it_there() -> None:
    key = "sk-test-Zq9XwV7kP3-a-leaked-key"
    seen: list[str] = []

    @dataclass
    class Recording:
        name: str = "house-model"

        def send(self, system: System, messages: list[Message], tools: list[ToolSpec] | None = None, *,
                 max_tokens: int = 8192) -> Reply:
            seen.extend([system.stable, system.volatile, *(m.text for m in messages),
                         *(r.content for m in messages for r in m.tool_results)])
            return Reply("ok")

    model = Metered(Recording(), "evaluator", "anthropic", Ledger(), {}, Secrets({"ANTHROPIC_API_KEY": key}))
    model.send(System(f"rules {key}", key), [Message("user", f"## Diff\n+ leak = \"{key}\""),
                                            Message("user", tool_results=(ToolResult("1", key),))])
    sent = [text for text in seen if text]
    assert len(sent) == 4 and not any(key in text for text in sent)
    assert all("[redacted: ANTHROPIC_API_KEY]" in text for text in sent)
