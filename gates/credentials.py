"""Credentials: which environment variables hold one, and their values redacted from text.

The sandbox keeps credentials out of the Worker's reach; redaction is the last
line of defence behind it. Tool results and the Worker's writes pass through
`Secrets.redact` before they reach the model or a file, and the `secrets` gate
refuses a change holding a secret's value. No message ever shows a value,
only the variable's name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

MIN_LENGTH = 8  # shorter values ("1", "true") are settings, not secrets, and would redact every other word

CREDENTIAL = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|WEBHOOK|AUTH|COOKIE|PRIVATE", re.IGNORECASE)
"""Names whose values are secrets."""
SENSITIVE = re.compile(CREDENTIAL.pattern + r"|^ANTHROPIC_|^OPENAI_|^AWS_|^GH_|^GITHUB_", re.IGNORECASE)
"""Names never passed to code the Worker wrote: the credentials, and the settings of the services holding them."""


def in_file(path: Path, label: str) -> dict[str, str]:
    """The secrets a JSON file holds (a CLI's login: its tokens), each named `label: key.path`: every string under a
    credential-looking key."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out: dict[str, str] = {}

    def walk(value: object, where: str, secret: bool) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(inner, f"{where}.{key}" if where else str(key), secret or bool(CREDENTIAL.search(str(key))))
        elif isinstance(value, list):
            for i, inner in enumerate(value):
                walk(inner, f"{where}[{i}]", secret)
        elif secret and isinstance(value, str) and len(value.strip()) >= MIN_LENGTH:
            out[f"{label}: {where}"] = value.strip()

    walk(data, "", False)
    return out


@dataclass(frozen=True)
class Secrets:
    """The secret values of this process (variable name → value)."""

    values: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, environ: Mapping[str, str], named: Iterable[str] = ()) -> Secrets:
        """The values of `environ`'s credential-looking variables and of the `named` ones (the key variables the
        configuration names, whatever they are called)."""
        wanted = set(named)
        found = {k: v.strip() for k, v in environ.items() if k in wanted or CREDENTIAL.search(k)}
        return cls({k: v for k, v in sorted(found.items()) if len(v) >= MIN_LENGTH})

    def redact(self, text: str) -> str:
        """`text` with every secret's value replaced by `[redacted: NAME]`."""
        for name, value in self._longest_first():
            if value in text:
                text = text.replace(value, f"[redacted: {name}]")
        return text

    def found(self, text: str) -> list[str]:
        """The names of the secrets whose values occur in `text`."""
        return [name for name, value in self._longest_first() if value in text]

    def _longest_first(self) -> list[tuple[str, str]]:
        # A value containing another (a URL holding a token) is replaced whole, not around the shorter one.
        return sorted(self.values.items(), key=lambda item: -len(item[1]))
