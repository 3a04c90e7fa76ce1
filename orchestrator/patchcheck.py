"""What a patch made elsewhere may write, decided before it is applied here.

A round item worked elsewhere (a submitit job, a GitHub Actions work job) sends back its change as a binary patch,
made on a machine that ran Worker-written code. The gates read only what `git add -A` would commit, so a patch is
refused whole, each offending path named, when it would write

- anything under a `.lake` folder: Lake's build outputs and dependencies, which git ignores and so no gate reads,
  but which every Lean run here trusts (a planted module `.olean` with a matching `.trace` is compiled against);
- a Lean build output by its name (`.olean`, `.ilean`), such as an older Lake's `lakefile.olean`, which Lake reads
  in place of the lakefile;
- a path git ignores that the base does not track: never committed, so never gated, yet left in the working copy
  for every Lean run (by the base's ignore rules before the patch is applied, and by the patch's own after, for
  a patch that changes a `.gitignore`);
- anything but a regular file: a symlink (`lakefile.lean -> ~/.ssh/id_rsa`, committed and followed by every
  checkout; the scope gate refuses one leaving the tree in any tree too) or a submodule.

Paths and modes are git's own reading of the patch: `git apply --numstat`, then the patch applied to a scratch
index of the base, whose entries are exactly what the working copy would commit (old names of renames included).
"""

from __future__ import annotations

from gates.issues import shown
from orchestrator.git import Git

LAKE = ".lake"
OUTPUTS = (".olean", ".ilean")  # what Lean reads in place of a source
REGULAR = frozenset({"100644", "100755", "000000"})  # a file, an executable one, or none (deleted)
SYMLINK = "120000"


def refusals(work: Git, base: str, patch: bytes) -> list[str]:
    """Why `patch` may not be applied in `work` (whose files and ignore rules are read as they are now) at `base`:
    one line per offending path; empty when it may. GitError when it is no patch, or does not apply at `base`."""
    found = _by_name(work, base, work.patch_paths(patch))
    if found:  # said by name, even of a patch that would not apply to the base's index
        return found
    modes = work.patch_modes(patch, base)
    found = _by_name(work, base, list(modes))
    found += [f"{shown(path)} ({'a symlink' if mode == SYMLINK else f'mode {mode}, not a regular file'})"
              for path, mode in sorted(modes.items()) if mode not in REGULAR]
    return found


def _by_name(work: Git, base: str, paths: list[str]) -> list[str]:
    tracked = set(work.listing(base))
    ignored = work.ignored([p for p in paths if p not in tracked])
    out = []
    for path in dict.fromkeys(paths):
        if LAKE in path.split("/"):
            out.append(f"{shown(path)} (under {LAKE}: Lake's build outputs and dependencies)")
        elif path.endswith(OUTPUTS):
            out.append(f"{shown(path)} (a Lean build output)")
        elif path in ignored:
            out.append(f"{shown(path)} (ignored by git: {shown(ignored[path])})")
    return out
