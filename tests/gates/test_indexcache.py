"""The census of a commit through the index cache equals a census made afresh: after any sequence of edits, renames,
deletions, header and token changes, with the in-memory entries dropped or the cache's files corrupted on the way."""

from __future__ import annotations

import json
import random
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from leangen import Tally, lean_file

from gates import indexcache
from gates.census import Census, census
from gates.tree import DirTree
from orchestrator.git import Git, GitTree
from tests.conftest import git

DATA = Path(__file__).resolve().parent.parent / "data" / "lean"
ROOTS = ["Book"]
# Headers that change what the lexer takes for keywords: `throwError` is one only where `Lean` is imported,
# through the project's own files too; `prelude` drops Init's.
HEADERS = ["", "import Mathlib\n", "import Lean\n", "prelude\nimport Init.Prelude\n", "import Book.K0\n",
           "import Book.K1\n", "import Book.K0\nimport Lean.Elab\n"]
KEYWORDED = 'def msg{n} : String := throwError "x {{sorry}} y {{"z"}}"\n\ntheorem k{n} : True := by\n  sorry\n'
TOKEN = 'infixl:65 " +-- " => Nat.add\n'
TOKENED = "theorem tok{n} : 1 +-- 2 = 3 := by\n  sorry\n"


def snapshot(c: Census) -> object:
    """Everything a census says of its files, the declarations' statements and the texts read lazily included."""
    files = {}
    for path, f in c.files.items():
        decls = [(d.kind, d.name, d.line, d.modifiers, d.attributes, d.holes, d.start, d.end, d.header, d.shape,
                  d.context, d.top, d.doc, d.key, d.statement_hash, d.text_hash, d.statement_text, d.statement, d.body,
                  d.body_code) for d in f.decls]
        files[path] = (f.path, f.lines, f.problems, f.imports, f.prelude, f.keywords, f.tokens, f.registered,
                       f.commands, f.scopes, f.macros, f.holes, f.markers, f.digest, f.text, decls)
    return files, c.problems, c.to_json(), c.holes


def commit(root: Path) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", "step")
    return git(root, "rev-parse", "HEAD").strip()


def check(root: Path) -> None:
    head = commit(root)
    kept = census(GitTree(Git(root), head), ROOTS)
    assert snapshot(kept) == snapshot(census(DirTree(root), ROOTS))


@contextmanager
def repository(files: dict[str, str]) -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="indexcache-"))
    try:
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        git(root, "init", "-q", "-b", "main")
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)
        indexcache._LIVE.clear()


def initial(seed: int) -> dict[str, str]:
    rng = random.Random(seed)
    files = {f"Book/G{i}.lean": lean_file(f"Book.G{i}", 4, rng, Tally()) for i in range(3)}
    files["Book/K0.lean"] = "import Lean\n\n" + KEYWORDED.format(n=0)
    files["Book/K1.lean"] = "import Book.K0\n\n" + KEYWORDED.format(n=1)
    files["Book/K2.lean"] = "import Book.K1\n\n" + KEYWORDED.format(n=2) + TOKENED.format(n=2)
    for data in sorted(DATA.glob("*.lean")):
        files[f"Book/Real/{data.name}"] = data.read_text(encoding="utf-8")
    return files


def _lean(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in (root / "Book").rglob("*.lean"))


def _set_header(text: str, header: str) -> str:
    lines = text.split("\n")
    body = [ln for ln in lines if not ln.startswith(("import ", "prelude"))]
    return header + "\n".join(body)


def apply(root: Path, op: tuple[str, int, int]) -> None:
    kind, a, b = op
    paths = _lean(root)
    path = root / paths[a % len(paths)] if paths else None
    if kind == "add" or path is None:
        (root / f"Book/N{a}_{b}.lean").write_text(HEADERS[b % len(HEADERS)] + KEYWORDED.format(n=f"{a}_{b}"))
    elif kind == "edit":
        text = path.read_text(encoding="utf-8")
        if b % 3 == 0:
            text = text.replace("sorry", "simp", 1)
        elif b % 3 == 1:
            text += f"\ntheorem added_{a}_{b} : True := sorry\n"
        else:
            lines = text.split("\n")
            del lines[b % max(1, len(lines))]
            text = "\n".join(lines)
        path.write_text(text, encoding="utf-8")
    elif kind == "rename":
        target = root / f"Book/R{a}_{b}.lean"
        if not target.exists():
            path.rename(target)
    elif kind == "delete":
        path.unlink()
    elif kind == "header":
        path.write_text(_set_header(path.read_text(encoding="utf-8"), HEADERS[b % len(HEADERS)]), encoding="utf-8")
    elif kind == "token":
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(TOKEN, "") if TOKEN in text else text + "\n" + TOKEN, encoding="utf-8")
    elif kind == "forget":  # a new process: every entry read from the cache's files
        indexcache._LIVE.clear()
    elif kind == "corrupt":
        entries = sorted((root / ".git" / "autoformalize" / "census").glob("*.json"))
        if entries:
            corrupt(entries[a % len(entries)], b)
            indexcache._LIVE.clear()


def corrupt(file: Path, how: int) -> None:
    raw = file.read_text(encoding="utf-8")
    digest, _, body = raw.partition("\n")
    data = json.loads(body)
    if how % 5 == 0:  # cut short
        file.write_text(raw[: len(raw) // 2], encoding="utf-8")
    elif how % 5 == 1:  # one character changed: the digest no longer matches
        file.write_text(digest + "\n" + body.replace("1", "2", 1), encoding="utf-8")
    elif how % 5 == 2:  # another format, with a digest that matches
        data["format"] = indexcache.FORMAT + 1
        _sealed(file, data)
    elif how % 5 == 3:  # a malformed row, with a digest that matches
        for row in data["indexes"].values():
            row[4] = "not a line count"
        _sealed(file, data)
    else:
        file.write_bytes(b"\xff\xfe not text")


def _sealed(file: Path, data: object) -> None:
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    import hashlib
    file.write_text(hashlib.sha256(body.encode()).hexdigest() + "\n" + body, encoding="utf-8")


OPS = st.tuples(st.sampled_from(["edit", "edit", "rename", "delete", "header", "header", "add", "token", "forget",
                                 "corrupt"]), st.integers(0, 50), st.integers(0, 50))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 1000), ops=st.lists(OPS, min_size=1, max_size=8))
def test_the_kept_census_equals_a_fresh_one_after_any_changes(seed: int, ops: list[tuple[str, int, int]]) -> None:
    with repository(initial(seed)) as root:
        check(root)
        for op in ops:
            apply(root, op)
            check(root)


def test_a_corrupted_entry_is_rebuilt_never_trusted(tmp_path: Path) -> None:
    with repository(initial(1)) as root:
        check(root)
        folder = root / ".git" / "autoformalize" / "census"
        entries = sorted(folder.glob("*.json"))
        assert len(entries) == len(_lean(root))
        good = {e.name: e.read_text(encoding="utf-8") for e in entries}
        for how, entry in enumerate(entries[:5]):
            corrupt(entry, how)
            assert entry.read_text(encoding="utf-8", errors="replace") != good[entry.name]
        indexcache._LIVE.clear()
        check(root)
        # Each unreadable entry was indexed again from its blob and written back whole.
        assert {e.name: e.read_text(encoding="utf-8") for e in sorted(folder.glob("*.json"))} == good


def test_an_unchanged_file_is_read_from_the_cache_and_a_changed_one_indexed(tmp_path: Path) -> None:
    with repository(initial(2)) as root:
        check(root)
        folder = root / ".git" / "autoformalize" / "census"
        before = {e.name: e.stat().st_mtime_ns for e in folder.glob("*.json")}
        (root / "Book/G0.lean").write_text((root / "Book/G0.lean").read_text() + "\ntheorem z : True := sorry\n")
        indexcache._LIVE.clear()
        check(root)
        after = {e.name: e.stat().st_mtime_ns for e in folder.glob("*.json")}
        assert len(set(after) - set(before)) == 1  # the changed file's new blob
        assert all(after[name] == stamp for name, stamp in before.items())  # nothing else rewritten


def test_a_header_change_reindexes_its_importers_whose_blobs_did_not_change(tmp_path: Path) -> None:
    with repository(initial(3)) as root:
        check(root)
        k1 = census(GitTree(Git(root), commit(root)), ROOTS).files["Book/K1.lean"]
        assert "throwError" in k1.keywords.present if k1.keywords else False
        # K0 no longer imports Lean: K1 and K2, unchanged, lex `throwError "…{sorry}…"` as a plain string now.
        (root / "Book/K0.lean").write_text(_set_header((root / "Book/K0.lean").read_text(), ""))
        check(root)
        k1 = census(GitTree(Git(root), commit(root)), ROOTS).files["Book/K1.lean"]
        assert k1.keywords is not None and "throwError" not in k1.keywords.present
