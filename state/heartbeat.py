"""heartbeat.json: the running process says it is alive, and in which phase."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from state.atomic import write_atomic
from state.files import Linked, read_text


class Heartbeat(BaseModel):
    pid: int
    host: str | None = None  # None only in heartbeats of the reference script
    cycle: int | None = None
    phase: str
    updated_at: datetime
    phase_started_at: datetime | None = None
    phase_deadline: datetime | None = None
    items: dict[str, str] = Field(default_factory=dict)  # a parallel round's items → where each stands

    @model_validator(mode="before")
    @classmethod
    def _legacy(cls, raw: Any) -> Any:
        # The reference script wrote `timestamp` (ISO) and `epoch`.
        if isinstance(raw, dict) and "updated_at" not in raw and "timestamp" in raw:
            raw = {**raw, "updated_at": raw["timestamp"]}
        return raw

    def age(self, now: datetime) -> float:
        """Seconds since the heartbeat was written."""
        updated = self.updated_at if self.updated_at.tzinfo else self.updated_at.replace(tzinfo=UTC)
        return (now - updated).total_seconds()


def write_heartbeat(path: Path, beat: Heartbeat) -> None:
    # `items` only while a parallel round has them: a cycle of one Worker writes the heartbeat it always did
    write_atomic(path, beat.model_dump_json(exclude=None if beat.items else {"items"}) + "\n")


def read_heartbeat(path: Path) -> tuple[Heartbeat | None, str | None]:
    """The heartbeat, or None; and a problem when the file exists but is unreadable."""
    try:
        text = read_text(path)
        if text is None:
            return None, None
        raw = json.loads(text)
    except (OSError, ValueError, Linked) as e:
        return None, f"{path.name} is unreadable ({e})"
    try:
        return Heartbeat.model_validate(raw), None
    except ValidationError as e:
        return None, f"{path.name} is not a heartbeat ({e.errors()[0]['msg']})"
