"""The lexer's masking equals an independent reference model of Lean's tokenizer on generated Lean-like text.

The text is built from the forms that can desync a lexer, glued with and without blanks between them: names
ending in `!`, `?` or primes, keywords whose argument is an interpolated string, strings holding braces,
quotes and comment markers, raw strings, character literals, the `''` and `⁻¹'` tokens, numerals, nested and
doc comments, escaped names. Text on which Lean itself reports a lexical error is left out.
"""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gates.lexer import lex
from tests.gates.lean_reference import reference_mask

NAMES = ["x", "h'", "h''", "hide!", "foo?", "x₁", "α", "Nat.succ", "a.b'", "«weird \" -- name»", "r", "s", "m",
         "throwError", "Lean.throwError", "logInfo", "panic!", "trace", "sorry", "xs.r", "_root_.sorryAx", "fun'",
         "e", "b2", "ab", "F", "x.«a b»"]
NUMBERS = ["0", "12", "1_000", "0x1F", "2.5", "2.", "1e5", "0b101", "3"]
SYMBOLS = [":=", ".", " .. ", ",", "''", "⁻¹'", "Σ'", "+", "@", "`", "#", "$", "←", "=", ":", "|", "-", "/", "*"]
CHARS = ["'a'", "'\\''", "'\"'", "'\\n'", "'{'", "'}'", "'\\x41'", "'-'", "'\\\\'", "'«'"]
STRING_BITS = ["a", " ", "{", "}", "\\n", '\\"', "\\\\", "--", "/-", "'", "-/", "«"]
COMMENT_BITS = ["a", " ", '"', "'", "-", "/", "{", "}", "«", "\n"]
INTERPOLATING = ["s!", "m!", "f!", "throwError ", "println! ", "dbg_trace ", "throwErrorAt stx ", "throwErrorAt (f x) ",
                 "throwErrorAt ref.raw ", "throwErrorAt stx[0] ", "trace[Meta.debug] ", "throwNamedError lean.x ",
                 "logNamedWarningAt @ref foo ", "Macro.trace[x] ", "aesop_trace[step] ", "hide! ", "x.s!",
                 "`s!", "logInfo "]
GLUE = ["", " ", "\n"]


def _join(draw: st.DrawFn, parts: list[str]) -> str:
    return "".join(p + draw(st.sampled_from(GLUE)) for p in parts)


@st.composite
def comment(draw: st.DrawFn) -> str:
    body = "".join(draw(st.lists(st.sampled_from(COMMENT_BITS), max_size=6)))
    kind = draw(st.sampled_from(["--", "/-", "/--", "/-!", "/-/", "/--/", "/-- --", "/-/- -/"]))
    if kind == "--":
        return "--" + body.replace("\n", " ") + "\n"
    inner = draw(st.sampled_from(["", "/- a -/", "/- /- b -/ -/", "-- c\n"]))
    return f"{kind}{body}{inner} -/"


@st.composite
def plain_string(draw: st.DrawFn) -> str:
    return '"' + "".join(draw(st.lists(st.sampled_from(STRING_BITS), max_size=6))) + '"'


@st.composite
def raw_string(draw: st.DrawFn) -> str:
    hashes = draw(st.integers(0, 2))
    bits = [b for b in STRING_BITS if hashes or '"' not in b]
    body = "".join(draw(st.lists(st.sampled_from(bits + (['"'] if hashes else [])), max_size=5)))
    return f"r{'#' * hashes}\"{body}\"{'#' * hashes}"


def code(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Fragments of code; `inner` is code for the insides of groups and interpolations."""

    @st.composite
    def interpolated(draw: st.DrawFn) -> str:
        pieces = draw(st.lists(st.one_of(st.sampled_from(STRING_BITS[:2] + STRING_BITS[4:]),
                                         inner.map(lambda c: "{" + c + "}")), max_size=4))
        return draw(st.sampled_from(INTERPOLATING)) + '"' + "".join(pieces) + '"'

    @st.composite
    def group(draw: st.DrawFn) -> str:
        opener, closer = draw(st.sampled_from([("(", ")"), ("[", "]"), ("{", "}"), ("⟨", "⟩")]))
        return opener + draw(inner) + closer

    return st.one_of(st.sampled_from(NAMES), st.sampled_from(NUMBERS), st.sampled_from(SYMBOLS),
                     st.sampled_from(CHARS), plain_string(), raw_string(), comment(), interpolated(), group())


@st.composite
def text_of(draw: st.DrawFn, fragments: st.SearchStrategy[str]) -> str:
    return _join(draw, draw(st.lists(fragments, max_size=8)))


def lean_like() -> st.SearchStrategy[str]:
    return st.recursive(st.sampled_from(NAMES + NUMBERS + CHARS),
                        lambda inner: text_of(code(inner)), max_leaves=30)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(lean_like())
def test_the_masking_is_lean_s(text: str) -> None:
    expected = reference_mask(text)
    assume(expected is not None)
    assert lex(text).code == expected


@given(st.lists(st.sampled_from([*NAMES, *NUMBERS, *SYMBOLS, *CHARS, '"{"', '"}"', "'", '"', "/-", "-/", "{", "}"]),
                max_size=12).map(lambda parts: "".join(parts)))
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
def test_glued_tokens_are_split_as_lean_splits_them(text: str) -> None:
    expected = reference_mask(text)
    assume(expected is not None)
    assert lex(text).code == expected
