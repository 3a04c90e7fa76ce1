"""What must be on disk before a sandboxed cycle starts: the sandbox has no network.

Inside it, elan cannot download the toolchain `lean-toolchain` names, nor
Lake the dependencies `lake-manifest.json` lists: a compile would fail with
a download error that names neither. `cycle` and `run` check both first and
say which command fetches what is missing, to be run in your checkout.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from gates.config import SandboxConfig
from gates.sandbox import elan_home
from state.errors import UsageError

_NAME = re.compile(r"(?:([A-Za-z0-9_-]+/[A-Za-z0-9_-]+):)?([A-Za-z0-9.-]+)")
"""A toolchain name as elan reads it (src/elan/toolchain.rs): `[owner/repo:]release`."""
CHANNELS = ("stable", "beta", "nightly", "lean-toolchain")
"""Names elan resolves over the network each time it runs."""
ORIGIN = "leanprover/lean4"


def check(repo: Path, config: SandboxConfig) -> None:
    """Refuse (exit 2) a sandboxed start whose toolchain or dependencies would have to be downloaded inside."""
    if config.mode == "none":
        return
    if found := problems(repo):
        raise UsageError("; ".join(found) + ". The sandbox that compiles the Worker's code has no network: "
                         "run these in your checkout first (the GitHub workflow does)")


def problems(repo: Path) -> list[str]:
    """What is missing on disk for an offline compile: the toolchain `lean-toolchain` names, the dependencies."""
    return [*_toolchain(repo), *_dependencies(repo)]


def toolchain_dir(name: str, elan: Path) -> Path | None:
    """Where elan keeps the toolchain `name`, or None when elan would ask the network which it is."""
    m = _NAME.fullmatch(name)
    if m is None:
        return None
    origin, release = m.group(1), m.group(2)
    linked = elan / "toolchains" / release
    if origin is None and linked.is_symlink():  # `elan toolchain link`
        return linked
    if release in CHANNELS:
        return None
    origin = origin or ORIGIN
    if release.startswith("nightly") and not origin.endswith("-nightly"):
        origin += "-nightly"
    if release[0].isdigit():
        release = "v" + release
    return elan / "toolchains" / f"{origin}:{release}".replace("/", "--").replace(":", "---")


def _toolchain(repo: Path) -> list[str]:
    file, elan = repo / "lean-toolchain", elan_home()
    if not file.is_file() or not elan.is_dir():  # no elan here: Lean comes some other way
        return []
    name = (file.read_text(encoding="utf-8").strip().splitlines() or [""])[0].strip()
    where = toolchain_dir(name, elan)
    if where is None:
        return [f"lean-toolchain names `{name}`, which elan would look up on the network at every run; name a "
                f"release (`{ORIGIN}:v4.…`), as `elan toolchain list` shows them"]
    if not where.exists():
        return [f"the toolchain `{name}` that lean-toolchain names is not installed in {elan}: run "
                f"`elan toolchain install {name}`"]
    return []


def _dependencies(repo: Path) -> list[str]:
    manifest = repo / "lake-manifest.json"
    if not manifest.is_file():
        return []
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        packages_dir = repo / data.get("packagesDir", ".lake/packages")
        missing = sorted(p["name"] for p in data.get("packages", [])
                         if p.get("type", "git") == "git" and not (packages_dir / p["name"]).is_dir())
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        return [f"lake-manifest.json cannot be read ({type(e).__name__}: {e}); run `lake update` to rewrite it"]
    if not missing:
        return []
    return [f"the dependencies {', '.join(missing)} of lake-manifest.json are not in {packages_dir.relative_to(repo)}: "
            "run `lake exe cache get` (Mathlib's prebuilt files, its dependencies cloned first) or `lake build`"]
