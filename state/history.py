"""history.jsonl: one record per finished cycle, append-only (SPEC §5).

Records written by the OpenMath reference script (no `schema_version`, a
`timestamp` instead of `finished_at`, extra keys of the Evaluator's) load
through a named migration. A line that is not a valid record (a crash cut it
short, a hand edit broke it) is reported with its line number and skipped;
the file itself is never rewritten.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from state.atomic import append_line
from state.files import read_bytes, unlinked

SCHEMA_VERSION = 1


class Outcome(StrEnum):
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    NO_CHANGE = "no_change"
    ERROR = "error"
    INTERRUPTED = "interrupted"


class GateVerdict(BaseModel):
    name: str
    passed: bool
    detail: str = ""


class Faithfulness(BaseModel):
    """The judge's verdict on a statement the cycle added or changed for a textbook entity."""

    entity: str
    declarations: list[str]
    score: int | None  # 3 faithful, 2 stronger, 1 different; None: not judged
    reason: str = ""
    error: str | None = None
    book: str = ""  # where the book's text the judge read came from


class LibraryProof(BaseModel):
    """A theorem the cycle closed that `exact?` closes with the library alone (`[audit] mathlib_check`)."""

    declaration: str
    suggestion: str  # the term `exact?` found
    constants: list[str] = Field(default_factory=list)  # its constants from outside the project


class Usage(BaseModel):
    """Tokens one role spent in a cycle."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(input=self.input + other.input, output=self.output + other.output,
                     cache_read=self.cache_read + other.cache_read, cache_write=self.cache_write + other.cache_write)


def cached_share(records: list[HistoryRecord]) -> float | None:
    """Of all input tokens the records' calls sent, the share read from the prompt cache; None before any."""
    cached = sent = 0
    for record in records:
        for usage in record.usage.values():
            cached += usage.cache_read
            sent += usage.input + usage.cache_read + usage.cache_write
    return cached / sent if sent else None


class WorkerContext(BaseModel):
    """How the Worker's session stayed inside its model's context window."""

    turns: int = 0
    peak_input: int = 0  # the longest request, in input tokens (cached or not)
    trims: int = 0  # tool results cut as they came
    clears: int = 0  # old tool results replaced by a stub
    compactions: int = 0  # summaries the session continued from


class ToolStat(BaseModel):
    """One tool's calls in a Worker's session."""

    count: int = 0
    seconds: float = 0.0  # the calls' total wall time


class HistoryRecord(BaseModel):
    """One finished cycle. Unknown keys are kept, so nothing a record held is lost."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = SCHEMA_VERSION
    cycle: int
    started_at: datetime | None = None
    finished_at: datetime | None = None
    outcome: Outcome | None = None  # None only in records migrated from the reference script
    gates: list[GateVerdict] = Field(default_factory=list)
    pre_sorry_count: int | None = None
    post_sorry_count: int | None = None
    progress_score: int | None = Field(default=0, ge=-2, le=2)  # None only in a reference record that kept none
    summary: str = ""
    stuck_on: str = ""
    strategy_recommendation: str = ""
    attempts_update: str = ""
    scope: list[str] = Field(default_factory=list)
    changed_files: list[str] = Field(default_factory=list)
    commit: str | None = None
    usage: dict[str, Usage] = Field(default_factory=dict)
    cost_usd: float | None = None
    costs: dict[str, float | None] = Field(default_factory=dict)  # USD per role; None where a price is unknown
    served_by: dict[str, list[str]] = Field(default_factory=dict)  # per role, the backend:model pairs that answered
    consultant: str | None = None  # path of the advice written this cycle
    restructuring: str | None = None  # rationale of an allowed sorry-count rise
    splitting: str | None = None  # rationale of an allowed growth of a file over the size cap
    pivot: str | None = None  # the blocker the Planner was told to leave
    base: str | None = None  # the branch commit the cycle started from
    error: str | None = None  # what stopped the cycle, for outcome `error`
    worker_stop: str | None = None  # how the Worker's session ended: finished, ended, turns, time, tokens, context…
    worker_context: WorkerContext | None = None
    tool_calls: dict[str, ToolStat] = Field(default_factory=dict)  # the Worker's tool calls by name (none: older)
    faithfulness: list[Faithfulness] = Field(default_factory=list)  # verdicts on the statements it changed
    mathlib_overlap: list[LibraryProof] = Field(default_factory=list)  # closed theorems the library already has
    prover_jobs: dict[str, list[str]] = Field(default_factory=dict)  # external prover jobs "submitted", "used"
    progress: bool | None = None  # what the facts show (orchestrator/facts.py); None in older records
    issues_opened: list[str] = Field(default_factory=list)  # the issues the Worker opened that landed
    planner_failed: str | None = None  # why the Planner's answer was not used, when it was not
    restated: list[str] = Field(default_factory=list)  # statements paired with the book whose meaning it changed
    round: int | None = None  # the parallel round the cycle was an item of; None for a cycle of one Worker
    item: str | None = None  # that item's name in the round's strategy
    worked_by: str | None = None  # the engine that worked that item ([parallel] engine); None outside a round or
    # when it was never worked (dropped). Not `engine`: the reference loop's records use that key for the backend.
    # What the cycle aimed at and did, by declaration (orchestrator/targets.py, orchestrator/facts.py): the attempts
    # the difficulty model is fitted on. `targets` is None in records written before it was kept.
    targets: list[str] | None = None  # the declarations holding a hole at the base that the strategy aimed at
    closed: list[str] = Field(default_factory=list)  # declarations whose holes the landed change closed
    opened: list[str] = Field(default_factory=list)  # declarations holding a hole that held none at the base
    decomposed: list[str] = Field(default_factory=list)  # declarations whose hole a declared split divided
    parts: dict[str, list[str]] = Field(default_factory=dict)  # each decomposed declaration → the parts it uses
    worker_model: str | None = None  # the model the Worker's session was opened with ([agents.worker] hard_model)
    paused_until: datetime | None = None  # a rate limit or usage cap stopped a role: the loop waits until then
    evaluated: bool | None = None  # False: no Evaluator scored the cycle, and its 0 is no verdict; None: older

    @field_validator("started_at", "finished_at", "paused_until")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)

    @property
    def spent_usd(self) -> float:
        """What the cycle is known to have spent: its cost, or the sum of the roles whose price was known."""
        if self.cost_usd is not None:
            return self.cost_usd
        return sum(v for v in self.costs.values() if v is not None)

    @property
    def paused(self) -> bool:
        """A rate limit or usage cap stopped the cycle before anything of it landed: neither a failure nor a stall
        (`orchestrator.pause`)."""
        return self.paused_until is not None and self.outcome is not Outcome.ACCEPTED

    @property
    def score(self) -> int | None:
        """The Evaluator's score; None where none scored the cycle (an error before it, an outage, a reference
        record that kept none)."""
        return None if self.evaluated is False else self.progress_score

    @property
    def made_progress(self) -> bool:
        """Progress by the facts; records older than the facts fall back to their score."""
        return self.progress if self.progress is not None else (self.score or 0) > 0

    @property
    def was_restructuring(self) -> bool:
        """Whether this cycle used the restructuring budget."""
        if self.restructuring:
            return True
        # The reference script kept a rise only as a restructuring, and marked reverts in the summary.
        legacy = self.outcome is None and not self.summary.startswith("REVERTED")
        return legacy and (self.post_sorry_count or 0) > (self.pre_sorry_count or 0)

    def to_line(self) -> str:
        return json.dumps(self.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))


def _migrate_0_to_1(raw: dict[str, Any]) -> dict[str, Any]:
    """The reference script's records: `timestamp` is when the cycle finished; a score outside [-2, 2] (its
    Evaluator was not held to the scale) is held to it, the score as written kept beside it (`score_as_written`);
    none at all is no score (None), not 0."""
    out = dict(raw)
    if "finished_at" not in out and isinstance(out.get("timestamp"), str):
        out["finished_at"] = out["timestamp"]
    out.setdefault("progress_score", None)  # its records of another shape (`sorrys`, `target`) kept no score
    score = out.get("progress_score")
    if isinstance(score, int) and not isinstance(score, bool) and not -2 <= score <= 2:
        out["progress_score"] = max(-2, min(2, score))
        out["score_as_written"] = score
    out["schema_version"] = 1
    return out


# Index i migrates a record of version i to version i + 1. Only ever appended.
MIGRATIONS: list[Callable[[dict[str, Any]], dict[str, Any]]] = [_migrate_0_to_1]


def parse_record(raw: object) -> HistoryRecord:
    if not isinstance(raw, dict):
        raise ValueError("not a JSON object")
    version = raw.get("schema_version", 0)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ValueError(f"schema_version {version!r} is newer than this autoformalize understands; upgrade it")
    for migrate in MIGRATIONS[version:]:
        raw = migrate(raw)
    return HistoryRecord.model_validate(raw)


@dataclass
class History:
    records: list[HistoryRecord] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def last(self, n: int) -> list[HistoryRecord]:
        return self.records[-n:] if n > 0 else []


def read_history(path: Path) -> History:
    """Every valid record; each invalid line is named in `problems` and skipped. Never read through a link
    (`state.files.read_bytes`)."""
    data = read_bytes(path)
    return History() if data is None else parse_history(data, path.name)


def parse_history(data: bytes, name: str = "history.jsonl") -> History:
    out = History()
    lines = data.split(b"\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{name} line {number}"
        truncated = number == len(lines) and not data.endswith(b"\n")
        try:
            record = parse_record(json.loads(line.decode("utf-8")))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            cause = "cut short (the writer probably crashed)" if truncated else f"not valid JSON ({e})"
            out.problems.append(f"{where}: {cause}; skipped")
        except (ValidationError, ValueError) as e:
            out.problems.append(f"{where}: not a history record ({_first_error(e)}); skipped")
        else:
            out.records.append(record)
            if (written := (record.model_extra or {}).get("score_as_written")) is not None:
                out.problems.append(f"{where}: progress_score {written} is outside [-2, 2]; read as "
                                    f"{record.progress_score}")
    return out


def spent(history: Iterable[HistoryRecord], cycle: int, window: int, what: Callable[[HistoryRecord], bool]
          ) -> list[int]:
    """The cycles within `window` cycles before `cycle` whose record `what` holds of: a budget's spending."""
    return [r.cycle for r in history if cycle - window < r.cycle < cycle and what(r)]


def scored(score: int | None) -> str:
    """A cycle's score as people read it: `+1`, or that no Evaluator scored it."""
    return "unscored" if score is None else f"{score:+d}"


def append_record(path: Path, record: HistoryRecord) -> None:
    append_line(unlinked(path), record.to_line())


def _first_error(e: Exception) -> str:
    if isinstance(e, ValidationError):
        err = e.errors()[0]
        return f"{'.'.join(str(p) for p in err['loc']) or 'record'}: {err['msg']}"
    return str(e)
