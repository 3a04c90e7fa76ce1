"""What every gate takes and returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from gates.census import Census, census
from gates.config import BuildConfig, GatesConfig
from gates.diagnostics import CheckResult
from gates.env import Module
from gates.environment import Baseline
from gates.tree import Change, Tree, diff, is_lean_source
from state.history import HistoryRecord

if TYPE_CHECKING:
    from gates.credentials import Secrets
    from gates.listing import Cache
    from gates.regate import Recheck


@dataclass(frozen=True)
class GateResult:
    name: str
    passed: bool
    detail: str


class Compiler(Protocol):
    """Compiles Lean in the changed tree; the build and kernel gates' only outside dependency."""

    def check(self, path: str, module: str) -> CheckResult: ...

    def build_all(self) -> CheckResult: ...

    def probe(self, text: str, timeout_s: float | None = None) -> CheckResult:
        """`check` on a generated file holding `text`, which exists only while it runs (within `timeout_s` when given,
        else the build's time limit)."""
        ...

    def read(self, text: str, timeout_s: float | None = None) -> CheckResult:
        """`[build] read_file` on a generated file holding `text`: over the build outputs as they are, nothing
        built."""
        ...

    def compile(self, text: str, timeout_s: float | None = None) -> tuple[str, CheckResult]:
        """`text` compiled as a module of its own, whose `.olean` `read` then finds: its name, and what Lean said."""
        ...

    def discard(self, module: str) -> None:
        """What `compile` wrote for `module`, removed."""
        ...

    def replay(self, modules: list[str]) -> CheckResult | None:
        """The kernel's replay of `modules` (leanchecker); None when the toolchain has none, and `gates.replay`
        runs its own program through `read`."""
        ...


@dataclass
class GateInput:
    """Everything the gates decide on. They read files, never the Worker's claims."""

    base: Tree
    changed: Tree
    gates: GatesConfig
    build: BuildConfig
    lean_roots: list[str]
    state_dir: str
    scope: list[str]
    report: str
    cycle: int
    history: list[HistoryRecord] = field(default_factory=list)
    compiler: Compiler | None = None
    base_census: Census | None = None  # reuse the baseline's census when the caller has it
    candidates: list[str] | None = None  # paths that may differ (from git); None: compare every file
    strategy: str = ""  # strategy.md, where restatements of locked statements are declared
    locked: dict[str, str] = field(default_factory=dict)  # declaration → hash of its statement judged faithful
    paired: frozenset[str] = frozenset()  # declarations the trusted book text pairs with a statement, at the base
    approved: dict[str, str] = field(default_factory=dict)  # declaration → the digest a person approved (closures), as
    # the base's reviews file has it (`state.reviews.approved`): locked whatever the judge says, and restated only
    # with a person's approval of the restatement too
    rejected: frozenset[str] = frozenset()  # declarations a person rejected as the base means them: neither locked
    # nor paired, so restating them needs no declaration
    secrets: Secrets | None = None  # the values no change may carry
    kernel_base: Baseline | None = None  # what Lean listed of the base before the Worker ran
    kernel_cache: Cache | None = None  # Lean's listings by closure key, read-only here
    kernel_learned: dict[str, tuple[str, Module]] = field(default_factory=dict)  # what Lean listed of the changed
    # tree that the cache lacked: path → (closure key, its module's constants), for the caller to keep
    broken_successors: dict[str, list[str]] = field(default_factory=dict)  # an altered declaration → its users
    # of the base that no longer elaborate against it (`gates.successors`), for the judge and the record
    defaults: dict[str, list[str]] = field(default_factory=dict)  # an altered declaration → the kinds of hypothesis
    # with a default its statement gained (`autoParam`, `optParam`: filled in at every use), for the judge
    recheck: Recheck | None = None  # a change re-applied after passing on another base: what to compile again

    def __post_init__(self) -> None:
        self.locked = {n: h for n, h in {**self.locked, **self.approved}.items() if n not in self.rejected}
        self.paired = self.paired - self.rejected
        self.approved = {n: h for n, h in self.approved.items() if n not in self.rejected}

    @cached_property
    def changes(self) -> list[Change]:
        return diff(self.base, self.changed, only=self.candidates)

    @cached_property
    def before(self) -> Census:
        return self.base_census if self.base_census is not None else census(self.base, self.lean_roots)

    @cached_property
    def after(self) -> Census:
        """The changed tree's census: the base's, with the changed files re-read."""
        return self.before.replace(self.changed, [c.path for c in self.changes], self.lean_roots)

    def lean_changes(self) -> list[Change]:
        return [c for c in self.changes if is_lean_source(c.path, self.lean_roots)]
