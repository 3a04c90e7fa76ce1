"""Who wrote what, and who may write it: the protected files, the issues' provenance, and the Worker's notes.

No agent writes the book's text, the plan, the standing rules or a person's approvals: they join `[gates]
protected`, which both the Worker's tools and the integrity gate enforce. An issue's author is read from git:
a reserved name is the orchestrator's (the judge's findings, the Consultant's advice, its notices) or, for
`review-*`, the person whose rejection opened it (the author of its last commit, the verdict's), a file
last changed by a cycle's commit (trailer `Autoformalize-Cycle`) was opened by that cycle's Worker, one last
changed by any other commit is a person's. A rejected cycle lands none of the Worker's files: the issues it
opened go into its task result instead.
"""

from __future__ import annotations

from agents.briefs import IssueText
from audit.book import trusted
from gates.issues import REVIEW, SLUG, issue_dir, reserved, shown, slug_of
from orchestrator.config import Config
from orchestrator.git import Git, GitTree
from orchestrator.housekeeping import last_changed_cycle
from orchestrator.repo import LAKE_FILES
from state.paths import StatePaths
from state.reviews import ISSUE_PREFIX

NOTE_CHARS = 4000  # of each issue a rejected Worker opened, kept in its task result


def protected(config: Config) -> list[str]:
    """Every glob no Worker change may touch: `[gates] protected`, the plan, the book's text and the approvals.
    A Lake project in a folder has its own lakefile, toolchain and manifest there: each of those `[gates]
    protected` names is protected in that folder too."""
    extra = [config.project.plan, config.gates.restate_approvals, config.gates.reviews, *trusted(config.audit)]
    lake_dir = config.project.lake_dir
    if lake_dir != ".":
        extra += [f"{lake_dir}/{name}" for name in config.gates.protected if name in LAKE_FILES]
    return list(dict.fromkeys([*config.gates.protected, *extra]))


def issues(git: Git, rev: str, paths: StatePaths) -> list[IssueText]:
    """The open issues of commit `rev`, newest first, each with its author: regular files only, never a link (whose
    blob is a path, perhaps to a file outside the repository) nor a submodule (no blob at all)."""
    tree = GitTree(git, rev)
    state_dir = paths.relative(paths.root)
    regular = {entry.split("\t", 1)[1] for entry in git.run("ls-tree", "-z", rev, "--", f"{issue_dir(state_dir)}/")
               .split("\0") if entry.startswith(("100644 ", "100755 "))}
    found = [(p, slug) for p in tree.files() if (slug := slug_of(p, state_dir)) is not None and p in regular]
    if not found:
        return []
    cycles, by_person = last_changed_cycle(git, rev, paths)

    def author(path: str, slug: str) -> str:
        if slug.startswith(ISSUE_PREFIX):  # a person's rejection, opened with the verdict in their name
            who = git.run("log", "-1", "--format=%an <%ae>", rev, "--", path).strip() if path in by_person else ""
            return f"a person ({who})" if who else REVIEW
        owner = reserved(slug)
        if owner is not None:
            return owner
        if path in by_person:
            return "a person"
        return f"the Worker of cycle {cycles[path]}" if path in cycles else "an unrecorded author"

    def text(path: str, slug: str) -> str:
        if not SLUG.fullmatch(slug):  # git's object reader cannot even name a file with a newline in its name
            return f"(not read: {shown(slug)} is not a valid issue name; rename or remove the file)"
        return tree.read(path).decode("utf-8", "replace")

    found.sort(key=lambda ps: (-cycles.get(ps[0], 0), ps[1]))
    return [IssueText(slug, text(path, slug), author(path, slug), cycles.get(path, 0)) for path, slug in found]


def opened(changed: list[str], state_dir: str) -> list[str]:
    """The issues a change opened (the gates let a Worker open issues only, never change one)."""
    return [slug for p in changed if (slug := slug_of(p, state_dir)) is not None]


def notes(work: Git, commit: str, changed: list[str], state_dir: str) -> str:
    """The issues a rejected change opened, for its task result: they do not land as issues."""
    parts = []
    for path in changed:
        slug = slug_of(path, state_dir)
        if slug is None:
            continue
        try:
            text = GitTree(work, commit).read(path).decode("utf-8", "replace").strip()
        except FileNotFoundError:  # a deletion the gates refused, or a name git's object reader cannot take
            continue
        clipped = text if len(text) <= NOTE_CHARS else text[:NOTE_CHARS] + " […]"
        parts.append(f"### {shown(slug)}\n\n" + "\n".join(f"> {line}" for line in clipped.splitlines()))
    if not parts:
        return ""
    return ("## Issues the Worker opened (not landed: the change was rejected)\n\n" + "\n\n".join(parts))
