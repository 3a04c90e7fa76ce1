"""Mutation testing of the trust rules: would the tests notice if a rule were gone?

    python benchmarks/mutation.py hand                        # each rule of `HAND` removed in a copy: its tests fail
    python benchmarks/mutation.py hand --rule seccomp-clone
    python benchmarks/mutation.py run gates/seccomp.py        # mutmut's mutants of these modules (all when none)
    python benchmarks/mutation.py run --sample 40 --seed 1    # at most 40 mutants a module, drawn at random
    python benchmarks/mutation.py run --budget-s 18000        # start no mutant after five hours; the next run resumes
    python benchmarks/mutation.py run --again gates/hooks.py  # only its survivors run again, after tests were added
    python benchmarks/mutation.py report [--json]             # kill rates per module, survivors named
    python benchmarks/mutation.py check                       # exit 1 where a kill rate dropped beyond chance
    python benchmarks/mutation.py record                      # today's rates become the recorded ones

`hand` is the list the trust rules were first checked with: each entry removes one rule from a copy of the
working tree (never the tree itself) and runs the tests that pin it, which must fail.

`run` is mutmut 3 (`[tool.mutmut]` in pyproject.toml): it copies the packages to `mutants/`, runs the whole suite
once to learn which tests call each function (kept in `mutants/`), then runs each mutant against those tests only,
stopping at the first failure, the fastest mutants first. Results stay in `mutants/`: a run that stops resumes
where it was, as this script passes mutmut only the mutants without a result (past `--budget-s` none is started,
and one stopped keeps no result). A mutant no test reaches counts as surviving.

The kill rate of a module is killed / (killed + survived) over its mutants that have a result, leaving out the
accepted equivalent ones (`equivalent` in `benchmarks/mutation.json`, each with why: a mutant no input can tell
apart from the original is no gap in the tests). `record` writes today's figures (killed, survived, whether every
mutant had a result) as `recorded` in the same file; `check` fails when a module's rate, or the total, dropped
below its recorded one by more than sampling explains (`dropped`).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RECORD = Path("benchmarks") / "mutation.json"  # in the project's root
KILLED = frozenset({"killed", "timeout", "segfault", "caught by type check"})
SURVIVED = frozenset({"survived", "no tests", "suspicious"})
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped", 35: "suspicious",
          36: "timeout", 37: "caught by type check", -24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout",
          -11: "segfault", -9: "segfault"}  # mutmut's exit codes (mutmut.stats)
GRACE_S = 900.0  # past the budget, how long the mutants running may take to end
STOPPED = frozenset({2, -2, -15, 130})  # a mutant's run interrupted (a budget spent, ^C): run again, not judged


@dataclass(frozen=True)
class Hand:
    """One trust rule removed by hand: `old` (once in `path`) becomes `new`; the `tests` pinning it must fail."""

    rule: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


SANDBOX = "tests/gates/test_sandbox.py::"
KERNEL = "tests/gates/test_kernel.py::"
ENV = "tests/gates/test_env.py::"
HAND = [
    # The fourteen, each at the rule's present home.
    Hand("seccomp-clone", "gates/seccomp.py", 'code += [(_JEQ_K, "flags", 0, nr) for nr in namespaces]',
         'code += [(_JEQ_K, "flags", 0, nr) for nr in namespaces[:1]]',
         (SANDBOX + "test_clone_and_clone3_making_a_user_namespace_fail_inside",)),
    Hand("seccomp-clone3", "gates/seccomp.py", 'code.append((_JEQ_K, "enosys", 0, clone3))', "pass",
         (SANDBOX + "test_clone_and_clone3_making_a_user_namespace_fail_inside",)),
    Hand("sandbox-home", "gates/sandbox.py", "for p in (*self.hidden, Path.home())]", "for p in self.hidden]",
         (SANDBOX + "test_the_home_directory_stays_hidden_when_a_binding_would_show_it",)),
    Hand("kernel-restate-closed", "gates/kernel.py", "if not is_closed and declared.get(name):",
         "if declared.get(name):",
         (KERNEL + "test_a_restatement_does_not_excuse_a_statement_whose_sorry_the_change_closes",)),
    Hand("kernel-hidden-closing", "gates/kernel.py",
         "was_holed = {h.name for h in inp.before.holed() if h.path in before_affected}",
         "was_holed = {h.name for h in inp.before.holed() if h.path in before_affected and h.written}",
         (KERNEL + "test_closing_a_hole_only_lean_sees_is_closing",)),
    Hand("env-cut-short", "gates/env.py",
         'raise Unreadable(f"no last line after {seq} line(s): the program did not run to its end")',
         "ended = seq", (ENV + "test_an_answer_cut_short_or_ended_in_an_error_is_no_answer",
                         ENV + "test_only_a_whole_answer_is_kept")),
    Hand("env-every-module", "gates/env.py", "    if absent:\n", "    if len(absent) == len(modules):\n",
         (ENV + "test_every_module_asked_must_be_answered",)),
    Hand("meaning-root", "gates/meaning.py", 'token = token.removeprefix("_root_.")', "token = token",
         ("tests/gates/test_meaning.py::test_a_name_written_from_the_root_names_the_declaration",)),
    Hand("reach-local-instance", "gates/reach.py",
         '"local" in other.modifiers or _local_attribute(other), d)', "True, d)",
         ("tests/gates/test_source_rules.py::test_an_instance_that_is_not_local_outlives_its_section",)),
    Hand("reach-transitive", "gates/reach.py", "                todo.append(dep)\n", "",
         ("tests/gates/test_source_rules.py::test_an_instance_reaches_through_every_import_on_the_way",)),
    Hand("integrity-partial-closure", "gates/integrity.py", "if old.holes and new.holes < old.holes and changed:",
         "if old.holes and new.holes == 0 and changed:",
         ("tests/gates/test_integrity.py::"
          "test_changing_a_definition_a_statement_names_while_closing_one_of_its_sorries_is_rejected",)),
    Hand("remote-negative-charge", "orchestrator/remote.py", " or (ch.cost_usd or 0) < 0", "",
         ("tests/orchestrator/test_remote_results.py::test_a_negative_or_non_finite_charge_refuses_the_result",)),
    Hand("window-newest", "agents/window.py", "text[-limit:]", "text[:limit]",
         ("tests/agents/test_window.py::test_a_cut_transcript_keeps_its_newest_part",)),
    Hand("rests-hidden", "audit/rests.py", "self.holed = {canonical(h.name) for h in census.holed()}",
         "self.holed = {canonical(h.name) for h in census.holed() if h.written}",
         ("tests/audit/test_rests.py",)),
    # Rules added since, by the redesign around Lean's environment and the checks of remote results.
    Hand("remote-non-finite", "orchestrator/remote.py", "not math.isfinite(ch.cost_usd or 0) or ", "",
         ("tests/orchestrator/test_remote_results.py::test_a_negative_or_non_finite_charge_refuses_the_result",)),
    Hand("remote-negative-tokens", "orchestrator/remote.py", " or min(ch.usage.model_dump().values()) < 0", "",
         ("tests/orchestrator/test_remote_results.py::test_negative_tokens_refuse_the_result",)),
    Hand("remote-own-item", "orchestrator/remote.py", "if (result.item, result.base) != (item, base):",
         "if result.item != item:",
         ("tests/orchestrator/test_remote_results.py::test_a_result_is_read_only_for_its_own_item_and_base",)),
    Hand("remote-no-link", "orchestrator/remote.py", "return path.is_file() and not path.is_symlink()",
         "return path.is_file()",
         ("tests/orchestrator/test_remote_results.py::test_a_result_through_a_link_or_past_its_bound_is_refused",)),
    Hand("patch-symlink", "orchestrator/patchcheck.py", "if mode not in REGULAR]",
         "if mode not in REGULAR and mode != SYMLINK]",
         ("tests/orchestrator/test_patchcheck.py",)),
    Hand("patch-lake", "orchestrator/patchcheck.py", "if LAKE in path.split(\"/\"):", "if False:",
         ("tests/orchestrator/test_patchcheck.py::test_build_outputs_are_refused_whatever_the_ignore_rules_say",)),
    Hand("patch-outputs", "orchestrator/patchcheck.py", "elif path.endswith(OUTPUTS):", "elif False:",
         ("tests/orchestrator/test_patchcheck.py::test_build_outputs_are_refused_whatever_the_ignore_rules_say",)),
    Hand("scope-leaving-link", "gates/scope.py", "links = leaving(inp.changed)", "links: list[str] = []",
         ("tests/gates/test_scope.py",)),
    Hand("tree-leaving-link", "gates/tree.py", "                if not self._inside(path):\n",
         "                if False:\n", ("tests/gates/test_scope.py", "tests/gates/test_tree.py")),
    Hand("seccomp-io-uring", "gates/seccomp.py", '"userfaultfd": 323, **IO_URING}', '"userfaultfd": 323}',
         (SANDBOX + "test_io_uring_is_refused",)),
    Hand("kernel-hole-excused-as-it-was", "gates/kernel.py", "if untouched and owner in held:",
         "if owner in held:", (KERNEL + "test_a_hidden_hole_of_the_base_is_excused_only_as_it_was",)),
    Hand("kernel-hole-written", "gates/kernel.py", "if d is not None and d.holes > 0:",
         "if d is not None:", (KERNEL + "test_each_cheat_is_rejected_by_the_kernel_gate_for_its_reason",)),
    Hand("hooks-refused", "gates/listing.py", "if refused := hooks.refused(census, asked):", "if refused := []:",
         (KERNEL + "test_project_code_run_as_a_module_loads_keeps_lean_from_being_asked",)),
    Hand("listing-closure", "gates/listing.py", "*sorted(out.get(q, q) for q in graph.imports.get(path, ()))",
         "*sorted(graph.imports.get(path, ()))",
         (KERNEL + "test_a_cached_listing_is_keyed_by_the_whole_import_closure",)),
    Hand("census-lean-holes", "gates/census.py", "if lean in holes:", "if lean in holes and d.holes > 0:",
         (KERNEL + "test_closing_a_hole_only_lean_sees_is_closing", "tests/audit/test_rests.py")),
    Hand("env-nonce-prefix", "gates/env.py", "if head and not _PREFIX.fullmatch(head):", "if False:",
         (ENV + "test_a_listing_out_of_order_cut_or_forged_is_unreadable",)),
]


# -- the hand list ---------------------------------------------------------------------------------------------


def hand(rules: list[str], timeout_s: float) -> int:
    """Each rule of `HAND` (or those named) removed in one copy of the working tree, in turn; its tests run there."""
    chosen = [h for h in HAND if not rules or h.rule in rules]
    if unknown := set(rules) - {h.rule for h in HAND}:
        print(f"unknown rule(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    survived = 0
    with tempfile.TemporaryDirectory(prefix="autoformalize-mutation-") as tmp:
        copy = Path(tmp) / "tree"
        _copy_tree(copy)
        env = {**os.environ, "PYTHONPATH": str(copy)}
        for h in chosen:
            target = copy / h.path
            original = target.read_text(encoding="utf-8")
            if original.count(h.old) != 1:
                print(f"{h.rule}: its text is no longer once in {h.path}; update HAND", file=sys.stderr)
                return 2
            target.write_text(original.replace(h.old, h.new), encoding="utf-8")
            try:
                done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-rf", "-p", "no:cacheprovider",
                                       *h.tests],
                                      cwd=copy, env=env, capture_output=True, text=True, timeout=timeout_s)
            finally:
                target.write_text(original, encoding="utf-8")
            lines = done.stdout.strip().splitlines() or [""]
            why = next((line for line in lines if line.startswith("FAILED ")), lines[-1])
            caught = done.returncode == 1
            survived += not caught
            print(f"{'caught  ' if caught else 'SURVIVED'} {h.rule:30} {why[:300]}", flush=True)
    print(f"{len(chosen) - survived} of {len(chosen)} rules removed were caught by their tests")
    return 1 if survived else 0


def _copy_tree(dest: Path) -> None:
    """The working tree as `git add -A` would commit it (untracked files included), without `mutants/`."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        source = ROOT / rel
        if not source.is_file() or rel.startswith("mutants/"):
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest / rel, follow_symlinks=False)


# -- mutmut ----------------------------------------------------------------------------------------------------


def modules(root: Path) -> list[str]:
    """The modules `[tool.mutmut] only_mutate` names, as paths."""
    config = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["mutmut"]
    files = sorted(p.relative_to(root).as_posix() for top in config["source_paths"] for p in (root / top).rglob("*.py"))
    return [f for f in files if any(fnmatch.fnmatch(f, g) for g in config["only_mutate"])
            and not f.endswith("__init__.py")]


def dotted(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".")


def results(root: Path) -> dict[str, dict[str, str]]:
    """Module path → mutant name → its status ("not checked" until it has a result)."""
    out: dict[str, dict[str, str]] = {}
    for path in modules(root):
        meta = root / "mutants" / f"{path}.meta"
        if not meta.is_file():
            continue
        out[path] = {name: "not checked" if code is None or code in STOPPED else STATUS.get(code, "suspicious")
                     for name, code in _codes(root, path).items()}
    return out


def run(root: Path, paths: list[str], max_children: int, sample: int | None, seed: int,
        budget_s: float | None = None, clean: bool = False, tests_per_mutant: int = 0, again: bool = False) -> int:
    """mutmut on the modules' mutants without a result (a sample of each module's, when asked), all in one run;
    past `budget_s` seconds it is interrupted (every result so far is kept)."""
    known = results(root)
    mutated = modules(root)
    chosen = paths or mutated
    for path in chosen:
        if path not in mutated:
            print(f"{path} is not among the mutated modules ([tool.mutmut] only_mutate)", file=sys.stderr)
            return 2
    if fresh := [p for p in chosen if p not in known]:  # mutants made first, so that a sample draws from them all
        subprocess.run([sys.executable, "-c", MAKE, *fresh], cwd=root, check=True, stdout=subprocess.DEVNULL)
        known = results(root)
    rng = random.Random(seed)
    equivalent = recorded(root)["equivalent"]
    todo: list[str] = []
    for path in chosen:
        statuses = {n: s for n, s in known.get(path, {}).items() if n not in equivalent}
        # With `again`, a module's survivors, and mutants without a result only when a sample is asked for.
        some = [] if again and sample is None else sorted(n for n, s in statuses.items() if s == "not checked")
        if sample is not None:
            some = rng.sample(some, max(0, min(len(some), sample - (len(statuses) - len(some)))))
        some += [n for n, s in statuses.items() if again and s in SURVIVED]
        if some:
            print(f"== {path}: {len(some)} mutant(s)", flush=True)
        todo += sorted(some)
    if not todo:
        return 0
    # One mutmut for them all: each start lists the whole suite and runs a test made to fail (half a minute here).
    # It runs the fastest first, so a run cut short by its budget leaves the slowest for the next one.
    was = {path: _codes(root, path) for path in chosen}
    prefer = sorted({t for path in chosen for t in own_tests(path)})
    limits = ["--tests-per-mutant", str(tests_per_mutant), "--prefer", ",".join(prefer)]
    # Past the budget mutmut starts no mutant and lets the running ones end; past GRACE_S more they are stopped
    # too, and keep no result (a stopped mutant would otherwise count as surviving).
    timed = [] if budget_s is None else ["--deadline", str(time.time() + budget_s)]
    mutmut = subprocess.Popen([sys.executable, "-c", MUTMUT, "run", "--max-children", str(max_children),
                               *(["--clean"] if clean else []), *(limits if tests_per_mutant else []), *timed, *todo],
                              cwd=root, env={**os.environ, "PYTHONPATH": str(root / "mutants")})
    try:
        code = mutmut.wait(timeout=None if budget_s is None else budget_s + GRACE_S)
    except subprocess.TimeoutExpired:
        mutmut.send_signal(signal.SIGINT)  # mutmut stops its workers; each result is saved as it comes
        try:
            mutmut.wait(timeout=120)
        except subprocess.TimeoutExpired:
            mutmut.kill()
        code = 0
    asked = set(todo)
    for path in chosen:  # one run again but stopped keeps the result it had (a survivor stays one)
        meta = root / "mutants" / f"{path}.meta"
        if meta.is_file() and (kept := {n: c for n, c in _codes(root, path).items() if n in asked
                                        and (c is None or c in STOPPED) and was[path].get(n) is not None
                                        and was[path][n] not in STOPPED}):
            data = json.loads(meta.read_text())
            data["exit_code_by_key"].update({n: was[path][n] for n in kept})
            meta.write_text(json.dumps(data, indent=4))
    if left := sum(s == "not checked" for path in chosen for n, s in results(root).get(path, {}).items() if n in asked):
        print(f"{left} mutant(s) asked for have no result yet (the budget was spent): the next run goes on", flush=True)
    return code


def _codes(root: Path, path: str) -> dict[str, int | None]:
    """mutmut's exit code per mutant of the module `path` (None: not run)."""
    meta = root / "mutants" / f"{path}.meta"
    return json.loads(meta.read_text())["exit_code_by_key"] if meta.is_file() else {}


OWN_TESTS = {
    "gates/seccomp.py": ["tests/gates/test_sandbox.py"],
    "gates/limits.py": ["tests/gates/test_sandbox.py"],
    "gates/env.py": ["tests/gates/test_env.py", "tests/gates/test_kernel.py"],
    "gates/environment.py": ["tests/gates/test_env.py", "tests/gates/test_kernel.py"],
    "gates/listing.py": ["tests/gates/test_env.py", "tests/gates/test_kernel.py"],
    "gates/census.py": ["tests/gates/test_census.py", "tests/gates/test_kernel.py"],
    "gates/sorry.py": ["tests/gates/test_sorry_gate.py", "tests/gates/test_bypasses.py"],
    "gates/integrity.py": ["tests/gates/test_integrity.py", "tests/gates/test_source_rules.py",
                           "tests/gates/test_meaning.py", "tests/gates/test_bypasses.py"],
    "gates/constructs.py": ["tests/gates/test_source_rules.py", "tests/gates/test_integrity.py"],
    "gates/reach.py": ["tests/gates/test_source_rules.py"],
    "gates/tree.py": ["tests/gates/test_tree.py", "tests/gates/test_scope.py"],
    "orchestrator/remote.py": ["tests/orchestrator/test_remote_results.py", "tests/orchestrator/test_engines.py",
                               "tests/orchestrator/test_actions.py"],
    "orchestrator/kernelcheck.py": ["tests/orchestrator/test_kernel_cycle.py", "tests/gates/test_kernel.py"],
    "orchestrator/mergequeue.py": ["tests/orchestrator/test_round.py", "tests/orchestrator/test_round_serial.py"],
}
"""The test files of a module besides `tests/<package>/test_<module>.py`: with `--tests-per-mutant`, a mutant
always runs against those of them that reach it."""


def own_tests(path: str) -> list[str]:
    top, _, name = path.partition("/")
    return [f"tests/{top}/test_{Path(name).stem}.py", *OWN_TESTS.get(path, [])]


MUTMUT = """\
import sys
import mutmut.__main__ as mutmut
if "--clean" not in sys.argv:
    # mutmut runs every test reaching the mutants asked for, unmutated, before it runs them: for a gate that is most of
    # the suite, each time. The stats run (the whole suite, unmutated, stopping at a failure) has shown that they
    # pass; new tests are run so too before any mutant.
    runner = mutmut.get_mutant_runner
    def unchecked(*args, **kw):
        made = runner(*args, **kw)
        made.run_clean_tests = lambda tests: 0
        return made
    mutmut.get_mutant_runner = unchecked
cap = int(sys.argv.pop(sys.argv.index("--tests-per-mutant") + 1)) if "--tests-per-mutant" in sys.argv else 0
prefer = sys.argv.pop(sys.argv.index("--prefer") + 1).split(",") if "--prefer" in sys.argv else []
if cap > 0:
    # A mutant runs against the tests of its module's own test files and its `cap` fastest others (mutmut runs them
    # fastest first and stops at a failure): a survivor of a function every cycle reaches would otherwise run
    # hundreds of whole-cycle tests.
    from mutmut.state import state
    made_runner = mutmut.get_mutant_runner
    def capped(*args, **kw):
        made = made_runner(*args, **kw)
        submit = made.submit
        def chosen(name, tests, limit, estimated):
            took = state().duration_by_test
            own = [t for t in tests if t.split("::")[0] in prefer]
            rest = sorted((t for t in tests if t not in own), key=lambda t: took.get(t, 0.0))[:cap]
            picked = own + rest
            return submit(name, picked, limit, sum(took.get(t, 0.0) for t in picked))
        made.submit = chosen
        return made
    mutmut.get_mutant_runner = capped
deadline = float(sys.argv.pop(sys.argv.index("--deadline") + 1)) if "--deadline" in sys.argv else None
if deadline is not None:
    # Past the deadline no mutant is started: those running end, the rest keep no result, for the next run.
    import dataclasses, signal, time
    stopping = False
    def interrupted(signum, frame):
        global stopping
        stopping = True
        raise KeyboardInterrupt
    signal.signal(signal.SIGINT, interrupted)
    timed_runner = mutmut.get_mutant_runner
    def timed(*args, **kw):
        made = timed_runner(*args, **kw)
        submit, wait = made.submit, made.wait_for_result
        def before_deadline(*a, **k):
            return submit(*a, **k) if time.time() < deadline else None
        def judged():
            # A mutant whose tests were stopped (mutmut ends its workers with exit code 0) survived nothing.
            result = wait()
            return dataclasses.replace(result, exit_code=None) if stopping else result
        made.submit, made.wait_for_result = before_deadline, judged
        return made
    mutmut.get_mutant_runner = timed
sys.argv = [a for a in sys.argv if a not in ("--clean", "--tests-per-mutant", "--prefer", "--deadline")]
sys.exit(mutmut.cli())
"""
"""mutmut's own command line, its module imported as such (its workers fork from it)."""
MAKE = """\
import os, sys
from pathlib import Path
from mutmut.__main__ import create_file_mutants
os.makedirs("mutants", exist_ok=True)
for path in sys.argv[1:]:
    if (error := create_file_mutants(Path(path)).error) is not None:
        raise error
"""
"""Mutants of the modules named, made as `mutmut run` makes them (results of unchanged functions kept)."""


# -- figures ---------------------------------------------------------------------------------------------------


@dataclass
class Row:
    """One module's mutants (or all of them): killed, survived (named), accepted as equivalent, not run yet."""

    killed: int = 0
    survived: int = 0
    equivalent: int = 0
    not_checked: int = 0
    survivors: list[str] = field(default_factory=list)

    @property
    def judged(self) -> int:
        return self.killed + self.survived

    @property
    def rate(self) -> float | None:
        """Killed among the non-equivalent mutants that have a result."""
        return round(self.killed / self.judged, 4) if self.judged else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The rate's 95% Wilson interval, as a sample of the module's mutants (the rate itself when every mutant
        has a result)."""
        if not self.judged:
            return None
        return wilson(self.killed, self.judged) if self.not_checked else (self.killed / self.judged,) * 2

    def add(self, other: Row) -> None:
        self.killed += other.killed
        self.survived += other.survived
        self.equivalent += other.equivalent
        self.not_checked += other.not_checked


def wilson(killed: int, judged: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of `killed` of `judged` (z = 1.96: 95%), rounded to four places."""
    p = killed / judged
    d = 1 + z * z / judged
    mid = (p + z * z / (2 * judged)) / d
    half = z * math.sqrt(p * (1 - p) / judged + z * z / (4 * judged * judged)) / d
    return round(max(0.0, mid - half), 4), round(min(1.0, mid + half), 4)


def recorded(root: Path) -> dict[str, Any]:
    """`recorded`: module (or "total") → its last recorded figure (killed, survived, whether every mutant of it had
    a result, the rate); `equivalent`: mutant → why no input tells it apart from the original."""
    file = root / RECORD
    return json.loads(file.read_text()) if file.is_file() else {"recorded": {}, "equivalent": {}}


def figures(statuses: dict[str, dict[str, str]], equivalent: dict[str, str]) -> dict[str, Row]:
    """Per module, and in total."""
    out: dict[str, Row] = {}
    total = Row()
    for path, names in sorted(statuses.items()):
        row = Row()
        for name, status in sorted(names.items()):
            if name in equivalent:
                row.equivalent += 1
            elif status in KILLED:
                row.killed += 1
            elif status in SURVIVED:
                row.survived += 1
                row.survivors.append(f"{name} ({status})")
            else:
                row.not_checked += 1
        total.add(row)
        out[path] = row
    out["total"] = total
    return out


def _shown(interval: tuple[float, float] | None) -> str:
    if interval is None:
        return "—"
    return "(all run)" if interval[0] == interval[1] else f"{interval[0]:.1%}–{interval[1]:.1%}"


def report(root: Path, as_json: bool, markdown: bool = False) -> int:
    got = figures(results(root), recorded(root)["equivalent"])
    if as_json:
        print(json.dumps({path: {**asdict(row), "rate": row.rate, "interval": row.interval}
                          for path, row in got.items()}, indent=1))
        return 0
    if markdown:  # the table of docs/benchmarks.md: modules with a result
        print("| module | killed | survived | equivalent | not run | kill rate | 95% (Wilson) |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for path, row in got.items():
            if row.rate is not None:
                print(f"| `{path}` | {row.killed} | {row.survived} | {row.equivalent} | {row.not_checked} | "
                      f"{row.rate:.1%} | {_shown(row.interval)} |")
        return 0
    print(f"{'module':36} {'killed':>7} {'survived':>9} {'equiv.':>7} {'unrun':>6} {'rate':>7} {'95% (Wilson)':>14}")
    for path, row in got.items():
        shown = "—" if row.rate is None else f"{row.rate:.1%}"
        print(f"{path:36} {row.killed:>7} {row.survived:>9} {row.equivalent:>7} {row.not_checked:>6} {shown:>7} "
              f"{_shown(row.interval):>14}")
    for name in (n for row in got.values() for n in row.survivors):
        print(f"survived: {name}   (python -m mutmut show {name.split()[0]}, in {root})")
    return 0


def dropped(now: Row, then: dict[str, Any]) -> bool:
    """Whether `now` is below the figure recorded as `then` by more than sampling can explain. Where both cover
    every mutant of the module, any drop counts. Otherwise either is a sample (a run within a budget, or one drawn
    at random): the drop counts only when the two 95% Wilson intervals do not meet, so that a rate resting on a
    few mutants (whose interval is wide) cannot fail the check by the luck of the draw, and a real loss (a test
    removed, a rule no test reaches) still does."""
    if not now.judged or not (judged := then["killed"] + then["survived"]):
        return False
    if now.not_checked == 0 and then["complete"]:
        return now.killed / now.judged < then["killed"] / judged
    return wilson(now.killed, now.judged)[1] < wilson(then["killed"], judged)[0]


def check(root: Path) -> int:
    """Exit 1 when a module's kill rate, or the total, dropped below the recorded one (`dropped`)."""
    data = recorded(root)
    got = figures(results(root), data["equivalent"])
    lower = [f"{path}: {got[path].killed}/{got[path].judged} killed now, {then['killed']}/"
             f"{then['killed'] + then['survived']} recorded" for path, then in sorted(data["recorded"].items())
             if path in got and dropped(got[path], then)]
    for line in lower:
        print(f"kill rate dropped: {line}", file=sys.stderr)
    then = data["recorded"].get("total")
    was = wilson(then["killed"], then["killed"] + then["survived"]) if then else None
    print(f"total kill rate {got['total'].rate} {_shown(got['total'].interval)} "
          f"(recorded {then and then['rate']} {_shown(was)})")
    return 1 if lower else 0


def record(root: Path) -> int:
    data = recorded(root)
    got = figures(results(root), data["equivalent"])
    data["recorded"] = {path: {"killed": row.killed, "survived": row.survived, "complete": row.not_checked == 0,
                               "rate": row.rate} for path, row in got.items() if row.rate is not None}
    (root / RECORD).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"recorded {len(data['recorded'])} kill rate(s) in {RECORD}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=ROOT, help="the project (its pyproject.toml's [tool.mutmut])")
    sub = parser.add_subparsers(dest="command", required=True)
    h = sub.add_parser("hand", help="remove each trust rule by hand in a copy; its tests must fail")
    h.add_argument("--rule", action="append", default=[])
    h.add_argument("--timeout", type=float, default=600.0)
    r = sub.add_parser("run", help="mutmut over modules, resuming")
    r.add_argument("paths", nargs="*")
    r.add_argument("--max-children", type=int, default=2)
    r.add_argument("--sample", type=int, help="at most this many mutants of each module (with a result)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--budget-s", type=float, help="stop after this many seconds (resumed by the next run)")
    r.add_argument("--again", action="store_true",
                   help="run the survivors again (after tests were added); others only with --sample")
    r.add_argument("--clean", action="store_true", help="run the mutants' tests unmutated first, as mutmut does")
    r.add_argument("--tests-per-mutant", type=int, default=0,
                   help="run each mutant against its module's own test files and N other tests, the fastest (0: "
                        "all its tests); a kill rate so is a lower bound")
    p = sub.add_parser("report", help="kill rates and survivors")
    p.add_argument("--json", action="store_true")
    p.add_argument("--markdown", action="store_true", help="the table docs/benchmarks.md shows")
    sub.add_parser("check", help="exit 1 where a kill rate dropped below the recorded one")
    sub.add_parser("record", help="record today's kill rates")
    args = parser.parse_args()
    if args.command == "hand":
        return hand(args.rule, args.timeout)
    root = args.root.resolve()
    if args.command == "run":
        return run(root, args.paths, args.max_children, args.sample, args.seed, args.budget_s, args.clean,
                   args.tests_per_mutant, args.again)
    if args.command == "report":
        return report(root, args.json, args.markdown)
    return check(root) if args.command == "check" else record(root)


if __name__ == "__main__":
    sys.exit(main())
