"""The gates' own kernel replay (`gates/replay.py`), for toolchains without leanchecker: what its program's output
must hold before the kernel gate takes it as a replay, read from outputs as Lean would print them (the program itself
runs in `tests/gates/test_kernel.py` through the stand-in, and elaborates on a real Lean in `tests/real`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from gates.diagnostics import CheckResult
from gates.env import Unreadable
from gates.replay import check, read

NONCE = "feed01"


def framed(*items: object) -> str:
    lines = [f"{NONCE} {k} {json.dumps(item)}" for k, item in enumerate(items)]
    return "\n".join([*lines, f"{NONCE} {len(items)} {json.dumps(['E', len(items)])}"])


P_A = ["P", ["Book", "A"], "/w/.lake/build/lib/lean/Book/A.olean", 7]
P_B = ["P", ["Book"], "/w/.lake/build/lib/lean/Book.olean", 1]
R = ["R", "/elan/toolchains/v4.24.0", "/w"]
INIT = ["F", ["Init"], "/elan/toolchains/v4.24.0/lib/lean/Init.olean"]


def test_a_replay_is_read_with_its_verdict() -> None:
    got = read(framed(P_A, R, INIT, ["K", 5, 1, 1]), NONCE)
    assert (got.files, got.loaded, got.project, got.constants, got.checked, got.refused) == (
        {"Book.A": "/w/.lake/build/lib/lean/Book/A.olean"}, {"Init": INIT[2]}, "/w", 7, (5, 1, 1), None)
    assert read(framed(P_A, ["D", "(kernel) declaration type mismatch"]), NONCE).refused == \
        "(kernel) declaration type mismatch"


@pytest.mark.parametrize(("output", "why"), [
    (framed(P_A), "no single verdict"),
    (framed(P_A, ["K", 7, 0, 0], ["D", "x"]), "no single verdict"),
    (framed(P_A, ["C", {}], ["K", 7, 0, 0]), "a line the program never prints"),
    (framed(P_A, ["K", 7]), "a line the program never prints"),
    (framed(P_A, ["K", 7, 0, 0]).rsplit("\n", 1)[0], "no last line"),
    (framed(P_A, ["K", 7, 0, 0]).replace(f"{NONCE} 1 ", f"{NONCE} 2 "), "where line 1 was due"),
])
def test_an_answer_out_of_place_or_without_one_verdict_is_unreadable(output: str, why: str) -> None:
    with pytest.raises(Unreadable, match=why):
        read(output, NONCE)


@dataclass
class Printed:
    """`lake env lean` that printed `output` and exited with `code`: what the process boundary hands back."""

    output: str
    code: int | None = 0
    built: list[str] = field(default_factory=list)

    def read(self, text: str, timeout_s: float | None = None) -> CheckResult:
        assert "namespace AutoformalizeReplay" in text and '[[\\"Book\\"], [\\"Book\\", \\"A\\"]]' in text
        return CheckResult("lake env lean Probe.lean", self.code, self.output.replace(NONCE, self.nonce(text)), 1.0)

    def probe(self, text: str) -> CheckResult:
        self.built.append(text)
        return CheckResult("lake lean Probe.lean", 1 if "Book.B" in text else 0, "", 1.0)

    @staticmethod
    def nonce(text: str) -> str:
        return text.split('def nonce : String := "', 1)[1].split('"', 1)[0]


FILES = {"Book.A": "/w/.lake/build/lib/lean/Book/A.olean", "Book": "/w/.lake/build/lib/lean/Book.olean"}
OURS = {"Book", "Book.A", "Book.B"}


OK = ["K", 8, 0, 0]
PLANTED = ["F", ["Evil"], "/w/.lake/build/lib/lean/Evil.olean"]


@pytest.mark.parametrize(("output", "code", "problem"), [
    (framed(P_B, P_A, R, INIT, OK), 0, None),
    (framed(P_B, P_A, R, INIT, ["F", ["Book", "B"], "/w/.lake/build/lib/lean/Book/B.olean"], OK), 0,
     "Book.B: a module of the project the replay took as it is"),
    (framed(P_B, P_A, R, INIT, PLANTED, OK), 0, "Evil: Lean loaded it from /w/.lake/build/lib/lean/Evil.olean"),
    (framed(P_B, R, INIT, ["K", 1, 0, 0]), 0, "Book.A: the replay did not read it"),
    (framed(P_B, [*P_A[:2], "/tmp/A.olean", 7], R, INIT, OK), 0, "Book.A: the replay read /tmp/A.olean, the listing"),
    (framed(P_B, P_A, ["S", ["Book", "A"], ".private"], R, INIT, OK), 0, "Book.A: it keeps a part apart"),
    (framed(P_B, P_A, R, INIT, ["K", 6, 1, 0]), 0, "the replay accounts for 7 of the 8 constants it read"),
    (framed(P_B, P_A, R, INIT, ["D", "(kernel) declaration type mismatch, 'Book.x'"]), 0,
     "Lean's kernel refused a constant"),
    (framed(P_B, P_A, R, INIT, ["D", "(kernel) deterministic timeout"]), 0, "within Lean's default `maxHeartbeats`"),
    (framed(P_B, P_A, R, INIT, OK), 1, "Lean reported an error while replaying"),
    ("PANIC at Lean.Environment.replay\n" + framed(P_B, P_A, R, INIT, OK), 0, "Lean panicked while replaying"),
    ("Replay.lean:56:14: error: unknown constant 'Lean.Environment.replay'", 1, "could not be read"),
])
def test_a_replay_passes_only_when_the_kernel_added_every_module_asked_about_from_the_listed_files(
        output: str, code: int, problem: str | None) -> None:
    problems, done = check(Printed(output, code), ["Book", "Book.A"], FILES, OURS)  # type: ignore[arg-type]
    if problem is None:
        assert problems == [] and done == "Lean's kernel added again the 8 constants of Book, Book.A", problems
    else:
        assert len(problems) == 1 and problem in problems[0], problems


def test_a_module_the_listing_did_not_load_is_built_before_it_is_replayed() -> None:
    lean = Printed(framed(P_B, P_A, R, INIT, OK))
    problems, _ = check(lean, ["Book", "Book.A"], {"Book.A": FILES["Book.A"]}, OURS)  # type: ignore[arg-type]
    assert problems == [] and lean.built == ["import Book\n"]
    assert check(lean, ["Book", "Book.A"], FILES, OURS)[0] == [] and lean.built == ["import Book\n"]  # all loaded
    failing = Printed(framed(P_B, P_A, R, INIT, OK))
    problems, _ = check(failing, ["Book", "Book.A", "Book.B"], FILES, OURS)  # type: ignore[arg-type]
    assert len(problems) == 1 and "the modules to replay do not build (Book.B)" in problems[0]


def test_a_replay_that_timed_out_says_so() -> None:
    problems, _ = check(Printed("", None), ["Book", "Book.A"], FILES, OURS)  # type: ignore[arg-type]
    assert problems == ["the kernel's replay timed out after 1s (`[build] timeout_s`)"]
