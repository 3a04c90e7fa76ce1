"""Parsing diagnostics as `lean` and `lake` print them (samples quoted in public issues)."""

from __future__ import annotations

from gates.diagnostics import Severity, parse_diagnostics


def test_lean_format_with_multiline_message() -> None:
    # Shape from github.com/avigad/mathematics_in_lean_source/pull/123 (raw `lean` output).
    output = """\
./lake-packages/aesop/././Aesop/Util/Basic.lean:94:20: error: unknown identifier 'getConst?'
./lake-packages/aesop/././Aesop/Util/Basic.lean:96:15: error: invalid field notation, type is not of the form (C ...)
  info
has type
  ?m.2849 decl
P1/BlockE.lean:33:8: warning: declaration uses `sorry`
"""
    ds = parse_diagnostics(output)
    assert [(d.file, d.line, d.column, d.severity) for d in ds] == [
        ("lake-packages/aesop/././Aesop/Util/Basic.lean", 94, 20, Severity.ERROR),
        ("lake-packages/aesop/././Aesop/Util/Basic.lean", 96, 15, Severity.ERROR),
        ("P1/BlockE.lean", 33, 8, Severity.WARNING)]
    assert ds[1].message.endswith("(C ...)\n  info\nhas type\n  ?m.2849 decl")


def test_lake_build_format_with_progress_lines() -> None:
    # Shapes from github.com/cslib-community/fad/issues/76 and rems-project/sail/issues/1160.
    output = """\
⚠ [8680/8694] Replayed Fad.«Chapter5-Ex»
warning: Fad/Chapter5-Ex.lean:148:0: declaration uses `sorry`
✖ [725/765] Building LoVe.X
error: ././././Out.lean:94:18: unknown identifier 'k_var'
info: Fad/Chapter12.lean:142:0: 7
Some required builds logged failures:
- LoVe.X
error: build failed
"""
    ds = parse_diagnostics(output)
    assert [(d.file, d.line, d.severity, d.message) for d in ds] == [
        ("Fad/Chapter5-Ex.lean", 148, Severity.WARNING, "declaration uses `sorry`"),
        ("Out.lean", 94, Severity.ERROR, "unknown identifier 'k_var'"),
        ("Fad/Chapter12.lean", 142, Severity.INFO, "7")]


def test_lake_prefix_repeated_and_named_errors_and_end_positions() -> None:
    # Shape from github.com/lean-dojo/LeanCopilot/issues/69, and newer Lean's named errors.
    output = """\
error: ././.lake/packages/X/lakefile.lean:109:25: error: application type mismatch
  Glob.submodules "LeanCopilotTests"
warning: ././x.lean:119:57: warning: `Lake.SchedulerM` has been deprecated
Book/A.lean:3:4-3:9: error(lean.unknownIdentifier): unknown identifier 'foo'
"""
    ds = parse_diagnostics(output)
    assert [(d.file, d.line, d.column, d.severity) for d in ds] == [
        (".lake/packages/X/lakefile.lean", 109, 25, Severity.ERROR),
        ("x.lean", 119, 57, Severity.WARNING),
        ("Book/A.lean", 3, 4, Severity.ERROR)]
    assert ds[0].message == 'application type mismatch\n  Glob.submodules "LeanCopilotTests"'
    assert ds[2].message == "unknown identifier 'foo'"


def test_colour_codes_are_ignored() -> None:
    ds = parse_diagnostics("\x1b[31merror\x1b[0m: Book/A.lean:1:2: boom\n")
    assert [(d.file, d.severity, d.message) for d in ds] == [("Book/A.lean", Severity.ERROR, "boom")]


def test_lines_that_are_not_diagnostics_are_ignored() -> None:
    assert parse_diagnostics("Build completed successfully (12 jobs).\nsomething else\n") == []
