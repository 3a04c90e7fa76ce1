"""Configuration of the build commands and the mechanical gates (`[build]`, `[gates]`)."""

from __future__ import annotations

from typing import Literal, Self

import structlog
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gates.credentials import SENSITIVE

log = structlog.get_logger()
RETIRED = frozenset({"fingerprint_depth", "fingerprint_max_defs"})


class BuildConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    check_file: str = "lake lean {file}"
    """Compile one file; `{file}` is repo-relative, `{module}` its module name. `lake lean`
    first rebuilds the file's changed imports, which `lake env lean` would read stale."""
    read_file: str = "lake env lean {file}"
    """Run one file over the build outputs as they are, building nothing: the environment probe's program, after
    `check_file` built what it reads. `lake env` loads none of the project's plugins or options into it."""
    compile_file: str = "lake lean {file} -- -R {root} -o {olean}"
    """Compile one file as a module of its own and write its `.olean`: the successors gate's users as they were at
    the base, listed by Lean afterwards. Like `check_file`, Lake builds the file's imports first; `{root}` is the
    folder its module name is counted from, `{olean}` the file to write (in `olean_dir`)."""
    olean_dir: str = ".lake/build/lib/lean"
    """Where Lake keeps the project's built modules (on `lake env`'s search path), relative to the Lake project."""
    build_all: str = "lake build"
    """Build the whole project; used when more files would be checked than `max_check_files`."""
    timeout_s: int = Field(default=600, gt=0)
    """Seconds one build command may run before its process group is killed."""
    max_check_files: int = Field(default=25, ge=1)
    """Above this many changed and importing files, the build gate runs `build_all` once instead."""
    replay: str = "lake env leanchecker {modules}"
    """Replay the compiled declarations of modules in Lean's kernel; `{modules}` is every project module of the
    change's environment (the changed ones, those importing one, and the project modules they import)."""
    replay_available: str = "lake env sh -c 'command -v leanchecker'"
    """Exits 0 when the toolchain has `leanchecker` (shipped with Lean since v4.28). A yes is asked once per process
    and toolchain (`lean-toolchain`, `lake-manifest.json`, the lakefile); a no, at every replay."""


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
        "autoformalize.toml", "CLAUDE.md", "AGENTS.md", "plan.md", "blueprint/**", "**/lean_status.json",
        "approved_restatements.toml"])
    """Globs of files no Worker change may touch. The plan, the book's text (`[audit] blueprint` and `mappings`),
    `restate_approvals` and `reviews` are protected whatever this list says."""
    allowed_axioms: list[str] = Field(default_factory=lambda: ["propext", "Classical.choice", "Quot.sound"])
    """Axioms a change may declare or rely on; any other new `axiom` is rejected. The project's own axioms at the base
    are allowed too, each only while Lean elaborates its statement as at the base."""
    allow_build_time_code: bool = False
    """Let changes add `#eval`, `#guard`, `run_cmd`, `run_elab`, `run_meta`, `initialize` or `include_str`: code
    that runs while the file is built (in the sandbox). All but `include_str` can be meta code and need
    `allow_meta_code` too."""
    restate_requires_approval: bool = False
    """A change to the meaning of a statement paired with the book (declared `RESTATE:` and judged faithful or
    stronger) also needs a person's approval in `restate_approvals`. A statement a person approved in `reviews`
    needs one whatever this says."""
    restate_approvals: str = "approved_restatements.toml"
    """The file, written and committed by a person, that approves restatements: one `[[restate]]` table per
    change, with `declaration` and `from` (the meaning hash of the statement it replaces, as the integrity gate's
    message gives it). An approval is spent once the statement has changed. Always protected."""
    reviews: str = "reviews.toml"
    """People's verdicts on the book's statements (`autoformalize review`, or written by hand): approvals lock a
    statement as a person's, rejections unlock it and count it as different. Always protected."""
    max_new_issues: int = Field(default=3, ge=0)
    """Issues one cycle's Worker may open; it may never change or delete an existing one."""
    max_issue_chars: int = Field(default=8000, ge=1)
    """The longest issue a Worker may open, in characters."""
    max_scope_entries: int = Field(default=8, ge=1)
    """Entries a strategy's `## Scope` may list."""
    max_scope_files: int = Field(default=40, ge=1)
    """Files of the base one Scope entry may match; a wider entry makes the strategy invalid."""
    allow_guard_msgs: bool = False
    """Let changes add `#guard_msgs` to project files. It drops the messages it matches, Lean's `declaration uses
    'sorry'` warning and errors included, so a proof that does not check can look closed."""
    allow_meta_code: bool = False
    """Let changes add meta code: `elab`, `elab_rules`, `macro_rules`, `simproc`, any attribute outside the list of
    harmless ones (`simp`, `ext`, `instance`, `gcongr`… and those the project registers with `register_simp_attr`;
    `@[command_elab]`, `@[tactic]`, `@[simproc]`, `@[norm_num]`, `@[delab]` are meta code), a new `import Lean`
    or `import Lean.…` (in a Mathlib project, Lean is imported already), and (with `allow_build_time_code`)
    `#eval`, `run_cmd`, `run_elab`, `run_meta`, `initialize`. Such code can add declarations and axioms that no
    reading of the source sees (Lean's listing still sees them). The kernel gate does not load a module importing
    code that runs as it loads (`initialize`, `@[init]`)."""
    allow_command_syntax: bool = False
    """Let changes add a `syntax`, `macro` or `elab` that declares a command (one can add declarations and axioms no
    reading of the text sees; Lean's listing still sees them) or any syntax taking `interpolatedStr` (whose strings
    the gates cannot tell from plain ones)."""
    allow_context_with_proof: bool = False
    """Let a change that closes a sorry also add or change, where the closed statement can see it, an instance
    (`instance`, a declaration with an instance attribute, `attribute [instance]`, `deriving instance`), an `open`
    or `export` before it in its file, or an instance, instance attribute, export, notation, macro or syntax that
    is not `local` in a file it imports: each can change what the statement means while its text stays the same.
    Inside the proof (`open … in`, `haveI`, `letI`) is out of its sight. Without it, land such a change alone
    first."""

    kernel_replay: Literal["auto", "on", "off"] = "auto"
    """Replay every project module of the change's environment in Lean's kernel once it builds: `auto` (or `on`,
    the same) with `[build] replay` (leanchecker) where `replay_available` says the toolchain has it, else with the
    gates' own program (`gates/replay.lean`, through `read_file`); a replay that cannot run rejects the change.
    `off` never replays: a declaration its module stored without the kernel's check then lands."""
    successors: Literal["locked", "strict", "off"] = "locked"
    """When a change alters what a declaration means, compile the declarations that used it at the base, as they
    were, against the change (`gates/successors.py`): `locked` rejects breaking a user of a statement locked as
    faithful and names other broken users as evidence; `strict` rejects any broken user; `off` compiles nothing."""
    kernel_census_batch: int = Field(default=200, ge=0)
    """Each cycle's baseline asks Lean to list files it has not listed yet, up to this many declarations' worth, so
    that a hole only Lean sees counts (0: only what the gates ask)."""

    @model_validator(mode="before")
    @classmethod
    def _retired(cls, data: object) -> object:
        """Keys of earlier versions that no longer mean anything: accepted, and said so."""
        if isinstance(data, dict) and (old := sorted(RETIRED & data.keys())):
            log.warning("config.retired_keys", section="gates", keys=old,
                        why="statements are compared by Lean's terms, whole, with no depth or count to bound")
            return {k: v for k, v in data.items() if k not in RETIRED}
        return data

    @model_validator(mode="after")
    def _warning_before_cap(self) -> Self:
        if self.file_warn_lines > self.file_cap_lines:
            raise ValueError(f"file_warn_lines ({self.file_warn_lines}) is above file_cap_lines "
                             f"({self.file_cap_lines}); the warning must come at or before the cap")
        return self


class SandboxConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    mode: Literal["bwrap", "none"] = "bwrap"
    """How code the Worker wrote is confined while it compiles or runs: "bwrap" (bubblewrap: no network, no
    credential, nothing of your files but the working copy, the toolchain and `.lake/packages`, read-only but for
    the build outputs) or "none" (it runs with your user's rights; every cycle warns)."""
    memory_mb: int = Field(default=8192, ge=0)
    """The data memory (heap) one sandboxed process may use, in MiB; 0: no limit. The `.olean` files Lean maps
    read-only (all of Mathlib's) do not count."""
    cpu_s: int = Field(default=3600, ge=0)
    """The CPU seconds one sandboxed process may use (a backstop behind `[build] timeout_s`, which bounds the wall
    clock; Lean's threads add up); 0: no limit."""
    env: list[str] = Field(default_factory=list)
    """Environment variables passed into the sandbox besides PATH, LANG, LC_*, TZ and Lean's and elan's own;
    credential-looking names are refused."""
    read_only: list[str] = Field(default_factory=list)
    """Extra paths the sandbox shows read-only (a toolchain installed outside `~/.elan`, a tool's data)."""
    tmp_mb: int = Field(default=1024, ge=1)
    """The size of the sandbox's private `/tmp`, and of its `/dev/shm`, in MiB: both are memory."""
    max_processes: int = Field(default=4096, ge=0)
    """Processes and threads a sandboxed command may have at once (RLIMIT_NPROC, and a cgroup's TasksMax where
    there is one). Counted within each sandbox when you run autoformalize as a normal user (each has a user
    namespace of its own), and over every process of `unprivileged_uid` when you run it as root; 0: no limit."""
    max_file_mb: int = Field(default=2048, ge=0)
    """The largest file a sandboxed process may write, in MiB (RLIMIT_FSIZE; `.olean` files are far smaller);
    0: no limit."""
    total_memory_mb: int = Field(default=16384, ge=0)
    """Where systemd can put a sandboxed command in a cgroup of its own (`systemd-run --user --scope`, or as root
    `systemd-run --scope`), the memory all its processes may use together, its `/tmp` included (MemoryMax); 0: no
    cgroup. Elsewhere only the per-process limits apply; `status` says which."""
    unprivileged_uid: int = Field(default=65534, ge=1)
    """The user id sandboxed code runs as when you run autoformalize as root (in a container, say): not root, so
    the kernel's settings and root's files stay out of its reach and `max_processes` applies (the kernel exempts
    root). Its build outputs in the working copy belong to this user."""

    @field_validator("env")
    @classmethod
    def _no_credentials(cls, names: list[str]) -> list[str]:
        refused = [n for n in names if SENSITIVE.search(n)]
        if refused:
            raise ValueError(f"{', '.join(refused)} look like credentials or their services' settings; code the "
                             "Worker wrote never gets them")
        return names
