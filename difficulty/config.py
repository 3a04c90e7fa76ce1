"""[difficulty]: how hard each open target is estimated to be, and what the loop does with it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class DifficultyConfig(BaseModel):
    """Each cycle is an attempt by the Worker's model on the declarations it aimed at: the chance that an attempt
    by model m closes target i is fitted as σ(θ_m − b_i) from the run's history (`autoformalize forecast`)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    method: Literal["irt", "paper"] = "irt"
    """"irt": one ability per model and one difficulty per target, fitted together, with priors from the chapter and
    the statement (its size, the definitions it names, the declarations using it); a discrimination per target
    once three models have attempted it. "paper": the psychometric paper's formulas (success rates penalised,
    normalised to [0, 1]), for comparison."""
    prover_after: int | None = Field(default=5, ge=1)
    """A target that failed this many attempts since it last went to the external prover (or ever) is submitted to
    it at the start of a cycle, when its chance of closing at the next attempt is below `prover_below_p`; unset:
    never."""
    prover_below_p: float = Field(default=0.25, gt=0, le=1)
    """The chance of closing at the next attempt under which a target that keeps failing goes to the prover."""
    hard_above: float = Field(default=0.8, ge=0, le=1)
    """A cycle aiming at a target whose difficulty is above this is worked by `[agents.worker] hard_model`, when
    one is set."""
    runs: int = Field(default=1000, ge=100, le=100_000)
    """Simulated runs behind the forecast's P10, P50 and P90."""
    seed: int = 0
    """The simulation's random seed: the same history gives the same forecast."""
