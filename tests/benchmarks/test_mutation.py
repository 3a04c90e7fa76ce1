"""`benchmarks/mutation.py` run once, on one small module of a project of its own: mutants made, a sample run by
mutmut against the tests that reach them, the figures read back, a drop below the recorded rate caught."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

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

    ran = mutation(root, "run", "gates/seccomp.py", "--sample", "6", "--max-children", "1")

    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    figures = json.loads(mutation(root, "report", "--json").stdout)
    row = figures["gates/seccomp.py"]
    assert row["killed"] + row["survived"] == 6 and row["not_checked"] > 0
    assert row["rate"] == round(row["killed"] / 6, 4) and figures["total"]["killed"] == row["killed"]
    assert len(row["survivors"]) == row["survived"]

    write(root, {"benchmarks/mutation.json": json.dumps({"recorded": {"gates/seccomp.py": 1.01}, "equivalent": {}})})
    assert mutation(root, "check").returncode == 1  # below the recorded rate
    assert mutation(root, "record").returncode == 0
    assert mutation(root, "check").returncode == 0
    again = mutation(root, "run", "gates/seccomp.py", "--sample", "6")  # resumed: nothing left to run
    assert again.returncode == 0 and "== gates/seccomp.py" not in again.stdout
