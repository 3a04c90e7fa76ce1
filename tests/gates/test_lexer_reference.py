"""The lexer's masking equals an independent reference model of Lean's tokenizer on generated Lean-like text.

The text is built from the forms that can desync a lexer, glued with and without blanks between them: names
ending in `!`, `?` or primes, keywords whose argument is an interpolated string, strings holding braces,
quotes and comment markers, raw strings, character literals, the `''` and `⁻¹'` tokens, numerals, nested and
doc comments, escaped names; long runs of `#`, digits and name characters (past any look-back window); Unicode
digits, which start no numeral; tokens a project declares that hold a comment or string start (`+--`, `+"`);
`#` commands glued to the term before them. Which interpolating keywords exist is drawn per example, as a file's
imports decide it. Text on which Lean itself reports a lexical error is left out. Besides: no text at all makes
the lexer or the index raise or run long.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from gates.header import Keywords
from gates.index import index_source
from gates.lexer import lex
from tests.gates.lean_reference import KEYWORDS, reference_commands, reference_mask

LONG_HASHES = "#" * 300
NAMES = ["x", "h'", "h''", "hide!", "foo?", "x₁", "α", "Nat.succ", "a.b'", "«weird \" -- name»", "r", "s", "m",
         "throwError", "Lean.throwError", "logInfo", "panic!", "trace", "sorry", "xs.r", "_root_.sorryAx", "fun'",
         "e", "b2", "ab", "F", "x.«a b»", "x" + "0" * 300, "y" + "z" * 300, "é", "café'"]
NUMBERS = ["0", "12", "1_000", "0x1F", "2.5", "2.", "1e5", "0b101", "3", "0" * 300, "7" * 280 + ".5"]
SYMBOLS = [":=", ".", " .. ", ",", "''", "⁻¹'", "Σ'", "+", "@", "`", "#", "$", "←", "=", ":", "|", "-", "/", "*",
           "₁", "²", "٣", ".₁", "#eval", "#exit", "#guard_msgs", "#check", "#[", "trivial#eval", "1#exit"]
CHARS = ["'a'", "'\\''", "'\"'", "'\\n'", "'{'", "'}'", "'\\x41'", "'-'", "'\\\\'", "'«'", "'₁'"]
STRING_BITS = ["a", " ", "{", "}", "\\n", '\\"', "\\\\", "--", "/-", "'", "-/", "«", "#"]
COMMENT_BITS = ["a", " ", '"', "'", "-", "/", "{", "}", "«", "\n", "#"]
INTERPOLATING = ["s!", "m!", "f!", "throwError ", "println! ", "dbg_trace ", "throwErrorAt stx ", "throwErrorAt (f x) ",
                 "throwErrorAt ref.raw ", "throwErrorAt stx[0] ", "trace[Meta.debug] ", "throwNamedError lean.x ",
                 "logNamedWarningAt @ref foo ", "Macro.trace[x] ", "aesop_trace[step] ", "hide! ", "x.s!",
                 "`s!", "logInfo ", "throwErrorAt ٣ "]
# Tokens a project may declare: Lean's `isValidAtom` restricts only their first character.
PROJECT_TOKENS = ["+--", '+"', "x«", "+/-", "+'", "≤'"]
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
    hashes = draw(st.sampled_from(["", "#", "##", LONG_HASHES]))
    bits = [b for b in STRING_BITS if hashes or '"' not in b]
    body = "".join(draw(st.lists(st.sampled_from(bits + (['"', '"#'] if hashes else [])), max_size=5)))
    return f"r{hashes}\"{body}\"{hashes}"


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


keyword_sets = st.sets(st.sampled_from(sorted(KEYWORDS))).map(frozenset)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(lean_like(), keyword_sets)
def test_the_masking_is_lean_s(text: str, present: frozenset[str]) -> None:
    """Where the imports decide every keyword, the lexer reads exactly what Lean reads."""
    expected = reference_mask(text, present)
    assume(expected is not None)
    assert lex(text, Keywords(present, frozenset())).code == expected


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(lean_like(), keyword_sets, keyword_sets)
def test_a_keyword_the_imports_may_bring_is_read_both_ways(text: str, present: frozenset[str],
                                                          unknown: frozenset[str]) -> None:
    """A keyword that may or may not exist: the lexer reads it as one, and where Lean's reading without it differs,
    it notes the spot as ambiguous."""
    unknown -= present
    without, with_ = reference_mask(text, present), reference_mask(text, present | unknown)
    assume(without is not None and with_ is not None)
    lexed = lex(text, Keywords(present, unknown))
    assert lexed.code == with_
    assert lexed.ambiguous or without == with_, text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from([*NAMES[:12], *NUMBERS[:4], *SYMBOLS[:12], *CHARS[:4], *PROJECT_TOKENS,
                                           '"a"', '"{"', "/- c -/", "-- c\n", "«n»", "'", '"']),
                          plain_string()), max_size=10).map("".join),
       st.sets(st.sampled_from(PROJECT_TOKENS), min_size=1).map(lambda s: tuple(sorted(s))))
def test_a_project_token_holding_a_literal_start_is_noted(text: str, tokens: tuple[str, ...]) -> None:
    """Where a token the project declared may be read across a comment or literal start, the spot is noted: Lean
    reads one token there when the token is in scope, and what the lexer reads when it is not."""
    without, with_ = reference_mask(text), reference_mask(text, extra=tokens)
    assume(without is not None and with_ is not None)
    lexed = lex(text, Keywords(KEYWORDS, frozenset(), tokens))
    assert lexed.code == without
    assert lexed.ambiguous or without == with_, text


@given(st.lists(st.sampled_from([*NAMES, *NUMBERS, *SYMBOLS, *CHARS, '"{"', '"}"', "'", '"', "/-", "-/", "{", "}"]),
                max_size=12).map(lambda parts: "".join(parts)))
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@example("..1_000'a'")  # after a `..` token a numeral, not a field index: `'a'` is a character literal
def test_glued_tokens_are_split_as_lean_splits_them(text: str) -> None:
    expected = reference_mask(text)
    assume(expected is not None)
    assert lex(text, Keywords(KEYWORDS, frozenset())).code == expected


@given(st.lists(st.sampled_from([*NAMES[:12], *NUMBERS, "#eval", "#exit", "#guard_msgs", "#check", "#[", " ", "\n",
                                 "(", ")", "'a'", '"#eval"', "/- #exit -/", "«#eval»", "trivial", ":= by"]),
                max_size=12).map("".join))
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
def test_every_hash_command_lean_reads_is_seen(text: str) -> None:
    """`#eval`, `#exit` and `#guard_msgs` are tokens wherever a token starts, glued to what is before them or not."""
    expected = reference_commands(text)
    assume(expected is not None)
    wanted = {"#eval", "#exit", "#guard_msgs"}
    index = index_source("T.lean", text, Keywords(KEYWORDS, frozenset()))
    assert sorted((m.line, m.kind) for m in index.markers if m.kind in wanted) == sorted(
        (line, command) for line, command in expected if command in wanted), text


class _TooLong(Exception):
    pass


@contextmanager
def _within(seconds: float) -> Iterator[None]:
    """Fail, rather than hang, when the body runs longer than `seconds` (wall clock)."""
    def stop(signum: int, frame: object) -> None:
        raise _TooLong(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300) | st.lists(st.sampled_from([*SYMBOLS, *NAMES[:12], *CHARS, "'", '"', "{", "}", "«",
                                                         "s!", "import Lean\n", "throwError ", "r#", "\\"]),
                                        max_size=40).map("".join))
def test_no_text_makes_the_lexer_or_the_index_fail_or_hang(text: str) -> None:
    with _within(5):
        lexed = lex(text)
        index = index_source("T.lean", text)
    assert len(lexed.code) == len(text)
    assert index.lines >= 0


def test_long_runs_take_linear_time() -> None:
    """Runs a look-back window would cut, or a walk back from each `'` would make quadratic."""
    n = 200_000
    for text in ["a'" * (n // 2), "0'" * (n // 2), "x" + "0" * n + "'\"'", "r" + "#" * n + '"\\"' + "#" * n,
                 "x.1'" * (n // 4), '"' * n, ('hide! "{' * 300) + "x"]:
        with _within(20):
            lex(text)
            index_source("T.lean", text)
