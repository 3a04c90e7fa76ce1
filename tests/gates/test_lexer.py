"""The lexer masks exactly comments, strings and character literals, keeping offsets and lines."""

from __future__ import annotations

import pytest

from gates.index import index_source
from gates.lexer import SpanKind, lex


def holes(source: str) -> list[tuple[str, int, int]]:
    return [(h.keyword, h.line, h.column) for h in index_source("T.lean", source).holes]


def test_masked_code_keeps_length_and_newlines() -> None:
    source = 'def a := "x\ny" -- c\n/- b\nc -/ def b := 1\n'
    lexed = lex(source)
    assert len(lexed.code) == len(source)
    assert lexed.code.count("\n") == source.count("\n")
    assert "def b := 1" in lexed.code


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("theorem t : True := sorry -- sorry\n", [("sorry", 1, 20)]),
        ("/- sorry /- nested sorry -/ still comment sorry -/ theorem t : True := sorry\n", [("sorry", 1, 71)]),
        ("/-- doc with sorry -/\ntheorem t : True := sorry\n", [("sorry", 2, 20)]),
        ("/-! module doc, sorry -/\nexample : True := sorry\n", [("sorry", 2, 18)]),
        ('def s := "a sorry \\" still sorry"\nexample : True := sorry\n', [("sorry", 2, 18)]),
        ('def s := "line one\n sorry on line two"\nexample : True := sorry\n', [("sorry", 3, 18)]),
        ('def s := r"raw \\ sorry"\nexample : True := sorry\n', [("sorry", 2, 18)]),
        ('def s := r#"raw " sorry "#\nexample : True := sorry\n', [("sorry", 2, 18)]),
        ('def s := r"ends here\\" sorry\n', [("sorry", 1, 23)]),
        ('def s := r##"a "# sorry"##\nexample : True := sorry\n', [("sorry", 2, 18)]),
        ("def c := '\"'\nexample : True := sorry -- \"\n", [("sorry", 2, 18)]),
        ("def c := '\\''\ndef d := \"sorry\"\nexample : True := sorry\n", [("sorry", 3, 18)]),
        ("theorem «sorry lemma» : True := sorry\n", [("sorry", 1, 32)]),
        ("theorem «a -- b» : True := sorry\n", [("sorry", 1, 27)]),
        ("theorem sorry_free : True := trivial\ndef is_sorry := 1\ndef Foo.sorry' := Nat.sorry\n", []),
        ("example : True := by admit\n", [("admit", 1, 21)]),
        ("example : admit_lemma = foo.admit := rfl\n", []),
    ],
    ids=["line-comment", "nested-block", "doc", "module-doc", "escaped-quote", "multiline-string", "raw",
         "raw-hash", "raw-no-escapes", "raw-two-hashes", "char-quote", "char-escaped-quote", "guillemets",
         "guillemet-dashes", "identifiers", "admit", "admit-in-names"],
)
def test_only_code_sorries_count(source: str, expected: list[tuple[str, int, int]]) -> None:
    assert holes(source) == expected


def test_interpolated_string_braces_hold_code() -> None:
    source = 'def m := s!"no sorry here {sorry} nor {"nested {x} sorry"} here"\n'
    assert holes(source) == [("sorry", 1, 27)]


def test_interpolated_string_with_nested_braces_and_chars() -> None:
    source = 'def m := m!"{ {a := 1}.a } and {\'}\'} sorry {f "}" }"\nexample : True := sorry\n'
    assert holes(source) == [("sorry", 2, 18)]


def test_plain_string_braces_are_text() -> None:
    assert holes('def m := "{sorry}"\n') == []


def test_throw_error_string_is_interpolated_where_lean_is_imported() -> None:
    assert holes('import Lean\ndef f : IO Unit := throwError "bad {sorry}"\n') == [("sorry", 2, 36)]
    assert holes('import Mathlib.Tactic\ndef f : IO Unit := throwError "bad {sorry}"\n') == [("sorry", 2, 36)]


@pytest.mark.parametrize("header", ["", "import Book.Basic\n", "prelude\n", "import Std.Data\n"])
def test_throw_error_is_a_name_where_nothing_shows_lean_is_imported(header: str) -> None:
    """`throwError` is Lean's syntax only where `Lean.Exception` is imported; elsewhere a file may define it, and
    Lean reads a plain string after it. Where the imports may bring it, both readings are compared."""
    source = header + ('def throwError (s : String) : String := s\ndef msg := throwError "{ "\n'
                       'axiom cheat : False\n-- " }"\n')
    lexed = lex(source)
    if header in ("", "prelude\n"):  # nothing imported brings `Lean`: a plain string, the axiom is code
        assert axioms(source) == ["cheat"] and lexed.ambiguous == []
    else:
        assert [m for _, m in lexed.ambiguous] == [
            "the string after `throwError` reads differently as plain and as interpolated text (Lean reads it "
            "interpolated only where `throwError` is a keyword, which the file's imports do not show); write it so "
            "both readings agree"]


@pytest.mark.parametrize(("header", "word", "plain"), [
    ("prelude\n", "s!", True), ("", "s!", False), ("", "m!", True), ("import Lean.Elab.Command\n", "m!", False),
    ("", "trace[c]", True), ("import Lean\n", "trace[c]", False),
])
def test_which_keywords_exist_follows_the_imports(header: str, word: str, plain: bool) -> None:
    source = f'{header}def x := {word} "{{sorry}}"\n'
    assert (holes(source) == []) is plain, lex(source).code


def test_prime_is_not_a_char_literal() -> None:
    # `h'` then `"` must not be read as the literal `'"'`.
    source = "theorem t (h' : a = b) (h'' : c) : True := by\n  have := h'\n  exact sorry\n"
    assert holes(source) == [("sorry", 3, 8)]


def test_image_notation_is_not_a_char_literal() -> None:
    source = "theorem t : f '' s = s := sorry\n"
    assert holes(source) == [("sorry", 1, 26)]


def test_comment_markers_inside_strings_are_text() -> None:
    source = 'def a := "-- not a comment"\ndef b := "/- not a comment"\nexample : True := sorry\n'
    assert holes(source) == [("sorry", 3, 18)]


def test_string_quotes_inside_comments_are_text() -> None:
    source = '/- an unmatched " quote -/\n-- and another "\nexample : True := sorry\n'
    assert holes(source) == [("sorry", 3, 18)]


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("theorem t : True := sorry\n/- never closed sorry", "block comment is never closed"),
        ('def s := "never closed sorry', "string literal is never closed"),
        ('def s := r#"never closed', "raw string is never closed"),
        ('def s := s!"{never closed', "ends inside an interpolated string"),
        ("def «never closed := sorry", "escaped identifier"),
    ],
)
def test_file_ending_inside_a_construct_is_reported(source: str, problem: str) -> None:
    lexed = lex(source)
    assert any(problem in p for p in lexed.problems), lexed.problems
    assert len(lexed.code) == len(source)


def test_unclosed_comment_hides_what_follows() -> None:
    assert holes("theorem t : True := sorry\n/- never closed sorry") == [("sorry", 1, 20)]


def test_span_kinds() -> None:
    source = "/-- d -/ /-! m -/ /- c -/ -- l\n\"s\" 'c' r\"r\""
    kinds = [s.kind for s in lex(source).spans]
    assert kinds == [SpanKind.DOC, SpanKind.MODULE_DOC, SpanKind.COMMENT, SpanKind.COMMENT, SpanKind.STRING,
                     SpanKind.CHAR, SpanKind.STRING]


def test_columns_count_code_points() -> None:
    # Lean's columns are 0-based code points: `ℝ` and `→` are one each.
    source = "theorem t (x : ℝ) : x → x := sorry\n"
    assert holes(source) == [("sorry", 1, 29)]


def axioms(source: str) -> list[str | None]:
    return [d.name for d in index_source("T.lean", source).axioms]


HIDDEN_AXIOM = '\naxiom trustMe : False\ndef later := "}"\n'


@pytest.mark.parametrize("prefix", [
    'def hide! (s : String) : String := s\ndef x := hide! "{"',
    'def x : Lean.MetaM Unit := Lean.logInfo "{"',
    'def x : Lean.MetaM Unit := logInfo "{"',
    'def x : Lean.MetaM Unit := Lean.throwError "{"',
    'def x := foo? "{"',
    'def x := xs.s! "{"',
    'def x := `s! "{"',
])
def test_a_name_that_is_no_keyword_is_followed_by_a_plain_string(prefix: str) -> None:
    assert axioms(prefix + HIDDEN_AXIOM) == ["trustMe"]


def test_a_string_after_an_unknown_bang_name_is_flagged_when_the_readings_differ() -> None:
    lexed = lex('def x := hide! "{"' + HIDDEN_AXIOM)
    assert [m for _, m in lexed.ambiguous] == [
        "the string after `hide!` reads differently as plain and as interpolated text (Lean reads it plain, unless "
        "`hide!` is syntax taking `interpolatedStr`); write it so both readings agree"]
    assert lex('def x := panic! "{"' + HIDDEN_AXIOM).ambiguous == []
    assert lex('def x := hide! "{}" ++ "a"\n').ambiguous == []  # no code in the braces: the readings agree


def test_a_string_whose_readings_end_alike_but_mask_different_code_is_flagged() -> None:
    """Both readings of `warn! "{…}"` end at the same quote, but only the interpolated one runs the braces."""
    lexed = lex('theorem t : 2 + 2 = 4 := warn! "{(by native_decide : 2 + 2 = 4)}"\n')
    assert [m for _, m in lexed.ambiguous] == [
        "the string after `warn!` reads differently as plain and as interpolated text (Lean reads it plain, unless "
        "`warn!` is syntax taking `interpolatedStr`); write it so both readings agree"]


@pytest.mark.parametrize("source", [
    'def m := s!"a {"}"} b"\naxiom ax : False\n',
    'def m := m!"{ {a := 1}.a } {"{" ++ "}"}"\naxiom ax : False\n',
    'def m := f! /- c -/ "{"}"}"\naxiom ax : False\n',
    'def m := throwError "{"}"}"\naxiom ax : False\n',
    'def m := println! "{"}"}"\naxiom ax : False\n',
    'def m := throwErrorAt stx[0] "{"}"}"\naxiom ax : False\n',
    'def m := throwErrorAt (mkIdent "x") "{"}"}"\naxiom ax : False\n',
    'def m := do trace[Meta.debug] "{"}"}"\naxiom ax : False\n',
    'def m := do Macro.trace[x] "{"}"}"\naxiom ax : False\n',
])
def test_interpolated_strings_after_lean_s_keywords_hold_code(source: str) -> None:
    source = "import Lean\n" + source
    lexed = lex(source)
    assert axioms(source) == ["ax"], lexed.code
    assert lexed.problems == [] and lexed.ambiguous == []


def test_a_named_error_macro_is_read_both_ways_whatever_the_imports() -> None:
    """`throwNamedErrorAt` is syntax of `Lean.ErrorExplanation` in some releases, a builtin keyword of every file in
    later ones, and absent before: the toolchain decides, so a string after it is read both ways."""
    lexed = lex('import Lean\ndef m := throwNamedErrorAt ref lean.unknown "{"}"}"\naxiom ax : False\n')
    assert next(m for _, m in lexed.ambiguous).startswith("the string after `throwNamedErrorAt` reads differently")
    assert lex('import Lean\ndef m := throwNamedError lean.x "no braces"\n').ambiguous == []


def test_dbg_trace_is_interpolated_in_a_term_and_plain_in_a_tactic() -> None:
    lexed = lex('example : True := by dbg_trace "{"}"}"; trivial\n')
    assert next(m for _, m in lexed.ambiguous).startswith("the string after `dbg_trace` reads differently")


@pytest.mark.parametrize(("source", "expected"), [
    ("/-/- -/\naxiom a : False\n/- -/\n", ["a"]),  # Lean skips the character after `/-`
    ("/--/ axiom hidden : False -/\naxiom a : False\n", ["a"]),  # `/--` opens a doc comment
    ("/-- -- -/\naxiom hidden : False -/\naxiom a : False\n", ["a"]),  # blanks after `/--` hold comments
    ("/-! /- -/ x -/\naxiom a : False\n", ["a"]),
])
def test_comment_openers_read_as_lean_reads_them(source: str, expected: list[str]) -> None:
    assert axioms(source) == expected


@pytest.mark.parametrize("source", [
    'def x := x.r"a\\" "\naxiom a : False\n',  # a dotted name `x.r`, then a string with an escaped quote
    'def x := `r"a\\" "\naxiom a : False\n',  # a name literal
    "def x := f ⁻¹''\"'\naxiom a : False\n",  # the token `⁻¹'`, then the literal '"'
    "def x := (Σ''\"', 1)\naxiom a : False\n",  # the token `Σ'`, then a literal
    "def x := 2'\"'\naxiom a : False\n",  # a numeral, then a literal
    'def x := 2.r"a"\naxiom a : False\n',  # `2.` is a numeral: the raw string starts a token
])
def test_tokens_around_quotes_split_as_in_lean(source: str) -> None:
    assert axioms(source) == ["a"], lex(source).code


def test_a_prime_is_no_literal_so_a_string_follows() -> None:
    assert axioms("def x := x₁'\"'\naxiom a : False\"\naxiom b : False\n") == ["b"]


def test_a_hash_command_is_a_token_before_a_character_literal() -> None:
    """`#check'"'` is the command, then the literal `'"'` (every toolchain has `#check`): no string starts there."""
    assert axioms("#check'\"'\naxiom cheat : False -- \"\n") == ["cheat"]
    lexed = lex("#evalx'\"' \"\naxiom cheat : False\n")  # `#eval`, then the name `x'`, then the string `"' "`
    assert axioms(lexed.text) == ["cheat"] and lexed.ambiguous == []


def test_a_literal_after_a_hash_word_that_may_be_a_command_is_flagged() -> None:
    lexed = lex("#find'\"'\naxiom cheat : False -- \"\n")
    assert [m for _, m in lexed.ambiguous] == [
        "a character literal right after `#find`, a command token only where a command of that name exists; put a "
        "space before it"]
