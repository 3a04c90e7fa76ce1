"""The whole audit of one Lean project: proof gap, statistics, semantic faithfulness, cross-file reuse.

`audit` returns one JSON-ready document; `markdown` renders it as the report. The parts that need a model
run only with the models given; a protocol without its models is skipped with the reason, and every entity
that could not be judged is listed with why.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from agents.model import Model
from audit import judge, overlap, people, rests, reuse, sample, stats
from audit import successors as succ
from audit.entities import Entity
from audit.extract import BLUEPRINT, MAPPINGS, find_entities
from gates.census import Census
from gates.index import THEOREM_KINDS, Decl
from gates.meaning import closures, reached
from state.reviews import Review

SCHEMA_VERSION = 1
LABELS = {judge.Score.FAITHFUL: "faithful", judge.Score.STRONGER: "stronger", judge.Score.DIFFERENT: "different"}
PROTOCOL_NAMES = {"direct": "direct (book vs Lean)", "round_trip": "round trip (book vs back-translation)"}
LEAN_CHARS = 12_000  # a declaration longer than this is cut for the judges
DEFINITIONS_CHARS = 12_000  # of the project's definitions a statement reaches, shown to a judge after it
UNPROVED_SHOWN = 500


@dataclass
class Models:
    """The audit's models; a protocol runs only when all of its own are here."""

    judge: Model | None = None
    back_translator: Model | None = None
    round_trip_judge: Model | None = None
    edge_filter: Model | None = None
    skipped: dict[str, str] = field(default_factory=dict)  # protocol → why it does not run


@dataclass
class Options:
    sample: int | None = None  # judge only a stratified sample of this many formalized entities
    seed: int = 0
    filter_edges: bool = False  # ask the edge filter about every candidate dependency
    concurrency: int = 4
    rubric: judge.Rubric = judge.DEFAULT  # how the judges are asked, and the context's cut
    blueprint: str = BLUEPRINT  # where the book's text is: the blueprint, and the mapping files
    mappings: tuple[str, ...] = MAPPINGS


@dataclass
class Reviewed:
    """People's verdicts (`reviews.toml`, each with its reviewer) and where their cards are served."""

    reviews: list[Review]
    source: str  # the file, and where it was read ("reviews.toml at HEAD", "reviews.toml in the working tree")
    port: int  # `[review] port`
    problems: list[str] = field(default_factory=list)


def declarations(census: Census) -> dict[str, Decl]:
    """Named declarations by full name. A name two files declare (modules no one imports together) is left out:
    which of them a reader means cannot be told, and the one read would be whichever came last."""
    found: dict[str, list[Decl]] = {}
    for _, d in census.decls():
        if d.name:
            found.setdefault(d.name, []).append(d)
    return {name: ds[0] for name, ds in found.items() if len(ds) == 1}


def repeated(census: Census) -> dict[str, list[str]]:
    """Full names declared more than once: name → the files declaring it."""
    found: dict[str, list[str]] = {}
    for path, d in census.decls():
        if d.name:
            found.setdefault(d.name, []).append(path)
    return {name: paths for name, paths in found.items() if len(paths) > 1}


def lean_text(found: dict[str, Decl], names: Sequence[str], *, bodies: bool = True) -> tuple[str, list[str]]:
    """The declarations as the judges see them (statement only for theorems; everything for definitions, or
    only their headers without `bodies`, as the paper's judges read them; after the `variable`s of their
    file), and the names that are not declarations of the project."""
    parts: list[str] = []
    missing: list[str] = []
    for name in names:
        decl = found.get(name)
        if decl is None:
            missing.append(name)
            continue
        assert decl.source is not None
        setting = [c for c in decl.source.contexts[:decl.context] if c.startswith("variable")]
        text = decl.written(body=bodies and decl.kind not in THEOREM_KINDS)
        if len(text) > LEAN_CHARS:
            text = text[:LEAN_CHARS] + "\n  … [truncated]"
        parts.append("\n".join([*setting, text]))
    return "\n\n".join(parts), missing


def in_order(sources: dict[str, tuple[str, str]]) -> list[tuple[str, str]]:
    """Definitions as a reader is shown them (`sources`: name → its whole text and its header): smallest first, whole
    within `DEFINITIONS_CHARS`; beyond, the header with the whole text's length and a digest of it."""
    out, room = [], DEFINITIONS_CHARS
    for name, (whole, header) in sorted(sources.items(), key=lambda item: (len(item[1][0]), item[0])):
        if len(whole) <= room:
            out.append((name, whole))
            room -= len(whole)
        else:
            digest = hashlib.sha256(whole.encode()).hexdigest()[:12]
            out.append((name, f"{header}\n  -- … its whole text, {len(whole):,} characters (sha256 {digest}…), is "
                              "over what is shown"))
    return out


def sources_of(decls: dict[str, Decl], names: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Each of `names` that `decls` holds → its whole text and its header, as `in_order` takes them: runs of
    spaces and blank lines shortened (padding must not push a definition's body out of what is shown)."""
    return {n: (_tidy(decls[n].written(body=True)), _tidy(decls[n].written())) for n in names if n in decls}


def _tidy(text: str) -> str:
    lines = []
    for line in text.splitlines():
        body = re.sub(r"(?<=\S)[ \t]+", " ", line.strip())
        lines.append(" " * min(8, len(line) - len(line.lstrip())) + body if body else "")
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def definitions_read(decls: dict[str, Decl], reach: dict[str, list[str]], names: Sequence[str]) -> str:
    """What a judge reads after the statements `names`: the source of every project definition their meaning
    reaches (`reach`: `gates.meaning.reached`), labelled as the project's, as `in_order` shows them. A statement
    means what the definitions it names mean: read alone, `theorem t (n) : ZeroAddHolds n` says nothing."""
    shown = in_order(sources_of(decls, {r for n in names for r in reach.get(n, []) if r not in names}))
    if not shown:
        return ""
    return ("\n\n-- The project's definitions the statements above reach, which are part of what they mean "
            "(smallest first):\n\n" + "\n\n".join(text for _, text in shown))


def audit(root: Path, census: Census, models: Models, options: Options, now: datetime,
          mathlib: overlap.Measured | None = None, successors: succ.Measured | None = None,
          reviewed: Reviewed | None = None) -> dict[str, Any]:
    """Every part of the audit of the project at `root`, whose census (over its Lean roots) is given; with `mathlib`,
    what `exact?` answered about its proved theorems (`audit.overlap`); with `successors`, how well their users test
    them (`audit.successors`); with `reviewed`, how the judges agree with people (`audit.people`)."""
    entities, problems = find_entities(root, census, blueprint=options.blueprint, mappings=options.mappings)
    decls = declarations(census)
    support = rests.Support(census)
    rows = {e.id: _row(e, decls, support) for e in entities}
    judged = [e for e in entities if rows[e.id]["formalized"]]
    drawn = None
    if options.sample is not None:
        drawn = sample.stratified_sample(judged, options.sample, options.seed)
        judged = drawn.entities
    faithfulness = _faithfulness(census, decls, judged, rows, models, options)
    edge_filter = None
    if options.filter_edges and models.edge_filter is not None:
        edge_filter = _edge_filter(models.edge_filter)
    elif options.filter_edges:
        models.skipped.setdefault("edge filter", "no model")
    reused = reuse.reuse(entities, census, edge_filter)
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "generated_at": now.isoformat(), "root": str(root),
        "proof_gap": stats.proof_gap(root, census).to_json(), "statistics": stats.statistics(root, census).to_json(),
        "faithfulness": faithfulness, "reuse": reused.to_json(), "skipped": dict(models.skipped),
        "entities": list(rows.values()), "extraction_problems": problems, "proved_means": rests.METHOD,
    }
    if drawn is not None:
        doc["sample"] = drawn.to_json()
    if mathlib is not None:
        doc["mathlib_overlap"] = mathlib.document(doc["entities"])
        overlap.attach(doc["entities"], mathlib.results)
    if successors is not None:
        doc["successors"] = successors.document(doc["entities"])
        succ.attach(doc["entities"], successors.results)
    if reviewed is not None:
        for row in doc["entities"]:
            row["cards"] = {name: people.card_url(reviewed.port, name) for name in row["lean"]}
        ran = [p for p in people.PROTOCOLS if faithfulness.get(p) is not None]
        files = {name: path for path, d in census.decls() if (name := d.name)}
        digests = closures(census) if reviewed.reviews else {}
        doc["reviews"] = people.section(doc["entities"], reviewed.reviews, digests, rubric=options.rubric.name,
                                        protocols=ran, port=reviewed.port, files=files, source=reviewed.source,
                                        problems=reviewed.problems)
    doc["summary"] = summary(doc)
    return doc


def _row(e: Entity, decls: dict[str, Decl], support: rests.Support) -> dict[str, Any]:
    present = [n for n in e.lean if n in decls]
    formalized = bool(e.lean) and len(present) == len(e.lean)
    rests_on = list(dict.fromkeys(r for n in present for r in support.rests_on(n)))
    return {"id": e.id, "kind": e.kind, "name": e.name, "book": e.book, "chapter": e.chapter, "source": e.source,
            "lean": e.lean,
            "leanok": e.leanok, "formalized": formalized, "proved": formalized and not rests_on,
            "rests_on": rests_on, "faithful": None, "direct": None, "round_trip": None}


def _faithfulness(census: Census, decls: dict[str, Decl], entities: list[Entity], rows: dict[str, dict[str, Any]],
                  models: Models, options: Options) -> dict[str, Any]:
    protocols: dict[str, Callable[[Entity, str], judge.Verdict]] = {}
    if models.judge is not None:
        direct_model = models.judge
        protocols["direct"] = lambda e, lean: judge.judge_direct(direct_model, e, lean, rubric=options.rubric)
    if models.back_translator is not None and models.round_trip_judge is not None:
        translator, second = models.back_translator, models.round_trip_judge
        protocols["round_trip"] = lambda e, lean: judge.judge_round_trip(translator, second, e, lean,
                                                                         rubric=options.rubric)
    unjudged: list[dict[str, str]] = []
    bodies = not options.rubric.paper
    texts = {e.id: lean_text(decls, e.lean, bodies=bodies)[0] for e in entities} if protocols else {}
    if protocols and bodies:  # the definitions too (the paper's rubric reads the statements alone)
        reach = reached(census, [n for e in entities for n in e.lean])
        texts = {e.id: texts[e.id] + definitions_read(decls, reach, e.lean) for e in entities}
    jobs = [(protocol, e) for protocol in protocols for e in entities]
    def run(job: tuple[str, Entity]) -> judge.Verdict:
        protocol, entity = job
        try:
            return protocols[protocol](entity, texts[entity.id])
        except Exception as e:  # one entity's surprise must not discard the verdicts already paid for
            return judge.Verdict(error=f"{type(e).__name__}: {e}")

    with ThreadPoolExecutor(max_workers=options.concurrency) as pool:
        verdicts = list(pool.map(run, jobs))
    for (protocol, e), verdict in zip(jobs, verdicts, strict=True):
        rows[e.id][protocol] = _verdict_json(verdict)
        if verdict.score is None:
            unjudged.append({"id": e.id, "name": e.name, "protocol": protocol, "reason": verdict.error or "unknown"})
        elif protocol == "direct":
            rows[e.id]["faithful"] = LABELS[verdict.score]
    out: dict[str, Any] = {"entities": len(entities), "rubric": options.rubric.name, "unjudged": unjudged}
    for protocol in ("direct", "round_trip"):
        if protocol in protocols:
            scores = Counter(rows[e.id][protocol]["label"] for e in entities)
            out[protocol] = {label: scores[label] for label in (*LABELS.values(), "unjudged")}
        else:
            out[protocol] = None
    if len(protocols) == 2:
        out["agreement"] = _agreement([rows[e.id] for e in entities])
    return out


def _verdict_json(v: judge.Verdict) -> dict[str, Any]:
    return {"label": LABELS[v.score] if v.score is not None else "unjudged", "score": v.score, "q1": v.q1,
            "q2": v.q2, "reason": v.reason, "corrected": v.corrected, "model_score": v.claimed,
            "back_translation": v.back_translation, "error": v.error,
            "tokens": v.usage.input + v.usage.output + v.usage.cache_read + v.usage.cache_write}


def _agreement(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Over the entities both protocols judged: the share on which they agree, faithful and stronger taken as
    one (the paper's measure), and exactly."""
    both = [(r["direct"]["label"], r["round_trip"]["label"]) for r in rows
            if r["direct"]["label"] != "unjudged" and r["round_trip"]["label"] != "unjudged"]
    ok = {"faithful", "stronger"}
    grouped = sum((a in ok) == (b in ok) for a, b in both)
    exact = sum(a == b for a, b in both)
    return {"compared": len(both), "grouped": grouped, "exact": exact,
            "grouped_rate": round(grouped / len(both), 4) if both else None,
            "exact_rate": round(exact / len(both), 4) if both else None}


def _edge_filter(model: Model) -> reuse.EdgeFilter:
    def decide(edge: reuse.Edge, source: Entity, target: Entity) -> judge.EdgeVerdict:
        return judge.judge_edge(model, source, target, [str(t) for t in edge.types], "; ".join(edge.evidence))

    return decide


# -- the report ---------------------------------------------------------------------------------------------


def summary(doc: dict[str, Any]) -> str:
    """The headline figures in a few lines."""
    gap, st, f = doc["proof_gap"], doc["statistics"], doc["faithfulness"]
    rows = doc["entities"]
    census, grep = gap["census"], gap["grep"]
    lines = [f"{st['files']} Lean files, {st['lines']} lines; sorries {census['sorries']}, admits {census['admits']}, "
             f"user axioms {census['axioms']} (grep: {grep['sorry_lines']} sorry lines, {grep['axiom_lines']} axiom "
             "lines)",
             f"{len(rows)} textbook entities: {sum(r['formalized'] for r in rows)} formalized, "
             f"{sum(r['proved'] for r in rows)} proved"]
    if doc.get("sample"):
        lines.append(f"judged: a stratified sample of {doc['sample']['size']} formalized entities "
                     f"(seed {doc['sample']['seed']})")
    for protocol, name in (("direct", "direct judge"), ("round_trip", "round trip")):
        counts = f.get(protocol)
        if counts is None:
            lines.append(f"{name}: not run ({doc['skipped'].get(protocol, 'no model')})")
        else:
            lines.append(f"{name}: " + ", ".join(f"{counts[k]} {k}" for k in (*LABELS.values(), "unjudged")))
    if f.get("agreement") and f["agreement"]["compared"]:
        a = f["agreement"]
        lines.append(f"agreement: {a['grouped_rate']:.1%} of {a['compared']} (faithful and stronger as one)")
    if doc.get("mathlib_overlap"):
        lines.append(overlap.summary_line(doc["mathlib_overlap"]))
    if doc.get("successors"):
        lines.append(succ.summary_line(doc["successors"]))
    if _reviewed(doc):
        lines.append(people.summary_line(doc["reviews"]))
    rates = doc["reuse"].get("rates", {})
    total = rates.get("all")
    if total:
        lines.append(f"reuse: {total['reflected']} of {total['total']} dependency edges reflected in the Lean")
    return "\n".join(lines)


def markdown(doc: dict[str, Any]) -> str:
    gap, st, f, ru = doc["proof_gap"], doc["statistics"], doc["faithfulness"], doc["reuse"]
    out = [f"# Audit of {doc['root']}", "", f"Generated {doc['generated_at']}.", "", "```", doc["summary"], "```", "",
           "## Proof gap", "", "| | census | grep (the paper's commands) |", "| --- | ---: | ---: |",
           f"| sorry | {gap['census']['sorries']} | {gap['grep']['sorry_lines']} lines |",
           f"| admit | {gap['census']['admits']} | — |",
           f"| user axioms | {gap['census']['axioms']} | {gap['grep']['axiom_lines']} lines |", ""]
    if gap.get("discrepancies"):
        out += ["Where the two disagree:", ""]
        out += [f"- `{d['file']}:{d['line']}` {d['what']}: {d['reason']}" for d in gap["discrepancies"][:50]]
        if len(gap["discrepancies"]) > 50:
            out.append(f"- … and {len(gap['discrepancies']) - 50} more (see the JSON)")
        out.append("")
    g = st["grep"]
    out += ["## Statistics", "", f"{st['files']} Lean files, {st['lines']} lines (grep method: {g['files']} files, "
            f"{g['wc_lines']} lines, {g['def_lines']} def lines, {g['theorem_lemma_lines']} theorem/lemma lines).",
            "", "| declarations | count |", "| --- | ---: |"]
    out += [f"| {kind} | {n} |" for kind, n in st["declarations"].items()]
    out += [f"| theorem + lemma | {st['theorem+lemma']} |",
            f"| of the defs: noncomputable, private | {st['noncomputable_defs']}, {st['private_defs']} |"]
    out += ["", "## Semantic faithfulness", ""]
    if doc.get("sample"):
        out += [f"A stratified sample of {doc['sample']['size']} formalized entities (seed {doc['sample']['seed']})"
                " was judged.", ""]
    out += ["| protocol | faithful | stronger | different | not judged |", "| --- | ---: | ---: | ---: | ---: |"]
    for protocol, name in PROTOCOL_NAMES.items():
        counts = f.get(protocol)
        out.append(f"| {name} | " + (" | ".join(str(counts[k]) for k in (*LABELS.values(), "unjudged")) if counts
                                     else f"not run: {doc['skipped'].get(protocol, 'no model')} | | |") + " |")
    if f.get("agreement"):
        a = f["agreement"]
        out += ["", f"Agreement over {a['compared']} entities both judged: {a['grouped']} with faithful and stronger "
                    f"taken as one, {a['exact']} exactly."]
    if f["unjudged"]:
        out += ["", "Not judged:", ""]
        out += [f"- {u['id']} ({u['name']}), {u['protocol']}: {u['reason']}" for u in f["unjudged"]]
    different = [r for r in doc["entities"] if r["faithful"] == "different"
                 or (r["round_trip"] or {}).get("label") == "different"]
    if different:
        out += ["", "Judged different:", "", "| entity | Lean | direct | round trip | reason |",
                "| --- | --- | --- | --- | --- |"]
        for r in different:
            d, t = r["direct"] or {}, r["round_trip"] or {}
            out.append(f"| {r['id']} | {_lean(r)} | {d.get('label', '—')} | {t.get('label', '—')} | "
                       f"{_cell(d.get('reason') or t.get('reason') or '')} |")
    books: dict[str, list[dict[str, Any]]] = {}
    for r in doc["entities"]:
        books.setdefault(r.get("book") or "", []).append(r)
    if len(books) > 1:
        out += ["", "## By book", "", "| book | entities | formalized | proved |", "| --- | ---: | ---: | ---: |"]
        out += [f"| {name or '(no book)'} | {len(rows)} | {sum(r['formalized'] for r in rows)} | "
                f"{sum(r['proved'] for r in rows)} |" for name, rows in books.items()]
    unproved = [r for r in doc["entities"] if r["formalized"] and not r["proved"]]
    if unproved:
        out += ["", "## Formalized, not proved", "", f"Proved means no sorry and no axiom of the project in what a "
                f"result uses, by {doc['proved_means']}.", "", "| entity | Lean | rests on |", "| --- | --- | --- |"]
        out += [f"| {r['id']} | {', '.join(r['lean'])} | {_cell(', '.join(r['rests_on'][:12]))}"
                f"{' …' if len(r['rests_on']) > 12 else ''} |" for r in unproved[:UNPROVED_SHOWN]]
        if len(unproved) > UNPROVED_SHOWN:
            out.append(f"\n… and {len(unproved) - UNPROVED_SHOWN} more (see the JSON)")
    out += ["", "## Cross-file reuse", "", ru.get("note", ""), "", "| edges | reflected | tested | rate |",
            "| --- | ---: | ---: | ---: |"]
    for name, rate in ru.get("rates", {}).items():
        share = f"{rate['reflected'] / rate['total']:.1%}" if rate["total"] else "—"
        out.append(f"| {name} | {rate['reflected']} | {rate['total']} | {share} |")
    if doc.get("mathlib_overlap"):
        out += ["", *overlap.markdown(doc["mathlib_overlap"])]
    if doc.get("successors"):
        out += ["", *succ.markdown(doc["successors"])]
    if _reviewed(doc):
        out += ["", *people.markdown(doc["reviews"])]
    if doc["skipped"]:
        out += ["", "## Skipped", ""] + [f"- {k}: {v}" for k, v in doc["skipped"].items()]
    if doc["extraction_problems"]:
        out += ["", "## Extraction problems", ""] + [f"- {p}" for p in doc["extraction_problems"]]
    if doc.get("sample"):
        out += ["", "## Re-grading sheet", "", "| entity | Lean | direct | round trip | your grade |",
                "| --- | --- | --- | --- | --- |"]
        ids = {i for s in doc["sample"]["strata"] for i in s["ids"]}
        for r in doc["entities"]:
            if r["id"] in ids:
                out.append(f"| {r['id']} | {', '.join(r['lean'])} | {(r['direct'] or {}).get('label', '—')} | "
                           f"{(r['round_trip'] or {}).get('label', '—')} | |")
    return "\n".join(out) + "\n"


def _reviewed(doc: dict[str, Any]) -> bool:
    """Whether the audit has people's verdicts to report: any verdict, or a problem reading them."""
    s = doc.get("reviews")
    return bool(s and (s["declarations"] or s["problems"]))


def _lean(row: dict[str, Any]) -> str:
    """An entity's declarations, each linked to its card where the audit knows where the cards are."""
    cards = row.get("cards") or {}
    return ", ".join(f"[`{n}`]({cards[n]})" if n in cards and "`" not in n else n for n in row["lean"])


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")
