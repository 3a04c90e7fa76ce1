"""The cross-file reuse test (paper §3.2.3): is each textbook dependency S → T named in S's Lean code?

Candidate edges S → T ("S uses T") come from two heuristics over S's statement and proof:
- citation: S cites T explicitly — T's id is in `S.uses` (`\\uses`, `\\ref`, the mapping's references), or
  S's text names T's number ("Theorem 142C", "Lemmas 2.3 and 2.4", "Thm. 5.1"), matched against the kind and
  number in T's name or id (`thm:142C`); a number alone matches when only one entity has it.
- keyword: S's text contains a term T introduces — `T.terms` (its title, its `\\emph{}` phrases) or a
  phrase quoted in T's statement (``…'', `…', ‘…’, “…”, "…") — case-insensitively, whole words, a plural
  `s` allowed. Terms shorter than four characters or without three letters are ignored.
One edge per pair records every type and piece of evidence. An optional filter (the LLM judge of Appendix B)
returns a `Verdict` per edge (or anything with its three fields): edges judged not real are dropped, edges it
cannot judge (None, or `real` None) are kept and counted as unjudged; without a filter every candidate is kept
and the report says it is unfiltered.

Reflection. For a kept edge whose two ends have Lean declarations in the project, the edge is reflected when
one of S's declarations names one of T's in its statement (`Decl.statement_text`) or its body
(`Decl.body_code`, comments and strings blanked). Names are resolved as Lean resolves an identifier
`a.b.c` (leading `@` dropped): the longest prefix `a.b` that is a declaration of the project is the constant
named, the rest are field projections (so `foo.mp` and `Point.mk` name `foo` and `Point`). A prefix `p` is a
declaration when one of these is: `p` itself (or `_root_.p`); `N.p` for each namespace `N` enclosing S's
own full name, innermost first (so `foo` inside `A.B.bar` finds `A.B.foo` before `A.foo`); `O.p` for a
namespace `O` opened by a column-0 `open` earlier in S's file (taken as written, and relative to S's
namespaces). Field notation on a local (`h.foo`, `.foo`) cannot be resolved without types: such tokens
whose last component is the last component of one of T's declarations are listed as possible
references but never counted. What the test cannot see — a dependency through a helper lemma, a simp set,
unfolding, notation, an `open … in` scoped to another command — makes the rate a lower bound.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from audit.entities import Entity
from gates.census import Census
from gates.index import Decl
from gates.lexer import ID_FIRST, ID_REST

LOWER_BOUND = ("Names are matched verbatim: a dependency through a helper lemma, a simp set, unfolding or a "
               "library lemma is not seen, so the rate is a lower bound on code-level reuse.")
MIN_TERM = 4
_KIND_WORDS = {"theorem": "theorem", "thm": "theorem", "lemma": "lemma", "lem": "lemma", "definition": "definition",
               "defn": "definition", "def": "definition", "proposition": "proposition", "prop": "proposition",
               "corollary": "corollary", "cor": "corollary"}
_NUM = r"\d+(?:\.\d+)*[A-Za-z]?(?![\w])(?!\.\d)"
_CITATION = re.compile(
    r"(?<![\w\\])(?P<kind>Theorem|Thm|Lemma|Lem|Definition|Defn|Def|Proposition|Prop|Corollary|Cor)s?\.?"
    rf"(?:~|\s)*(?P<nums>{_NUM}(?:\s*(?:,|and|&|,\s*and)\s*{_NUM})*)", re.IGNORECASE)
_ID_KEY = re.compile(rf"(?P<kind>[A-Za-z]+)[:._-]?(?P<num>{_NUM})")
_QUOTED = re.compile(r"``(.{3,80}?)''|(?<![`\w])`([^`'\n]{3,80}?)'(?!')|‘([^’]{3,80}?)’|“([^”]{3,80}?)”|"
                     r"(?<![\w\\])\"([^\"\n]{3,80}?)\"", re.DOTALL)
_IDENT = rf"(?:«[^»\n]*»|[{ID_FIRST}][{ID_REST}]*)"
TOKEN = re.compile(rf"(?<![{ID_REST}.])(?P<dot>\.)?@?(?P<name>{_IDENT}(?:\.{_IDENT})*)")
_OPEN = re.compile(r"^open[ \t]+([^\n]*)", re.MULTILINE)


class EdgeType(StrEnum):
    CITATION = "citation"
    KEYWORD = "keyword"


@dataclass
class Edge:
    """A candidate dependency: `source` uses `target`."""

    source: str
    target: str
    types: list[EdgeType] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)

    @property
    def category(self) -> str:
        """The paper's Table 4 row: citation only, keyword only, or both signals."""
        if len(self.types) > 1:
            return "both signals"
        return f"{self.types[0]} only" if self.types else "none"

    def to_json(self) -> dict[str, object]:
        return {"source": self.source, "target": self.target, "types": [str(t) for t in self.types],
                "evidence": self.evidence}


@dataclass(frozen=True)
class Verdict:
    """A judge's decision on one candidate edge."""

    real: bool
    confidence: str = ""
    reasoning: str = ""


class Judgement(Protocol):
    """What a filter returns: a `Verdict`, or anything shaped like one (`audit.judge.EdgeVerdict`, whose
    `real` is None when the judge could not decide)."""

    @property
    def real(self) -> bool | None: ...

    @property
    def confidence(self) -> str: ...

    @property
    def reasoning(self) -> str: ...


EdgeFilter = Callable[[Edge, Entity, Entity], Judgement | None]


@dataclass
class Reflection:
    """Whether a kept edge shows in the Lean code."""

    edge: Edge
    source_decls: list[str]
    target_decls: list[str]
    reflected: bool
    how: str = ""  # where S names T, when it does
    possible: list[str] = field(default_factory=list)  # field-notation tokens that may name T (never counted)

    def to_json(self) -> dict[str, object]:
        return {**self.edge.to_json(), "source_decls": self.source_decls, "target_decls": self.target_decls,
                "reflected": self.reflected, "how": self.how, "possible": self.possible}


@dataclass(frozen=True)
class Rate:
    reflected: int
    total: int

    @property
    def rate(self) -> float | None:
        return self.reflected / self.total if self.total else None


@dataclass
class ReuseReport:
    filtered: bool
    candidates: list[Edge]
    verdicts: dict[tuple[str, str], Verdict]
    kept: list[Edge]
    tested: list[Reflection]
    untested: list[tuple[Edge, str]]  # kept edges whose ends are not both formalized, and why

    @property
    def unjudged(self) -> int:
        return sum(1 for e in self.kept if (e.source, e.target) not in self.verdicts) if self.filtered else 0

    def rates(self) -> dict[str, Rate]:
        """Reflected / tested by edge category, and over all tested edges."""
        out: dict[str, Rate] = {}
        for name in ("citation only", "keyword only", "both signals"):
            group = [r for r in self.tested if r.edge.category == name]
            out[name] = Rate(sum(r.reflected for r in group), len(group))
        out["all"] = Rate(sum(r.reflected for r in self.tested), len(self.tested))
        return out

    def to_json(self) -> dict[str, object]:
        return {
            "filtered": self.filtered,
            "note": LOWER_BOUND + ("" if self.filtered else " Unfiltered: every candidate edge is kept; keyword "
                                   "edges over-generate (the paper's judge kept 30–43% of them)."),
            "candidates": len(self.candidates), "kept": len(self.kept), "unjudged": self.unjudged,
            "rejected": sum(1 for v in self.verdicts.values() if not v.real),
            "verdicts": [{"source": src, "target": tgt, "real": v.real, "confidence": v.confidence,
                          "reasoning": v.reasoning} for (src, tgt), v in self.verdicts.items()],
            "rates": {k: {"reflected": r.reflected, "total": r.total, "rate": r.rate} for k, r in self.rates().items()},
            "tested": [r.to_json() for r in self.tested],
            "untested": [{**e.to_json(), "reason": why} for e, why in self.untested],
        }


# -- candidate edges ---------------------------------------------------------------------------------------


def candidate_edges(entities: Sequence[Entity]) -> list[Edge]:
    """Every citation and keyword edge between the entities, one per ordered pair, in entity order."""
    by_id = {e.id: e for e in entities}
    keys: dict[tuple[str, str], list[str]] = {}
    numbers: dict[str, list[str]] = {}
    for e in entities:
        for key in citation_keys(e):
            keys.setdefault(key, []).append(e.id)
            numbers.setdefault(key[1], []).append(e.id)
    terms = {e.id: introduced_terms(e) for e in entities}
    edges: dict[tuple[str, str], Edge] = {}

    def add(source: str, target: str, kind: EdgeType, evidence: str) -> None:
        edge = edges.setdefault((source, target), Edge(source, target))
        if kind not in edge.types:
            edge.types = sorted([*edge.types, kind])
        if evidence not in edge.evidence:
            edge.evidence.append(evidence)

    introducers: dict[str, list[tuple[str, str]]] = {}  # term → the entities introducing it, and how
    for e in entities:
        for term, how in terms[e.id]:
            introducers.setdefault(term, []).append((e.id, how))
    longest = max((len(term.split()) for term in introducers), default=1)
    for s in entities:
        for target in s.uses:
            if target in by_id and target != s.id:
                add(s.id, target, EdgeType.CITATION, f"{s.id} cites {target} explicitly (\\uses, \\ref or references)")
        for part, text in (("statement", s.nl), ("proof", s.proof)):
            for m in _CITATION.finditer(text):
                kind = _KIND_WORDS[m.group("kind").lower()]
                for num in re.findall(_NUM, m.group("nums")):
                    hits = keys.get((kind, num.lower())) or _single(numbers.get(num.lower(), []))
                    for target in hits:
                        if target != s.id:
                            add(s.id, target, EdgeType.CITATION, f"its {part} cites “{' '.join(m.group().split())}”")
            for term in sorted(_phrases(text, longest).intersection(introducers)):
                for target, how in introducers[term]:
                    if target != s.id:
                        add(s.id, target, EdgeType.KEYWORD, f"its {part} mentions “{term}”, which {target} {how}")
    order = {e.id: i for i, e in enumerate(entities)}
    return sorted(edges.values(), key=lambda e: (order[e.source], order[e.target]))


def citation_keys(entity: Entity) -> set[tuple[str, str]]:
    """(kind, number) pairs a text may cite the entity by: from its name ("Theorem 142C") and id ("thm:142C")."""
    out: set[tuple[str, str]] = set()
    m = re.match(rf"\s*(?P<kind>[A-Za-z]+)\.?\s+(?P<num>{_NUM})", entity.name)
    if m and m.group("kind").lower() in _KIND_WORDS:
        out.add((_KIND_WORDS[m.group("kind").lower()], m.group("num").lower()))
    m = _ID_KEY.fullmatch(entity.id)
    if m and m.group("kind").lower() in _KIND_WORDS:
        out.add((_KIND_WORDS[m.group("kind").lower()], m.group("num").lower()))
    return out


def introduced_terms(entity: Entity) -> list[tuple[str, str]]:
    """The normalized terms an entity introduces, each with how it introduces it."""
    found = [(t, "introduces") for t in entity.terms]
    for m in _QUOTED.finditer(entity.nl):
        found.append((next(g for g in m.groups() if g is not None), "quotes in its statement"))
    out: dict[str, str] = {}
    for term, how in found:
        norm = " ".join(_words(term))
        if len(norm) >= MIN_TERM and len(re.findall(r"[^\W\d_]", norm)) >= 3:
            out.setdefault(norm, how)
    return list(out.items())


def _words(text: str) -> list[str]:
    """Lower-case words, LaTeX emphasis and braces dropped, punctuation trimmed from each word's ends."""
    text = re.sub(r"\\(?:emph|textit|textbf|text)\s*\{", "{", text)
    text = text.replace("~", " ").replace("{", "").replace("}", "").lower()
    return [w for w in (w.strip(".,;:!?()[]'\"`‘’“”") for w in text.split()) if w]


def _phrases(text: str, longest: int) -> set[str]:
    """Every run of up to `longest` words of the text, also with a plural `s`/`es` dropped from its last word."""
    words = _words(text)
    out: set[str] = set()
    for i in range(len(words)):
        for n in range(1, min(longest, len(words) - i) + 1):
            phrase = " ".join(words[i:i + n])
            out.add(phrase)
            for suffix in ("es", "s"):
                if phrase.endswith(suffix):
                    out.add(phrase[:-len(suffix)])
    return out


def _single(ids: list[str]) -> list[str]:
    return ids if len(set(ids)) == 1 else []


# -- reflection --------------------------------------------------------------------------------------------


def reuse(entities: Sequence[Entity], census: Census, edge_filter: EdgeFilter | None = None,
          edges: Sequence[Edge] | None = None) -> ReuseReport:
    """Extract (or take) the candidate edges, filter them, and test each kept edge against the Lean code."""
    by_id = {e.id: e for e in entities}
    candidates = list(edges) if edges is not None else candidate_edges(entities)
    verdicts: dict[tuple[str, str], Verdict] = {}
    kept: list[Edge] = []
    for edge in candidates:
        judged = edge_filter(edge, by_id[edge.source], by_id[edge.target]) if edge_filter else None
        if judged is not None and judged.real is not None:
            verdicts[(edge.source, edge.target)] = Verdict(judged.real, judged.confidence, judged.reasoning)
        if judged is None or judged.real is not False:
            kept.append(edge)
    code = _Code(census)
    tested: list[Reflection] = []
    untested: list[tuple[Edge, str]] = []
    for edge in kept:
        s_decls, t_decls = code.decls(by_id[edge.source]), code.decls(by_id[edge.target])
        if not s_decls or not t_decls:
            end = " and ".join(n for n, d in (("source", s_decls), ("target", t_decls)) if not d)
            untested.append((edge, f"the {end} has no Lean declaration in the project"))
            continue
        tested.append(code.reflect(edge, s_decls, t_decls))
    return ReuseReport(edge_filter is not None, candidates, verdicts, kept, tested, untested)


class _Code:
    """The project's declarations and what each one names."""

    def __init__(self, census: Census) -> None:
        self.decls_by_name: dict[str, tuple[str, Decl]] = {
            d.name: (path, d) for path, d in census.decls() if d.name is not None}
        self._named: dict[str, tuple[dict[str, str], list[str]]] = {}

    def decls(self, entity: Entity) -> list[str]:
        return [n for n in entity.lean if n in self.decls_by_name]

    def reflect(self, edge: Edge, sources: list[str], targets: list[str]) -> Reflection:
        shared = sorted(set(sources) & set(targets))
        if shared:
            return Reflection(edge, sources, targets, True, f"both ends are formalized by `{shared[0]}`")
        possible: list[str] = []
        lasts = {t.rsplit(".", 1)[-1] for t in targets}
        for s in sources:
            named, fields = self.named(s)
            for t in targets:
                if t in named:
                    return Reflection(edge, sources, targets, True, f"`{s}` writes `{named[t]}`, which is `{t}`")
            possible += [f"`{s}` writes `{tok}`" for tok in fields if tok.rsplit(".", 1)[-1] in lasts]
        return Reflection(edge, sources, targets, False, possible=possible)

    def named(self, name: str) -> tuple[dict[str, str], list[str]]:
        """The project declarations `name`'s statement and body name (each with the token that names it),
        and the tokens that may be field notation on a local."""
        if name not in self._named:
            _, decl = self.decls_by_name[name]
            scopes = namespaces(name)
            opens = opens_before(decl, scopes)
            named: dict[str, str] = {}
            fields: list[str] = []
            for m in TOKEN.finditer(f"{decl.statement_text}\n{decl.body_code}"):
                token = m.group("name")
                target = None if m.group("dot") else self._resolve(token, scopes, opens)
                if target is not None:
                    named.setdefault(target, token)
                elif "." in token or m.group("dot"):
                    fields.append(m.group())
            self._named[name] = (named, fields)
        return self._named[name]

    def _resolve(self, token: str, scopes: list[str], opens: list[str]) -> str | None:
        return resolve(token, scopes, opens, self.decls_by_name)


def resolve(token: str, scopes: list[str], opens: list[str], known: Container[str]) -> str | None:
    """The declaration of `known` the longest resolvable prefix of `token` names, if any."""
    parts = token.removeprefix("_root_.").split(".")
    for j in range(len(parts), 0, -1):
        prefix = ".".join(parts[:j])
        if token.startswith("_root_."):
            candidates: Iterable[str] = [prefix]
        else:
            candidates = [f"{ns}.{prefix}" if ns else prefix for ns in scopes]
            candidates = [*candidates, *(f"{o}.{prefix}" for o in opens)]
        hit = next((c for c in candidates if c in known), None)
        if hit is not None:
            return hit
    return None


def namespaces(name: str) -> list[str]:
    """The namespaces a declaration's body resolves names in, innermost first, the root last."""
    parts = name.split(".")[:-1]
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)] + [""]


def opens_before(decl: Decl, scopes: list[str]) -> list[str]:
    """Namespaces opened by column-0 `open` commands before the declaration in its file, as written and
    relative to the declaration's namespaces."""
    assert decl.source is not None
    out: list[str] = []
    for m in _OPEN.finditer(decl.source.code, 0, decl.start):
        for word in re.sub(r"\([^)]*\)", " ", m.group(1)).split():
            if word in ("hiding", "renaming"):
                break  # what follows names constants, not namespaces
            if word not in ("in", "scoped") and re.fullmatch(rf"{_IDENT}(?:\.{_IDENT})*", word):
                out += [f"{ns}.{word}" if ns else word for ns in scopes]
    return list(dict.fromkeys(out))
