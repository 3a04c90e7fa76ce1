"""Configuration of the build commands and the mechanical gates (`[build]`, `[gates]`)."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator


class BuildConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    check_file: str = "lake lean {file}"
    """Compile one file; `{file}` is repo-relative, `{module}` its module name. `lake lean`
    first rebuilds the file's changed imports, which `lake env lean` would read stale."""
    build_all: str = "lake build"
    """Build the whole project; used when more files would be checked than `max_check_files`."""
    timeout_s: int = Field(default=600, gt=0)
    """Seconds one build command may run before its process group is killed."""
    max_check_files: int = Field(default=25, ge=1)
    """Above this many changed and importing files, the build gate runs `build_all` once instead."""
    replay: str = "lake env leanchecker {modules}"
    """Replay the compiled declarations of modules in Lean's kernel; `{modules}` is the changed modules."""
    replay_available: str = "lake env sh -c 'command -v leanchecker'"
    """Exits 0 when the toolchain has `leanchecker` (shipped with Lean since v4.28)."""


class GatesConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    restructure_budget: int = Field(default=2, ge=0)
    """Sorry-count increases allowed within `restructure_window` cycles, each with a rationale."""
    restructure_window: int = Field(default=10, ge=1)
    """The window, in cycles, of `restructure_budget` and of `split_budget`."""
    max_sorry_increase: int = Field(default=10, ge=0)
    """The largest increase one restructuring may make."""
    file_warn_lines: int = Field(default=3000, ge=1)
    """A Lean file longer than this is marked for the Planner as one to split soon."""
    file_cap_lines: int = Field(default=6000, ge=1)
    """A Lean file longer than this must be split: the Planner is told to schedule it, a change that makes such a
    file longer is rejected (unless the report declares `SPLITTING: <rationale>`) and scores at most 0."""
    split_budget: int = Field(default=2, ge=0)
    """Changes allowed within `restructure_window` cycles to make a file over `file_cap_lines` longer, each declared
    as a split in progress with a line `SPLITTING: <rationale>` in the Worker's report."""
    repair_rounds: int = Field(default=2, ge=0)
    """Times a failing gate's report goes back to the Worker before the change is rejected."""
    protected: list[str] = Field(default_factory=lambda: [
        "lakefile.lean", "lakefile.toml", "lean-toolchain", "lake-manifest.json", ".github/**",
        "autoformalize.toml"])
    """Globs of files no Worker change may touch."""
    allowed_axioms: list[str] = Field(default_factory=lambda: ["propext", "Classical.choice", "Quot.sound"])
    """Axioms a change may declare or rely on; any other new `axiom` is rejected."""
    allow_build_time_code: bool = False
    """Let changes add `#eval`, `run_cmd`, `run_elab`, `run_meta`, `initialize` or `include_str`: code that runs
    while the file is built, with your user's rights."""

    kernel_replay: Literal["auto", "on", "off"] = "auto"
    """Replay the changed modules in Lean's kernel (`[build] replay`, leanchecker) once they build: `auto` when the
    toolchain has it (skipped with a note otherwise), `on` rejects a change when it cannot, `off` never."""
    fingerprint_depth: int = Field(default=8, ge=0)
    """How many definitions deep a statement's fingerprint follows the project definitions it reaches."""
    fingerprint_max_defs: int = Field(default=400, ge=0)
    """At most this many project definitions are printed for the fingerprints of one probe."""
    kernel_census_batch: int = Field(default=200, ge=0)
    """Declarations of files not asked about yet whose axioms each cycle's baseline asks Lean, so that one relying
    on `sorryAx` without a `sorry` in its text counts as a hole (0: only what the gates ask)."""

    @model_validator(mode="after")
    def _warning_before_cap(self) -> Self:
        if self.file_warn_lines > self.file_cap_lines:
            raise ValueError(f"file_warn_lines ({self.file_warn_lines}) is above file_cap_lines "
                             f"({self.file_cap_lines}); the warning must come at or before the cap")
        return self
