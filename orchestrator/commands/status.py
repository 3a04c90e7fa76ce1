"""`autoformalize status`: where the project stands."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click

from agents.provers.config import ProverConfig
from difficulty.forecast import line
from gates.sandbox import describe, probe
from gates.size import large
from orchestrator import ignores, pause, readiness
from orchestrator.blame import persistent
from orchestrator.config import CONFIG_FILE, load_config
from orchestrator.git import Git, GitError
from orchestrator.outlook import UNMADE, ahead, tree_of
from orchestrator.repo import find_repo
from state.errors import UsageError
from state.files import last_cycle, open_issues
from state.heartbeat import read_heartbeat
from state.history import HistoryRecord, cached_share, read_history, scored
from state.lock import inspect_lock
from state.prover_jobs import read_jobs, tally

LAST_RECORDS = 5


@dataclass
class Spend:
    total: float
    today: float
    week: float
    unpriced_cycles: int  # records with a role whose cost is unknown: the figures leave that role out

    @classmethod
    def of(cls, records: list[HistoryRecord], now: datetime) -> Spend:
        def since(start: datetime) -> float:
            return sum(r.spent_usd for r in records if r.finished_at and r.finished_at >= start)

        midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
        return cls(sum(r.spent_usd for r in records), since(midnight), since(now - timedelta(days=7)),
                   sum(1 for r in records if r.cost_usd is None))


def collect(repo: Path, now: datetime) -> dict[str, Any]:
    """The status as one JSON-ready object (SPEC §4: at least cycle, total_sorries, last_records,
    open_issues, lock, heartbeat)."""
    config = load_config(repo)
    paths = config.state(repo)
    history = read_history(paths.history)
    result = tree_of(repo, config)
    hidden = result.hidden_holes()
    lock = inspect_lock(paths.lock)
    heartbeat, heartbeat_problem = read_heartbeat(paths.heartbeat)
    spend = Spend.of(history.records, now)
    tokens: dict[str, dict[str, int]] = {}
    for record in history.records:
        for role, usage in record.usage.items():
            into = tokens.setdefault(role, {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0})
            for kind, value in usage.model_dump().items():
                into[kind] += value
    problems = [*history.problems, *result.problems, *([heartbeat_problem] if heartbeat_problem else [])]
    try:  # the working tree's lines, as the census reads them: uncommitted ones are new
        old = [a.to_json() for a in persistent(Git(repo), None, result, now, config.housekeeping.sorry_age_days)]
    except GitError as e:
        old = []
        problems.append(f"sorry ages unknown: {e}")
    try:
        excluded = ignores.swallowed(Git(repo), paths, config.project.plan, CONFIG_FILE)
    except GitError as e:
        excluded = {}
        problems.append(f"the ignore rules could not be read: {e}")
    if excluded:
        problems.append(ignores.refusal(excluded))
    problem = probe(config.sandbox)  # `sandboxed` only when the sandbox runs here, not when it merely should
    outlook = ahead(config, repo, history.records, result, make=False)  # never the simulation's time
    try:
        cycle = last_cycle(paths, (r.cycle for r in history.records))
    except UsageError as e:  # the counter unreadable, or the task results' folder a link: named, not fatal
        cycle = max((r.cycle for r in history.records), default=0)
        problems.append(str(e))
    problems += readiness.book(repo, config)
    return {
        "repo": str(repo),
        "cycle": cycle,
        "total_sorries": max(0, result.holes - result.total_admits),  # as Lean counts where it listed a file
        "hidden_sorries": [{"declaration": name, "file": path} for path, name in hidden],
        "total_admits": result.total_admits,
        "axioms": [d.name for _, d in result.axioms()],
        "lean_files": len(result.files),
        "large_files": [{"file": path, "lines": lines, "over": "cap" if lines > config.gates.file_cap_lines else "warn"}
                        for path, lines in large(result, config.gates.file_warn_lines)],
        "last_records": [r.model_dump(mode="json") for r in history.last(LAST_RECORDS)],
        "round": last_round(history.records),
        "open_issues": [i.slug for i in open_issues(paths)],
        "persistent_sorries": old,
        "sorry_age_days": config.housekeeping.sorry_age_days,
        "lock": lock.status.value,
        "lock_holder": None if lock.holder is None else {
            "pid": lock.holder.pid, "host": lock.holder.host, "started_at": lock.holder.started_at.isoformat()},
        "heartbeat": None if heartbeat is None else heartbeat.model_dump(mode="json"),
        "heartbeat_age_s": None if heartbeat is None else round(heartbeat.age(now), 1),
        "paused_until": None if (until := pause.pending(history.records, now)) is None else until.isoformat(),
        "spend_usd": {"total": round(spend.total, 4), "today": round(spend.today, 4),
                      "week": round(spend.week, 4), "cycles_without_cost": spend.unpriced_cycles},
        "tokens_by_role": tokens,
        "cached_share": None if (share := cached_share(history.records)) is None else round(share, 4),
        "budget": config.budget.model_dump(),
        "prover": {"backend": config.prover.backend, "off": _prover_off(config.prover),
                   **tally(read_jobs(paths.prover_jobs))},
        "sandbox": {"mode": config.sandbox.mode, "sandboxed": config.sandbox.mode == "bwrap" and problem is None,
                    "problem": problem, "detail": describe(config.sandbox)},
        "ignored_state": excluded,
        "forecast": None if outlook is None else {
            "line": line(outlook), "open_targets": len(outlook.targets), "remaining": outlook.remaining.model_dump(),
            "warnings": outlook.warnings},
        "problems": problems,
    }


def last_round(records: list[HistoryRecord]) -> dict[str, Any] | None:
    """The items of the last parallel round the history holds, with how each ended."""
    number = max((r.round for r in records if r.round is not None), default=None)
    if number is None:
        return None
    return {"round": number, "items": [{"item": r.item, "cycle": r.cycle, "outcome": r.outcome, "commit": r.commit,
                                        "engine": r.worked_by}
                                       for r in records if r.round == number]}


def run(repo: Path | None, as_json: bool) -> int:
    root = find_repo(repo)
    status = collect(root, datetime.now(UTC))
    if as_json:
        click.echo(json.dumps(status, indent=2, ensure_ascii=False))
    else:
        click.echo(render(status))
    if status["ignored_state"]:  # said above as well: a project in this state loses every cycle's record
        click.echo(f"error: {ignores.refusal(status['ignored_state'])}", err=True)
        return 2
    return 0


def render(s: dict[str, Any]) -> str:
    records = s["last_records"]
    last = records[-1] if records else None
    lines = [f"autoformalize status of {s['repo']}"]
    cycle = f"{s['cycle']}"
    if last:
        cycle += f"  (last: {last.get('outcome') or 'recorded'}, score {scored(_score(last))}"
        cycle += f", {last['finished_at'][:16].replace('T', ' ')} UTC)" if last.get("finished_at") else ")"
    lines.append(f"  cycle      {cycle}")
    lines.append(f"  sorries    {s['total_sorries']} sorry, {s['total_admits']} admit in {s['lean_files']} Lean files"
                 + (f"; axioms: {', '.join(s['axioms'])}" if s["axioms"] else ""))
    if s["hidden_sorries"]:
        names = ", ".join(h["declaration"] for h in s["hidden_sorries"][:10])
        lines.append(f"             {len(s['hidden_sorries'])} of them only Lean sees (sorryAx, no sorry written): "
                     f"{names}")
    if records:
        scores = " ".join(scored(_score(r)) for r in records)
        lines.append(f"  scores     {scores}  (last {len(records)} cycles, oldest first)")
        if last and last.get("summary"):
            lines.append(f"  summary    {last['summary']}")
    if s["round"]:
        lines.append(f"  round      {s['round']['round']}: " + ", ".join(
            f"{i['item']} {i['outcome']} (cycle {i['cycle']}"
            + (f", {i['engine']}" if i["engine"] else "") + ")" for i in s["round"]["items"]))
    for f in s["large_files"]:
        lines.append(f"  large      {f['file']}: {f['lines']:,} lines, over the "
                     + ("cap: it must be split" if f["over"] == "cap" else "warning: split it soon"))
    old = s["persistent_sorries"]
    if old:
        shown = ", ".join(f"{a['declaration']} ({a['file']}:{a['line']}, {a['age_days']:.0f} d)" for a in old[:3])
        lines.append(f"  persistent {len(old)} unchanged for {s['sorry_age_days']:g}+ days: {shown}"
                     + (" …" if len(old) > 3 else ""))
    issues = s["open_issues"]
    lines.append(f"  issues     {len(issues)} open" + (f": {', '.join(issues[:8])}" if issues else "")
                 + (" …" if len(issues) > 8 else ""))
    holder = s["lock_holder"]
    lock = s["lock"] + (f" (pid {holder['pid']} on {holder['host']}, since {holder['started_at'][:19]})"
                        if holder else "")
    lines.append(f"  lock       {lock}")
    beat = s["heartbeat"]
    lines.append("  heartbeat  none" if beat is None else
                 f"  heartbeat  pid {beat['pid']} on {beat.get('host') or '?'}, cycle {beat.get('cycle')}, "
                 f"phase {beat['phase']}, {s['heartbeat_age_s']:.0f}s ago"
                 + ("; items: " + ", ".join(f"{k} {v}" for k, v in beat["items"].items()) if beat.get("items") else ""))
    if s["paused_until"]:
        lines.append(f"  paused     until {s['paused_until'][:16]} (UTC): a rate limit or usage cap; the loop goes on "
                     "then by itself")
    spend = s["spend_usd"]
    lines.append(f"  spend      ${spend['total']:.2f} total, ${spend['today']:.2f} today, "
                 f"${spend['week']:.2f} in 7 days"
                 + (f" ({spend['cycles_without_cost']} cycles without a cost)" if spend["cycles_without_cost"] else ""))
    for role, t in s["tokens_by_role"].items():
        lines.append(f"  tokens     {role}: {_k(t['input'])} in, {_k(t['cache_read'])} cached, {_k(t['output'])} out")
    if s["cached_share"] is not None:
        lines.append(f"  cache      {s['cached_share']:.0%} of the input tokens sent were read from the prompt cache")
    limits = {k: v for k, v in s["budget"].items() if v is not None}
    if limits:
        lines.append("  budget     " + ", ".join(f"{k.removesuffix('_usd').replace('_', ' ')} ${v:.2f}"
                                               for k, v in limits.items()))
    lines.append(f"  sandbox    {s['sandbox']['detail']}")
    if s["forecast"] is None:
        lines.append(f"  forecast   {UNMADE}")
    else:
        lines.append(f"  forecast   {s['forecast']['line']}")  # `autoformalize forecast` says it all
        lines += [f"  warning    {w}" for w in s["forecast"]["warnings"]]
    prover = s["prover"]
    if prover["off"]:
        lines.append(f"  prover     off: {prover['off']}")
    if prover["jobs"]:
        lines.append(f"  prover     {prover['backend']}: {prover['jobs']} jobs ("
                     + ", ".join(f"{n} {k}" for k, n in {**prover["by_status"], **prover["by_use"]}.items())
                     + f"), {prover['sorries_closed']} sorries closed by its proofs")
    lines += [f"  note       {p}" for p in s["problems"]]
    return "\n".join(lines)


def _prover_off(config: ProverConfig) -> str | None:
    if config.backend == "none":
        return '[prover] backend = "none"'
    return None if os.environ.get(config.api_key_env, "").strip() else f"{config.api_key_env} is not set"


def _k(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e3 else str(n)


def _score(record: dict[str, Any]) -> int | None:
    """A record's score as `HistoryRecord.score` reads it, from its JSON."""
    return None if record.get("evaluated") is False else record.get("progress_score")
