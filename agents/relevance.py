"""What in the repository's state concerns a target, by the identifiers texts share, never by common words.

An identifier is a token shaped like a Lean name or a path: it holds `_`, `'`, a digit after a letter, a dot or a
slash between word characters, or a capital after a small letter (`QuotEquiv.bSeries`, `rk_order`, `Chapter3`,
`OpenMath/ButcherGroup.lean`); "with" or "order" never is one. A dotted or slashed one also
stands for each of its tails (`QuotEquiv.bSeries` for `bSeries`, a path for its file name), as texts name a
declaration with or without its namespace, and a file for its stem (an issue's slug). Among many texts, an
identifier most of them hold (the project's root namespace) tells none apart and is not counted.

Here: the issues a target concerns (`touching`), the plan read by section around its Current Target
(`plan_parts`, `fit`), and whether a Consultant's advice is older than its subject (`named`, `stale`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gates.census import Census
from gates.index import Decl
from state.history import HistoryRecord

_TOKEN = re.compile(r"[^\W\d][\w'.₀-₉/-]*[\w'₀-₉]")
_SHAPED = re.compile(r"_|'|[^\W\d_]\d|\w[./]\w|[a-z][A-Z]")
_ADVICE = re.compile(r"^consultant_advice\D*(\d+)")
_HEADING = re.compile(r"^(##)\s+(.+?)\s*#*\s*$", re.MULTILINE)
_EXTENSION = re.compile(r"\.(lean|md|tex|txt)$")  # a file named by its stem too: an issue by its slug
MIN_CHARS = 4
COMMON_SHARE = 0.5  # an identifier more than this share of the texts hold tells none apart
NEXT_WORK = re.compile(r"backlog|blocker|frontier|next|queue|todo|deferred|priorit|do not", re.I)


def identifiers(text: str) -> set[str]:
    """The identifiers `text` names, each with its dotted and slashed tails."""
    out: set[str] = set()
    for token in _TOKEN.findall(text):
        token = token.strip("./-").removesuffix("'s")  # "Butcher's" is a possessive, not a name
        if len(token) < MIN_CHARS or not _SHAPED.search(token):
            continue
        parts = re.split(r"[./]", token)
        tails = ({".".join(parts[i:]) for i in range(len(parts))}
                 | {"/".join(token.split("/")[i:]) for i in range(token.count("/") + 1)}
                 | {_EXTENSION.sub("", token.rsplit("/", 1)[-1])})
        out |= {t for t in tails if len(t) >= MIN_CHARS and _SHAPED.search(t)}
    return out


def distinctive(texts: Sequence[str]) -> dict[int, set[str]]:
    """Each text's identifiers (by its index), less those more than `COMMON_SHARE` of the texts hold (when there
    are four or more texts: fewer cannot say what is common)."""
    named = {i: identifiers(t) for i, t in enumerate(texts)}
    if len(texts) < 4:
        return named
    held = Counter(x for ids in named.values() for x in ids)
    common = {x for x, n in held.items() if n > COMMON_SHARE * len(texts)}
    return {i: ids - common for i, ids in named.items()}


def concepts(ids: Iterable[str]) -> set[str]:
    """What identifiers name, once each: a file by its stem, a declaration by its longest name among them."""
    out = {_EXTENSION.sub("", x.rsplit("/", 1)[-1]) if "/" in x or _EXTENSION.search(x) else x for x in ids}
    return {c for c in out if not any(o.endswith("." + c) for o in out)}


def weight(concept: str) -> int:
    """A declaration's own name (`rk_order`, `QuotEquiv.bSeries`) says more than a bare word-like one (a type, a
    file, `BDF4`), which texts on many subjects share."""
    return 2 if "_" in concept or "." in concept else 1


def touching(subject: set[str], texts: Sequence[str], names: Sequence[str] = (), need: int = 2) -> list[bool]:
    """For each text, whether `subject` names it (`names`: each text's own name, an issue's slug), or the
    distinctive identifiers the two share weigh `need` or more (`weight`)."""
    own = distinctive(texts)
    return [(i < len(names) and names[i] in subject) or sum(map(weight, concepts(own[i] & subject))) >= need
            for i in range(len(texts))]


def about(text: str, census: Census) -> set[str]:
    """The identifiers of `text` less the project's roots (`OpenMath`, which names everything in it)."""
    return identifiers(text) - {p.split("/", 1)[0].removesuffix(".lean") for p in census.files}


def subject_of(census: Census, files: Iterable[str], targets: Iterable[str] = ()) -> set[str]:
    """The identifiers of a Worker's files (their paths and modules) and of the declarations they and `targets`
    name."""
    wanted = list(files)
    names = [d.name for _, d in census.decls_in(wanted) if d.name] + list(targets)
    return identifiers(" ".join([*wanted, *(p.removesuffix(".lean").replace("/", ".") for p in wanted), *names]))


@dataclass(frozen=True)
class PlanPart:
    title: str  # '' for the text before the first `## ` heading
    text: str  # with its heading line
    next_work: bool  # titled as work to come, or sharing identifiers with the Current Target


def plan_parts(plan: str, target_title: str = "Current Target") -> tuple[str, list[PlanPart]]:
    """The plan's Current Target section whole (with its heading), and the other `## ` sections in order."""
    marks = list(_HEADING.finditer(plan))
    bounds = [0, *(m.start() for m in marks), len(plan)]
    titles = ["", *(m.group(2) for m in marks)]
    chunks = [(titles[i], plan[bounds[i]:bounds[i + 1]].strip()) for i in range(len(titles))]
    target = next((text for title, text in chunks if title.strip().lower() == target_title.lower()), "")
    subject = identifiers(target)
    parts = [PlanPart(title, text, bool(NEXT_WORK.search(title)) or bool(identifiers(text) & subject))
             for title, text in chunks if text and title.strip().lower() != target_title.lower()]
    return target, parts


def fit(parts: list[PlanPart], budget: int) -> tuple[str, list[str]]:
    """The parts within `budget` characters, in order: parts about the work to come are given three shares of the
    room to another's one; room a part does not use goes to the rest (each cut part keeps its head and says what it
    left out). The text, and the titles of the parts cut."""
    weights = [3 if p.next_work else 1 for p in parts]
    room = {i: 0 for i in range(len(parts))}
    left, open_ = budget, set(range(len(parts)))
    while open_ and left > 0:
        share = left / sum(weights[i] for i in open_)
        done = {i for i in open_ if len(parts[i].text) - room[i] <= share * weights[i]}
        if not done:
            for i in open_:
                room[i] += int(share * weights[i])
            break
        for i in done:
            left -= len(parts[i].text) - room[i]
            room[i] = len(parts[i].text)
        open_ -= done
    out, cut = [], []
    for i, p in enumerate(parts):
        if room[i] >= len(p.text):
            out.append(p.text)
            continue
        cut.append(p.title or "(the plan's opening)")
        head = p.text[:max(0, room[i])].rsplit("\n", 1)[0] if room[i] > 0 else p.text.split("\n", 1)[0]
        out.append(f"{head}\n[… {len(p.text) - len(head):,} more characters]")
    return "\n\n".join(out), cut


def advice_cycle(slug: str) -> int | None:
    """The cycle a Consultant's advice was written in, by its issue's name (`consultant_advice_cycle_030`)."""
    m = _ADVICE.match(slug)
    return int(m.group(1)) if m else None


def named(text: str, census: Census) -> list[tuple[str, Decl]]:
    """The project's declarations `text` names (by their full name or their last part), with their paths."""
    ids = identifiers(text)
    return [(path, d) for path, d in census.decls()
            if d.name and (d.name in ids or d.name.rsplit(".", 1)[-1] in ids)]


def stale(decls: list[tuple[str, Decl]], cycle: int, census: Census, history: Sequence[HistoryRecord]) -> bool:
    """Whether advice of `cycle` about `decls` (`named`) is older than the last change to its subject: none of them
    holds a hole any more (the work it was about is done), or a later cycle restated one of them (the statement it
    was about is another now). A helper it names closed since changes neither."""
    if not any(census.holds(path, d) for path, d in decls):
        return True
    names = {d.name for _, d in decls}
    return any(names & set(r.restated) for r in history if r.cycle > cycle)
