"""What runs as a module is loaded (`gates/hooks.py`): the probe never loads a module that imports such code."""

from __future__ import annotations

import pytest

from gates.census import census
from gates.hooks import refused
from gates.tree import MemTree

HOOKS = {
    "initialize": ("initialize pure ()\n", "Book/Init.lean:1: initialize (run as the module is imported)"),
    "builtin_initialize": ("builtin_initialize pure ()\n",
                           "Book/Init.lean:1: builtin_initialize (run as the module is imported)"),
    "@[init]": ("def go : IO Unit := pure ()\n\n@[init go] def hook : Unit := ()\n",
                "Book/Init.lean:3: @[init] on hook"),
    "@[builtin_init]": ("def go : IO Unit := pure ()\n\n@[simp, builtin_init go] def hook : Unit := ()\n",
                        "Book/Init.lean:3: @[builtin_init] on hook"),
    "@[init] in a second group": ("def go : IO Unit := pure ()\n\n@[simp] @[init go] def hook : Unit := ()\n",
                                  "Book/Init.lean:3: @[init] on hook"),
    "both": ("def go : IO Unit := pure ()\n\n@[init go, builtin_init go] def hook : Unit := ()\n",
             "Book/Init.lean:3: @[builtin_init, init] on hook"),
    "attribute [init]": ("def go : IO Unit := pure ()\ndef hook : Unit := ()\n\nattribute [init go] hook\n",
                         "Book/Init.lean:4: `attribute [init go] hook`"),
    "attribute [builtin_init]": ("def go : IO Unit := pure ()\ndef hook : Unit := ()\n\n"
                                 "attribute [builtin_init go] hook\n",
                                 "Book/Init.lean:4: `attribute [builtin_init go] hook`"),
}


@pytest.mark.parametrize("name", list(HOOKS))
def test_code_run_on_loading_is_found_through_every_import(name: str) -> None:
    text, said = HOOKS[name]
    files = {"Book/Init.lean": text, "Book/A.lean": "import Book.Init\n", "Book/C.lean": "import Book.A\n",
             "Book/B.lean": "theorem b : True := trivial\n"}
    tree = census(MemTree({p: t.encode() for p, t in files.items()}), ["Book"])

    assert refused(tree, ["Book.C"]) == refused(tree, ["Book.A"]) == refused(tree, ["Book.Init"]) == [said]
    assert refused(tree, ["Book.B"]) == []


def test_an_ordinary_attribute_runs_nothing() -> None:
    tree = census(MemTree({"Book/A.lean": b"@[simp] theorem t : True := trivial\n\nattribute [local simp] t\n"}),
                  ["Book"])
    assert refused(tree, ["Book.A"]) == []
