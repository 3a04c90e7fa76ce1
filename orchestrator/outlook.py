"""The difficulty model and the forecast as the commands and the cycle use them, from the configuration.

`estimate_for` fits `[difficulty] method` on the history and the tree with the Worker's model and its hard model;
`forecast_for` adds what a cycle costs (recent records; the hard model's price beside the Worker's usual one) and
what the total budget has left. `hard_targets` says which open targets go to the external prover, `brief` what
the Planner is shown of them.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.prices import session_cost
from difficulty.estimate import Estimate, Target, estimate
from difficulty.forecast import Forecast, forecast
from difficulty.simulate import Spend
from gates.census import Census
from gates.chosen import shown
from orchestrator.config import Config
from state.history import HistoryRecord
from state.prover_jobs import ProverJobs

# A typical Worker session, to set the hard model's price beside the usual one (agents.prices.session_cost).
TYPICAL_PROMPT = 20_000
TYPICAL_TURNS = 20


def estimate_for(config: Config, records: Sequence[HistoryRecord], tree: Census) -> Estimate:
    worker = config.agents.worker
    return estimate(records, tree, config.project.lean_roots, config.difficulty, worker.model, worker.hard_model)


def spend_for(config: Config, est: Estimate) -> Spend | None:
    """What a cycle costs, from the recent records with a known cost; None without one."""
    if not est.attempts.costs:
        return None
    ratio = 1.0
    hard = config.agents.worker.hard_model
    if hard:
        usual = session_cost(config.agents.worker.model, TYPICAL_PROMPT, TYPICAL_TURNS, config.prices)
        other = session_cost(hard, TYPICAL_PROMPT, TYPICAL_TURNS, config.prices)
        ratio = other / usual if usual and other is not None else 1.0
    return Spend(est.attempts.costs, ratio)


def left_usd(config: Config, records: Sequence[HistoryRecord]) -> float | None:
    """What `[budget] total_usd` has left, or None without one."""
    total = config.budget.total_usd
    return None if total is None else max(0.0, total - sum(r.spent_usd for r in records))


def forecast_for(config: Config, records: Sequence[HistoryRecord], tree: Census,
                 est: Estimate | None = None) -> Forecast:
    est = est or estimate_for(config, records, tree)
    return forecast(est, config.difficulty, spend_for(config, est), left_usd(config, records))


def hard_targets(est: Estimate, jobs: ProverJobs, config: Config) -> list[str]:
    """The open targets to send to the external prover: `[difficulty] prover_after` failed attempts since one last
    went to it (or ever), a chance below `prover_below_p` at the next attempt, and no open job holding it."""
    after = config.difficulty.prover_after
    if after is None:
        return []
    held = {t.declaration for j in jobs.jobs if j.open for t in j.targets}
    sent: dict[str, int] = {}
    for j in jobs.jobs:
        for t in j.targets:
            sent[t.declaration] = max(sent.get(t.declaration, 0), j.submitted_cycle)
    return [t.declaration for t in est.tried()  # `after` is at least one failure of its own
            if t.declaration not in held and t.p_next < config.difficulty.prover_below_p
            and est.attempts.failures_since(t.declaration, sent.get(t.declaration, 0)) >= after]


def cost_per_attempt(est: Estimate) -> float | None:
    """What one attempt costs: the median recent cycle's cost over the targets an aiming cycle takes."""
    costs = sorted(c for c, _ in est.attempts.costs)
    if not costs:
        return None
    sizes = est.attempts.sizes or [1]
    return costs[len(costs) // 2] / (sum(sizes) / len(sizes))


SHOWN = 15  # candidate targets the Planner is shown


def brief(est: Estimate, config: Config) -> tuple[str, str]:
    """The Planner's "Difficulty" section: what the figures mean and what the loop does with them, in the
    orchestrator's words (no name a Worker chose), and the candidate targets as data — most expected closes per
    dollar first (most likely to close where no cycle's cost is known) — each name rendered by `shown`."""
    if not est.open:
        return "", ""
    per = cost_per_attempt(est)
    ratio = spend.hard_ratio if (spend := spend_for(config, est)) is not None else 1.0
    d = config.difficulty
    head = (f"Fitted on {sum(len(t) for t in est.attempts.own.values())} attempts recorded in "
            f"{est.attempts.cycles} cycles ({est.method}). difficulty: the chance an attempt by a Worker of average "
            f"ability fails; p_next: the chance the next attempt, by {est.model}, closes it"
            + (f" ({est.hard_model} works the targets harder than {d.hard_above:g}, marked hard)" if est.hard_model
               else "")
            + (f"; per $: closes to expect per dollar, at ${per:.2f} an attempt (a recent cycle's median cost over "
               "the targets it took)" if per else "; no cycle's cost is known yet")
            + ". Aim where closing is neither certain nor hopeless and a dollar buys most."
            + (f" A target whose p_next is below {d.prover_below_p:g} after {d.prover_after} failed attempts goes "
               "to the external prover at the start of a cycle." if d.prover_after else ""))

    usual, hard = (per, per * ratio) if per else (1.0, 1.0)

    def value(t: Target) -> float:
        return t.p_next / (hard if t.hard else usual)

    ranked = est.ranked(SHOWN, key=lambda t: (-value(t), t.declaration))
    rows = [f"- {shown(t.declaration)} ({shown(t.file)}): difficulty {t.difficulty:.2f}, {t.attempts} attempts, "
            f"p_next {t.p_next:.2f}" + (" (hard)" if t.hard else "") + (f", {value(t):.3f} per $" if per else "")
            for t in ranked]
    if len(est.open) > SHOWN:
        rows.append(f"- and {len(est.open) - SHOWN} more open targets")
    return head, "\n".join(rows)
