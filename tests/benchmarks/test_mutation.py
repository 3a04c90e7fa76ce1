"""`benchmarks/mutation.py` run once, on one small module of a project of its own: mutants made, a sample run by
mutmut against the tests that reach them, the figures read back, a drop below the recorded rate caught."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import mutation as mutation_script
from mutation import Row

from tests.conftest import write

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "mutation.py"
PYPROJECT = """\
[tool.pytest.ini_options]
testpaths = ["tests"]
pythonpath = ["."]

[tool.mutmut]
source_paths = ["gates"]
only_mutate = ["gates/seccomp.py"]
pytest_add_cli_args_test_selection = ["tests"]
"""
FILTER_TEST = """\
import errno
import struct

from gates import seccomp


def test_the_filter_refuses_user_namespaces_and_io_uring() -> None:
    code = seccomp.program("x86_64")
    assert code is not None and len(code) % 8 == 0
    rows = [struct.unpack_from("<HBBI", code, i) for i in range(0, len(code), 8)]
    assert {425, 426, 427, 56, 272, 435} <= {k for _, _, _, k in rows}
    assert (0x45, 0, 0, 0x10000000) in [(op, 0, 0, k) for op, _, _, k in rows]
    assert (0x06, 0, 0, 0x00050000 | errno.EPERM) in rows
"""


def mutation(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root), *args], capture_output=True, text=True,
                          timeout=300)


def test_the_script_runs_a_sample_of_one_module_and_reports_it(tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(ROOT / "gates", root / "gates", ignore=shutil.ignore_patterns("__pycache__"))
    write(root, {"pyproject.toml": PYPROJECT, "tests/test_filter.py": FILTER_TEST})

    spent = mutation(root, "run", "gates/seccomp.py", "--sample", "6", "--max-children", "1", "--budget-s", "0")
    assert spent.returncode == 0, spent.stdout[-3000:] + spent.stderr[-3000:]
    unrun = json.loads(mutation(root, "report", "--json").stdout)["gates/seccomp.py"]
    # Past its budget none is started: only a mutant no test reaches has a result (mutmut gives it without a run).
    assert unrun["killed"] == 0 and all(s.endswith("(no tests)") for s in unrun["survivors"])
    assert f"{6 - unrun['survived']} mutant(s) asked for have no result yet" in spent.stdout

    ran = mutation(root, "run", "gates/seccomp.py", "--sample", "6", "--max-children", "1", "--budget-s", "600")

    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert "have no result yet" not in ran.stdout
    figures = json.loads(mutation(root, "report", "--json").stdout)
    row = figures["gates/seccomp.py"]
    assert row["killed"] + row["survived"] == 6 and row["not_checked"] > 0
    assert row["rate"] == round(row["killed"] / 6, 4) and figures["total"]["killed"] == row["killed"]
    assert len(row["survivors"]) == row["survived"]

    # Recorded as all but certainly perfect (10,000 of 10,000): any survivor in the sample is a drop beyond chance.
    perfect = {"killed": 10_000, "survived": 0, "complete": False, "rate": 1.0}
    write(root, {"benchmarks/mutation.json": json.dumps({"recorded": {"gates/seccomp.py": perfect},
                                                         "equivalent": {}})})
    assert mutation(root, "check").returncode == (1 if row["survived"] else 0)
    assert mutation(root, "record").returncode == 0
    kept = json.loads((root / "benchmarks/mutation.json").read_text())["recorded"]["gates/seccomp.py"]
    assert kept == {"killed": row["killed"], "survived": row["survived"], "complete": False, "rate": row["rate"]}
    assert mutation(root, "check").returncode == 0
    again = mutation(root, "run", "gates/seccomp.py", "--sample", "6")  # resumed: nothing left to run
    assert again.returncode == 0 and "== gates/seccomp.py" not in again.stdout

    if row["survivors"]:  # a survivor accepted as equivalent leaves the rate
        name = row["survivors"][0].split()[0]
        write(root, {"benchmarks/mutation.json": json.dumps({"recorded": {}, "equivalent": {name: "why"}})})
        now = json.loads(mutation(root, "report", "--json").stdout)["gates/seccomp.py"]
        assert (now["equivalent"], now["survived"], now["killed"]) == (1, row["survived"] - 1, row["killed"])


def recorded(killed: int, survived: int, complete: bool) -> dict[str, object]:
    return {"killed": killed, "survived": survived, "complete": complete, "rate": killed / (killed + survived)}


def test_a_drop_counts_only_beyond_what_sampling_explains() -> None:
    # Both figures over every mutant of the module: one more survivor is a drop.
    assert mutation_script.dropped(Row(killed=99, survived=1), recorded(100, 0, True))
    assert not mutation_script.dropped(Row(killed=100, survived=0), recorded(100, 0, True))
    # Either a sample: a rate resting on a few mutants cannot fail by the luck of the draw...
    assert not mutation_script.dropped(Row(killed=18, survived=2, not_checked=280), recorded(20, 0, False))
    assert not mutation_script.dropped(Row(killed=270, survived=30), recorded(20, 0, False))
    assert not mutation_script.dropped(Row(killed=1, survived=1, not_checked=9), recorded(19, 1, False))
    # ...while a real loss (the tests of a rule removed) does.
    assert mutation_script.dropped(Row(killed=30, survived=30, not_checked=240), recorded(95, 5, False))
    assert mutation_script.dropped(Row(killed=150, survived=150), recorded(19, 1, False))
    assert mutation_script.dropped(Row(killed=1, survived=1, not_checked=9), recorded(400, 0, True))  # had none
    assert not mutation_script.dropped(Row(), recorded(19, 1, False))  # nothing run yet: nothing to compare


def test_the_wilson_interval() -> None:
    assert mutation_script.wilson(20, 20) == (0.8389, 1.0)
    assert mutation_script.wilson(0, 10) == (0.0, 0.2775)
    low, high = mutation_script.wilson(95, 100)
    assert (low, high) == (0.8882, 0.9785) and low < 0.95 < high


def test_each_hand_removed_rule_is_found_once_where_it_lives_and_its_tests_exist() -> None:
    for h in mutation_script.HAND:
        assert (ROOT / h.path).read_text(encoding="utf-8").count(h.old) == 1, h.rule
        for test in h.tests:
            file, _, name = test.partition("::")
            assert (ROOT / file).is_file(), test
            assert not name or f"def {name}(" in (ROOT / file).read_text(encoding="utf-8"), test
