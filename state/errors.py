"""The exception tree every package raises; the CLI maps it to exit codes (SPEC §4)."""

from __future__ import annotations


class AutoformalizeError(Exception):
    """An error with a message that says what happened and what to do next."""

    exit_code = 1


class InfraError(AutoformalizeError):
    """Something outside the work failed (a tool, the network, the disk): exit 1."""


class UsageError(AutoformalizeError):
    """Bad usage, bad configuration, not a repository, or a dirty working tree: exit 2."""

    exit_code = 2


class LockHeld(AutoformalizeError):
    """Another process holds the run lock: exit 3."""

    exit_code = 3
