"""A CLI's own login lent to a session: copied in, handed back when refreshed, never over a newer one."""

from __future__ import annotations

import stat
from pathlib import Path

from agents.coding import Login


def test_a_refreshed_login_is_handed_back(tmp_path: Path) -> None:
    source = tmp_path / "auth.json"
    source.write_text('{"tokens": {"refresh_token": "old"}}')
    login = Login.lend(source, tmp_path / "session" / ".codex" / "auth.json")

    assert login.copy.read_text() == source.read_text() and stat.S_IMODE(login.copy.stat().st_mode) == 0o600
    login.copy.write_text('{"tokens": {"refresh_token": "new"}}')  # the CLI refreshed it
    login.give_back()

    assert source.read_text() == '{"tokens": {"refresh_token": "new"}}'


def test_a_login_refreshed_elsewhere_meanwhile_is_not_overwritten(tmp_path: Path) -> None:
    source = tmp_path / "auth.json"
    source.write_text('{"tokens": {"refresh_token": "old"}}')
    first = Login.lend(source, tmp_path / "one" / "auth.json")
    second = Login.lend(source, tmp_path / "two" / "auth.json")
    second.copy.write_text('{"tokens": {"refresh_token": "second"}}')
    second.give_back()  # the second session refreshed first: "old" is now revoked
    first.copy.write_text('{"tokens": {"refresh_token": "first, from the revoked one"}}')

    first.give_back()

    assert source.read_text() == '{"tokens": {"refresh_token": "second"}}'


def test_an_unchanged_login_is_left_as_it_is(tmp_path: Path) -> None:
    source = tmp_path / "auth.json"
    source.write_text("{}")
    before = source.stat().st_mtime_ns

    Login.lend(source, tmp_path / "s" / "auth.json").give_back()

    assert source.stat().st_mtime_ns == before
