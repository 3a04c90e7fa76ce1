"""reviews.toml: people's verdicts on the book's statements and definitions, the loop's ground truth.

One `[[review]]` table per verdict, appended in the order given: the declaration, the book entity it formalizes,
`approve | reject | comment`, the note, the meaning digest of the statement reviewed (`gates.meaning`, the hash
`approved_restatements.toml` names too), the reviewer (`Name <email>`) and the time. The file sits at the
repository's root, protected: no agent may write it. `autoformalize review` appends to it and commits each verdict
in the person's name; a person may also write entries by hand or through a pull request, leaving out `reviewer`
and `at`, which the commit that added the entry then gives (its author and date).

A verdict holds while the statement means what it meant when reviewed: one whose digest no longer matches is
stale, shown as such and not applied. Of a declaration's decisions (approve, reject) the last one written holds;
every comment holds on its own.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

import tomli_w
from pydantic import BaseModel, ConfigDict, ValidationError

from state import slugs

FILE = "reviews.toml"
"""Where the verdicts are, relative to the repository's root (`[review] file`'s default)."""
TABLE = "review"
ISSUE_PREFIX = "review-"
"""A rejection opens the issue `review-<entity>` in the reviewer's name; no agent may open, change or close it."""

_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*review[ \t]*\]\]", re.MULTILINE)


class Verdict(StrEnum):
    APPROVE = "approve"
    REJECT = "reject"
    COMMENT = "comment"


class Review(BaseModel):
    """One verdict, as `reviews.toml` holds it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    declaration: str  # the Lean declaration reviewed, by full name
    entity: str = ""  # the book entity it formalizes (a definition it reaches may have none)
    verdict: Verdict
    note: str = ""
    digest: str  # the statement's meaning digest when reviewed (`gates.meaning.meanings`)
    reviewer: str = ""  # "Name <email>"; empty in a hand-written entry until its commit gives it
    at: datetime | None = None  # when; likewise

    @property
    def decides(self) -> bool:
        return self.verdict is not Verdict.COMMENT


@dataclass(frozen=True)
class Entry:
    """A review and where its table starts in the file (1-based), which is how its commit is found."""

    review: Review
    line: int


@dataclass
class Reviews:
    entries: list[Entry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # entries that could not be read, each said once

    @property
    def reviews(self) -> list[Review]:
        return [e.review for e in self.entries]


def parse(text: str, path: str = FILE) -> Reviews:
    """The verdicts of `text`. A file TOML cannot read holds none (and says why); an entry that is not a verdict is
    left out and named, the others hold."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return Reviews(problems=[f"{path} cannot be read ({e}); none of its verdicts holds until it is fixed"])
    rows = data.get(TABLE, [])
    if not isinstance(rows, list):
        return Reviews(problems=[f"{path}: `{TABLE}` must be an array of tables (`[[{TABLE}]]`)"])
    lines = [text.count("\n", 0, m.start()) + 1 for m in _HEADER.finditer(text)]
    if len(lines) != len(rows):  # a header inside a multi-line string, or an inline array: lines cannot be told
        lines = []
    out = Reviews()
    for i, row in enumerate(rows):
        line = lines[i] if i < len(lines) else 0
        try:
            out.entries.append(Entry(Review.model_validate(row), line))
        except ValidationError as e:
            where = f"line {line}" if line else f"entry {i + 1}"
            out.problems.append(f"{path} {where} is not a verdict: "
                                + "; ".join(f"{'.'.join(map(str, err['loc'])) or 'entry'}: {err['msg']}"
                                            for err in e.errors()))
    return out


def render(review: Review) -> str:
    """`review` as one `[[review]]` table, to append to the file (whatever else it holds stays as written)."""
    fields = review.model_dump(mode="python", exclude_none=True)
    fields["verdict"] = review.verdict.value
    return f"\n[[{TABLE}]]\n" + tomli_w.dumps(fields)


def appended(text: str, review: Review) -> str:
    """The file's text with `review` added at its end."""
    head = text if not text or text.endswith("\n") else text + "\n"
    return head + render(review)


@dataclass(frozen=True)
class Standing:
    """What people said of one declaration, as it means now."""

    decision: Review | None = None  # the last approve or reject, when it still holds
    comments: list[Review] = field(default_factory=list)  # the comments that still hold, oldest first
    stale: list[Review] = field(default_factory=list)  # verdicts on a meaning it no longer has
    unanswered: Review | None = None  # the last decision whatever the meaning, when it rejects: until a person
    # approves the statement again, no judge's verdict makes it faithful

    @property
    def approved(self) -> bool:
        return self.decision is not None and self.decision.verdict is Verdict.APPROVE

    @property
    def rejected(self) -> bool:
        return self.decision is not None and self.decision.verdict is Verdict.REJECT


def standing(reviews: list[Review], digests: dict[str, list[str]]) -> dict[str, Standing]:
    """Each reviewed declaration → what holds of its verdicts, given its meaning digests now (`meanings`): a
    verdict holds while its digest is one of them. A declaration gone from the project holds none."""
    by_name: dict[str, list[Review]] = {}
    for r in reviews:
        by_name.setdefault(r.declaration, []).append(r)
    out: dict[str, Standing] = {}
    for name, rs in by_name.items():
        now = set(digests.get(name, []))
        live = [r for r in rs if r.digest in now]
        decisions = [r for r in live if r.decides]
        last = next((r for r in reversed(rs) if r.decides), None)
        out[name] = Standing(decisions[-1] if decisions else None, [r for r in live if not r.decides],
                             [r for r in rs if r.digest not in now],
                             last if last is not None and last.verdict is Verdict.REJECT else None)
    return out


def approved(held: dict[str, Standing]) -> dict[str, str]:
    """Declarations a person approved as they mean now → the digest approved: locked as a person's."""
    return {n: s.decision.digest for n, s in held.items() if s.approved and s.decision is not None}


def rejected(held: dict[str, Standing]) -> dict[str, Review]:
    """Declarations a person rejected as they mean now → the rejection."""
    return {n: s.decision for n, s in held.items() if s.rejected and s.decision is not None}


def unanswered(held: dict[str, Standing]) -> dict[str, Review]:
    """Declarations whose last decision, on whatever meaning, is a rejection → that rejection: a restatement
    answers it only once a person approves it, so until then it counts as different and is never locked."""
    return {n: s.unanswered for n, s in held.items() if s.unanswered is not None}


def orphaned(held: dict[str, Standing], present: Collection[str]) -> set[str]:
    """The entities of rejections still unanswered on declarations `present` no longer holds (renamed, moved,
    removed), unless a person approved a present declaration of the entity: a person's rejection follows its
    entity, and a declaration that takes the rejected one's place counts as rejected until a person approves it."""
    answered = {s.decision.entity for n, s in held.items() if n in present and s.approved and s.decision is not None}
    return {r.entity for n, r in unanswered(held).items() if r.entity and n not in present} - answered


def issue_slug(entity: str, declaration: str = "") -> str:
    """The issue a rejection opens: `review-<entity>` (or of the declaration, when it pairs with no entity), one per
    id (`state.slugs`)."""
    return slugs.slug(ISSUE_PREFIX, entity or declaration, "statement")


def legacy_slug(entity: str, declaration: str = "") -> str:
    """The name `issue_slug` gave before it told every id apart: an issue a rejection opened then has it."""
    return slugs.legacy(ISSUE_PREFIX, entity or declaration, "statement", slugs.LIMIT)
