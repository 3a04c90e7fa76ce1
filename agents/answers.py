"""Reading a model's JSON answer into a pydantic model, with an error message that says what to fix."""

from __future__ import annotations

import json
import re
from typing import TypeVar

from pydantic import BaseModel, ValidationError

Answer = TypeVar("Answer", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


class FormatError(ValueError):
    """The answer is not the JSON object asked for; the message says what to fix."""


def parse_json(text: str, shape: type[Answer]) -> Answer:
    """The one JSON object of `text` (a Markdown fence or prose around it tolerated) as `shape`."""
    body = _FENCE.sub("", text.strip()).strip()
    start, end = body.find("{"), body.rfind("}")
    if start >= 0 and end > start:  # prose before or after the object: keep the object
        body = body[start:end + 1]
    try:
        return shape.model_validate(json.loads(body))
    except json.JSONDecodeError as e:
        raise FormatError(f"not a JSON object ({e.msg} at character {e.pos})") from None
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'object'}: {err['msg']}" for err in e.errors())
        raise FormatError(problems) from None
