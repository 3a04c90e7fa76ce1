"""How the judges agree with people: the audit's section on the verdicts of `reviews.toml`.

A person's decision (approve, reject) on a declaration holds while the declaration means what it meant when reviewed
(`state.reviews.standing`); the judges' verdict on it is the one on the book entity it formalizes. Per protocol (and
the rubric it was asked with), a confusion table of the judge's verdict against the person's decision, over the
declarations whose decision holds; a decision on a meaning the declaration no longer has is stale, counted apart and
in no table. Counts per book and chapter, and each declaration's card in `autoformalize review`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from state.reviews import Review, Standing, standing

JUDGED = ("faithful", "stronger", "different", "not judged")
DECIDED = ("approved", "rejected")
COUNTS = ("reviewed", "approved", "rejected", "commented", "stale")
PROTOCOLS = ("direct", "round_trip")
PROTOCOL_LABELS = {"direct": "direct", "round_trip": "round trip"}
NO_CHAPTER = "(no chapter)"
SHOWN = 500  # declarations listed in the Markdown; the JSON has them all


def cards(port: int) -> str:
    """Where `autoformalize review` serves the cards: each at this address followed by its declaration, URL-quoted."""
    return f"http://127.0.0.1:{port}/card/"


def card_url(port: int, declaration: str) -> str:
    return cards(port) + quote(declaration, safe="")


def section(rows: Sequence[Mapping[str, Any]], reviews: Sequence[Review], digests: Mapping[str, list[str]], *,
            rubric: str, protocols: Sequence[str], port: int, files: Mapping[str, str] | None = None,
            source: str = "", problems: Sequence[str] = ()) -> dict[str, Any]:
    """`reviews` against the judges' verdicts in the audit's entity `rows`, given each declaration's meaning digests
    now (`gates.meaning.meanings`) and, for a declaration no entity names, its file (`files`), whose folder places it.
    `protocols`: those the audit ran, each a table."""
    held = standing(list(reviews), dict(digests))
    by_id = {key: r for r in rows if isinstance(key := r.get("id"), str)}
    by_name: dict[str, Mapping[str, Any]] = {}
    for r in rows:
        names = r.get("lean")
        for name in names if isinstance(names, list) else []:
            if isinstance(name, str):
                by_name.setdefault(name, r)
    last_entity = {r.declaration: r.entity for r in reviews if r.entity}
    declarations = []
    for name, s in held.items():
        row = by_name.get(name) or by_id.get(last_entity.get(name, ""))
        declarations.append(_declaration(name, s, row, (files or {}).get(name), port))
    tables = [_table(protocol, rubric, declarations) for protocol in protocols]
    return {"source": source, "cards": cards(port),
            "reviewed": sum(d["reviewed"] for d in declarations),
            "approved": sum(d["decision"] == "approved" for d in declarations),
            "rejected": sum(d["decision"] == "rejected" for d in declarations),
            "commented": sum(d["comments"] > 0 for d in declarations),
            "stale": sum(d["stale"] for d in declarations),
            "tables": tables, "books": _books(declarations), "declarations": declarations, "problems": list(problems)}


def _declaration(name: str, s: Standing, row: Mapping[str, Any] | None, file: str | None, port: int
                 ) -> dict[str, Any]:
    if row is not None:  # the JSON is a file of the repository: a field of another type is taken as missing
        book, chapter, by = _text(row.get("book")) or None, _text(row.get("chapter")) or NO_CHAPTER, "entity"
    elif file is not None:  # a definition a statement reaches: its file's folder
        book, chapter, by = None, file.rsplit("/", 1)[0] if "/" in file else ".", "file"
    else:  # gone from the project
        book, chapter, by = None, NO_CHAPTER, "file"
    d = s.decision
    judged = {p: _label((row or {}).get(p)) for p in PROTOCOLS}
    return {"declaration": name, "entity": _text((row or {}).get("id")), "book": book, "chapter": chapter, "by": by,
            "decision": ("approved" if s.approved else "rejected") if d is not None else None,
            "reviewer": d.reviewer if d is not None else "", "at": d.at.isoformat() if d and d.at else None,
            "note": d.note if d is not None else "", "comments": len(s.comments),
            "comment_notes": [c.note for c in s.comments if c.note],
            "reviewed": d is not None or bool(s.comments),
            # Verdicts on a meaning it no longer has, and no decision holding: to review again.
            "stale": d is None and bool(s.stale), "stale_verdicts": len(s.stale),
            **judged, "card": card_url(port, name)}


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _label(verdict: object) -> str:
    label = verdict.get("label") if isinstance(verdict, dict) else None
    return label if label in JUDGED[:3] else "not judged"


def _table(protocol: str, rubric: str, declarations: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The judge of `protocol` against people: each verdict × decision, and how often they agree, over the
    declarations the judge judged and whose decision holds. Agreement: faithful where approved, stronger or different
    where rejected; grouped, as the protocols' agreement is measured, stronger counts with faithful."""
    cells = {j: dict.fromkeys(DECIDED, 0) for j in JUDGED}
    for d in declarations:
        if d["decision"] is not None:
            cells[d[protocol]][d["decision"]] += 1
    compared = sum(cells[j][k] for j in JUDGED[:3] for k in DECIDED)
    agree = cells["faithful"]["approved"] + cells["stronger"]["rejected"] + cells["different"]["rejected"]
    grouped = cells["faithful"]["approved"] + cells["stronger"]["approved"] + cells["different"]["rejected"]
    return {"protocol": protocol, "rubric": rubric, "cells": cells, "compared": compared, "agree": agree,
            "rate": round(agree / compared, 4) if compared else None, "grouped": grouped,
            "grouped_rate": round(grouped / compared, 4) if compared else None}


def _books(declarations: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Counts per book and chapter (a chapter read from a file's folder marked by `by`), each book its own rows."""
    groups: dict[tuple[str | None, str, str], list[Mapping[str, Any]]] = {}
    for d in declarations:
        groups.setdefault((d["book"], d["chapter"], d["by"]), []).append(d)
    out = [{"book": book, "chapter": chapter, "by": by, "reviewed": sum(d["reviewed"] for d in ds),
            "approved": sum(d["decision"] == "approved" for d in ds),
            "rejected": sum(d["decision"] == "rejected" for d in ds), "commented": sum(d["comments"] > 0 for d in ds),
            "stale": sum(d["stale"] for d in ds)} for (book, chapter, by), ds in groups.items()]
    return sorted(out, key=lambda g: (g["by"] != "entity", g["book"] or "", g["chapter"]))


def summary_line(s: Mapping[str, Any]) -> str:
    line = (f"people: {s['reviewed']} declarations reviewed, {s['approved']} approved, {s['rejected']} rejected, "
            f"{s['commented']} commented, {s['stale']} stale")
    rates = [f"{PROTOCOL_LABELS[t['protocol']]} {t['rate']:.1%} of {t['compared']}" for t in s["tables"]
             if t["compared"]]
    return line + (f"; the judges agree with them: {', '.join(rates)}" if rates else "")


def markdown(s: Mapping[str, Any]) -> list[str]:
    """The report's section: the counts, a confusion table per protocol, per book and chapter, each declaration with
    a link to its card."""
    out = ["## People's reviews", "", f"From `{s['source']}`: {s['reviewed']} declarations reviewed, {s['approved']} "
           f"approved, {s['rejected']} rejected, {s['commented']} commented; {s['stale']} stale (reviewed when they "
           "meant something else, no decision holding: in no table below). Each declaration's card is at "
           f"`{s['cards']}` followed by its name, URL-quoted, while `autoformalize review` runs."]
    for t in s["tables"]:
        out += ["", f"### {PROTOCOL_LABELS[t['protocol']]} judge (rubric `{t['rubric']}`) against people", "",
                "| judge \\ person | approved | rejected |", "| --- | ---: | ---: |"]
        out += [f"| {j} | {t['cells'][j]['approved']} | {t['cells'][j]['rejected']} |" for j in JUDGED]
        if t["compared"]:
            out += ["", f"Agreement: {t['agree']} of {t['compared']} ({t['rate']:.1%}) with faithful where approved, "
                        f"stronger or different where rejected; {t['grouped']} ({t['grouped_rate']:.1%}) with "
                        "stronger taken as faithful."]
    if s["books"]:
        out += ["", "| book | chapter | reviewed | approved | rejected | commented | stale |",
                "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
        out += [f"| {_cell(g['book'] or '(no book)')} | {_cell(g['chapter'])}{' (folder)' if g['by'] == 'file' else ''}"
                f" | {g['reviewed']} | {g['approved']} | {g['rejected']} | {g['commented']} | {g['stale']} |"
                for g in s["books"]]
    shown = s["declarations"][:SHOWN]
    if shown:
        out += ["", "| declaration | entity | person | reviewer | direct | round trip | note |",
                "| --- | --- | --- | --- | --- | --- | --- |"]
        for d in shown:
            person = d["decision"] or ("stale" if d["stale"] else "commented")
            out.append(f"| [{_cell(_code(d['declaration']))}]({d['card']}) | {_cell(d['entity'])} | {person} | "
                       f"{_cell(d['reviewer'])} | {d['direct']} | {d['round_trip']} | {_cell(_notes(d))} |")
        if len(s["declarations"]) > SHOWN:
            out.append(f"\n… and {len(s['declarations']) - SHOWN} more (see the JSON)")
    if s["problems"]:
        out += ["", *[f"- {p}" for p in s["problems"]]]
    return out


def _notes(d: Mapping[str, Any]) -> str:
    """The decision's note, then the comments' that hold."""
    return " / ".join(n for n in [d["note"], *d["comment_notes"]] if n)


def _code(text: str) -> str:
    """A Lean name as a link's text."""
    return f"`{text}`" if "`" not in text else text.replace("[", "\\[").replace("]", "\\]")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")
