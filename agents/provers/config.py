"""[prover]: an external batch prover raced against the Worker."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ProverConfig(BaseModel):
    """An external prover works on submitted sorries for tens of minutes while cycles go on; each cycle polls
    it, and a returned proof lands only through the gates, applied by the Worker."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    backend: Literal["aristotle", "none"] = "aristotle"
    """The prover: `aristotle` (Harmonic's Aristotle; `pip install autoformalize[aristotle]`) or `none`. With no
    key in the environment the prover is off, and the log and the Planner say so."""
    api_key_env: str = Field(default="ARISTOTLE_API_KEY", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """The environment variable holding the prover's API key."""
    base_url: str = "https://aristotle.harmonic.fun/api/v3"
    """The prover's API endpoint."""
    max_open_jobs: int = Field(default=4, ge=1)
    """Jobs submitted and not yet returned, failed or cancelled, at most."""
    max_wait_hours: float = Field(default=6.0, gt=0)
    """A job still running this many hours after it was submitted is cancelled at the start of a cycle."""
    max_targets_per_job: int = Field(default=5, ge=1)
    """Declarations one job may carry."""
