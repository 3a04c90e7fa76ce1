"""Configuration of the build commands and the mechanical gates (`[build]`, `[gates]`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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


class GatesConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    restructure_budget: int = Field(default=2, ge=0)
    """Sorry-count increases allowed within `restructure_window` cycles, each with a rationale."""
    restructure_window: int = Field(default=10, ge=1)
    """The window, in cycles, of `restructure_budget`."""
    max_sorry_increase: int = Field(default=10, ge=0)
    """The largest increase one restructuring may make."""
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
