"""What the gates must compile again when a change that passed against one base is re-applied onto another.

A round's item is gated against the round's base B. When it lands, earlier items have moved the branch to H, and
the change is re-applied there: the merged tree M holds the item's files (`ours`, changed from B by the item) and
the landed items' files (`theirs`, changed from B to H). Why a verdict of the item's own gates carries over:

- Lean elaborates a file from its own text and the texts of the project files it imports, transitively (its
  import closure), the toolchain and the dependencies. Call a file's closure in M "ours-only" when it holds a
  file of `ours` and none of `theirs`: every file in it then has the text it had in the item's tree, so (the
  imports being read from those same texts) it is the same closure there, and Lean's answer on the file is the
  one the item's build got. A closure holding only files of `theirs` is H's, which the earlier items' gates
  answered for; one holding neither is B's and was never the item's to check.
- So only a file whose closure in M holds both a file of `ours` and one of `theirs` can compile differently from
  what either side's gates saw (B's change harmless alone, breaking a file importing both; A renaming a lemma
  B's new proof uses; B relying on an instance A removed): those are compiled again. `ImportGraph.dependents`
  gives, for a set of paths, every file whose closure holds one, a deleted file counted through the importers
  still naming its module, so the set is `dependents(ours) ∩ dependents(theirs)` in M's graph.
- The kernel gate's answers on the item's declarations come from the closures of the files holding them (every
  file it asks about imports, or is, a file of `ours`), plus the project declarations the claimed proofs name
  (anywhere in the project: their verdicts excuse a sorryAx) and the statement lock. They carry over only when
  nothing is compiled again, no declaration the item's changed files name lies in a file whose closure holds one
  of `theirs`, and no lock entry of a declaration in a file the change reaches differs from what its gates used;
  otherwise the whole kernel gate runs again.
- Lean can also read files outside the import graph: a Lake or toolchain file changes every compile, and with
  `[gates] allow_build_time_code` `include_str` reads any file. A change to one on either side (any non-Lean
  file, with build-time code) re-gates in full, as does a `.lean` file outside the Lean roots.

The textual gates (scope, integrity, secrets, sorry, size) always run again on the whole re-applied change. The
successors gate runs whenever the kernel gate does: a user of the item's statements that landed since its base
lies in a file importing the item's files (or in one of them), so that file's closure holds both sides: it is
compiled again against the item's statement, and the kernel and successors gates run again on the moved base.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gates.census import Census
from gates.probe import Names, canonical
from gates.tree import is_lean_source

BUILD_FILES = frozenset({"lakefile.lean", "lakefile.toml", "lean-toolchain", "lake-manifest.json"})


@dataclass(frozen=True)
class Recheck:
    """What a re-applied change's build compiles (`files`; None: all its gates would) and whether the kernel gate
    asks Lean again; `why` says what carried over."""

    files: frozenset[str] | None
    kernel: bool
    why: str


def plan(after: Census, ours: Iterable[str], theirs: Iterable[str], roots: list[str], *,
         build_time_code: bool = False, relocked: Iterable[str] = ()) -> Recheck:
    """The recheck of a change whose files `ours` passed every gate against a base, re-applied (giving `after`)
    onto a branch whose files `theirs` changed since that base; `relocked` names the declarations whose statement
    lock entry differs from what the change's gates used."""
    ours, theirs = set(ours), set(theirs)
    outside = sorted(p for p in ours | theirs if not is_lean_source(p, roots) and (
        build_time_code or p.endswith(".lean") or p.rsplit("/", 1)[-1] in BUILD_FILES))
    if outside:
        return Recheck(None, True, f"{outside[0]} changed, which Lean may read outside the import graph: every gate "
                                   "runs again")
    lean_ours = {p for p in ours if is_lean_source(p, roots)}
    lean_theirs = {p for p in theirs if is_lean_source(p, roots)}
    graph = after.graph
    reached = graph.dependents(lean_ours)
    moved = graph.dependents(lean_theirs)
    files = frozenset(reached & moved)
    if files:
        return Recheck(files, True, f"{len(files)} file(s) import both this change and what landed since its base")
    names = Names(after, roots)
    named = {names.decls[k][0] for path in lean_ours if path in after.files for d in after.files[path].decls
             for k in names.written(f"{d.statement_text} {d.body_code}", d.name or "") if k in names.decls}
    if seen := sorted(named & moved):
        return Recheck(files, True, f"the change names declarations of {seen[0]}, which imports what landed since "
                                    "its base: the kernel gate asks Lean again")
    if relocked := sorted(n for n in relocked if (d := names.decls.get(canonical(n))) is not None and d[0] in reached):
        return Recheck(files, True, f"the statement lock changed for {relocked[0]} since the change was gated: the "
                                    "kernel gate asks Lean again")
    return Recheck(files, False, "no file's imports hold both this change and what landed since its base: "
                                 "the verdicts of its build and kernel gates against the base carry over")
