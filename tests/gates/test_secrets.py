"""The last line of defence: secret values redacted from what the Worker sees and writes, refused in a change."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agents.model import ToolCall
from agents.tools import Workspace
from gates import secrets
from gates.base import GateInput
from gates.build import LakeCompiler
from gates.config import BuildConfig, GatesConfig
from gates.credentials import Secrets
from gates.tree import MemTree
from orchestrator.config import Config
from orchestrator.wiring import secrets_for
from tests.conftest import sandbox, write

KEY = "sk-ant-test-Zq9XwV7kP3-never-print-me"
HOOK = "https://hooks.example.com/services/T000/B000/XXXXsecretXXXX"


def known() -> Secrets:
    return Secrets.of({"ANTHROPIC_API_KEY": KEY, "AUTOFORMALIZE_WEBHOOK_URL": HOOK, "MY_LLM": "custom-llm-key-123",
                       "HOME": "/home/someone", "DEBUG": "1", "GITHUB_TOKEN": "short"}, named=["MY_LLM"])


def test_credential_looking_and_named_variables_are_secrets() -> None:
    # MY_LLM is not credential-looking but the configuration names it; a 5-character value is a setting.
    assert set(known().values) == {"ANTHROPIC_API_KEY", "AUTOFORMALIZE_WEBHOOK_URL", "MY_LLM"}


def test_redaction_replaces_values_by_names() -> None:
    text = f"key={KEY}; hook={HOOK}; home=/home/someone"
    assert known().redact(text) == ("key=[redacted: ANTHROPIC_API_KEY]; hook=[redacted: AUTOFORMALIZE_WEBHOOK_URL]; "
                                    "home=/home/someone")
    assert known().found(text) == ["AUTOFORMALIZE_WEBHOOK_URL", "ANTHROPIC_API_KEY"]


def _input(files: dict[str, str], base: dict[str, str] | None = None, secrets: Secrets | None = None) -> GateInput:
    return GateInput(base=MemTree({k: v.encode() for k, v in (base or {}).items()}),
                     changed=MemTree({k: v.encode() for k, v in files.items()}), gates=GatesConfig(),
                     build=BuildConfig(), lean_roots=["Book"], state_dir=".prover-state", scope=["Book/**"],
                     report="", cycle=1, secrets=secrets or known())


def test_the_gate_rejects_a_change_carrying_a_secret_without_showing_it() -> None:
    result = secrets.check(_input({"Book/A.lean": f"-- {KEY}\n", ".prover-state/issues/leak.md": f"{HOOK}\n",
                                   "Book/B.lean": "theorem b : True := trivial\n"}))

    assert not result.passed
    assert result.detail.startswith(".prover-state/issues/leak.md contains the value of $AUTOFORMALIZE_WEBHOOK_URL; "
                                    "Book/A.lean contains the value of $ANTHROPIC_API_KEY (the values are not shown)")
    assert KEY not in result.detail and HOOK not in result.detail


def test_the_gate_passes_a_clean_change_and_one_that_deletes_a_leak() -> None:
    assert secrets.check(_input({"Book/B.lean": "theorem b : True := trivial\n"})).passed
    assert secrets.check(_input({}, base={"Book/A.lean": f"-- {KEY}\n"})).passed


def test_tool_results_and_writes_are_redacted(tmp_path: Path) -> None:
    root = tmp_path / "work"
    write(root, {"Book/A.lean": f"-- a key that got in: {KEY}\n"})
    compiler = LakeCompiler(root, BuildConfig(check_file=f"{sys.executable} -c pass {{file}}"), sandbox())
    ws = Workspace(root, ["Book/*.lean"], [], ".prover-state", ["Book"], compiler, secrets=known())

    read = ws.call(ToolCall("1", "read_file", {"path": "Book/A.lean"}))
    ws.call(ToolCall("2", "open_issue", {"slug": "leak", "body": f"the hook is {HOOK}"}))
    ws.call(ToolCall("3", "finish", {"report": f"done; key {KEY}"}))

    assert KEY not in read.content and "[redacted: ANTHROPIC_API_KEY]" in read.content
    assert (root / ".prover-state/issues/leak.md").read_text() == "the hook is [redacted: AUTOFORMALIZE_WEBHOOK_URL]\n"
    assert ws.report == "done; key [redacted: ANTHROPIC_API_KEY]"


def test_a_coding_agents_login_is_secret_token_by_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A codex Worker's session holds a copy of the login, which its commands can read: its tokens must never land.
    refresh = "rt_1.Zk3QmV8pXw9-a-refresh-token-never-print"
    write(tmp_path / "home", {".codex/auth.json": json.dumps({
        "OPENAI_API_KEY": None, "last_refresh": "2026-12-07T03:00:00Z",
        "tokens": {"id_token": "eyJhbGciOi.id-token-value", "access_token": "eyJhbGciOi.access-token-value",
                   "refresh_token": refresh, "account_id": "acct-1234567890"}})})
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)

    found = secrets_for(Config.model_validate({"project": {"lean_roots": ["Book"]}}))

    assert found.values["codex login: tokens.refresh_token"] == refresh
    assert {"codex login: tokens.id_token", "codex login: tokens.access_token"} <= set(found.values)
    assert "2026-12-07T03:00:00Z" not in found.values.values()  # not under a credential's name
    gate = secrets.check(_input({"Book/A.lean": f"-- {refresh}\n"}, secrets=found))
    assert not gate.passed and refresh not in gate.detail and "codex login: tokens.refresh_token" in gate.detail
