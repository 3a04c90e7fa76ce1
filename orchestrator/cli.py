"""The command line: argument parsing and dispatch only; each command is a function returning its exit code."""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from orchestrator.logs import configure as configure_logs
from state.errors import AutoformalizeError

PATH_ERRORS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.EEXIST}
"""Errors of a path the user can mend (exit 2); other errors of the system (a full disk…) exit 1."""
_REPO_HELP = "The repository to work on (default: the one containing the current directory)."


def _repo_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--repo", type=click.Path(file_okay=False, path_type=Path), default=None,
                        help=_REPO_HELP)(f)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="autoformalize", prog_name="autoformalize")
@click.option("--log-format", type=click.Choice(["auto", "json", "console"]), default="auto", show_default=True,
              help="Logs on stderr: JSON lines, readable lines, or JSON unless stderr is a terminal.")
def cli(log_format: str) -> None:
    """Formalize a textbook in Lean 4 with a loop of stateless agents and mechanical gates."""
    configure_logs(json_lines=None if log_format == "auto" else log_format == "json")


@cli.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--lean-root", "lean_roots", multiple=True, metavar="NAME",
              help="A directory of formalization sources (repeatable); detected from the lakefile by default.")
@click.option("--project", "project", type=click.Path(file_okay=False, path_type=Path), default=None, metavar="DIR",
              help="The folder holding the Lake project, when it is not the repository root; found below the root "
                   "by default.")
@click.option("--github", is_flag=True, help="Also write the scheduled GitHub Actions workflow.")
@click.option("--workers", type=click.IntRange(min=1, max=64), default=None, metavar="N",
              help="Workers a round ([parallel] workers); with --github, a job each in the workflow.")
@_repo_option
def init(directory: Path | None, lean_roots: tuple[str, ...], project: Path | None, github: bool,
         workers: int | None, repo: Path | None) -> int:
    """Add configuration, state files and agent rules to an existing Lean repository."""
    from orchestrator.commands import init as command

    if directory is not None and repo is not None and directory != repo:
        raise click.UsageError("give the repository once: DIRECTORY or --repo")
    return command.run(directory or repo, lean_roots, github, project, workers)


@cli.command()
@click.option("--dry-run", is_flag=True, help="Do every read-only step and print what each phase would do.")
@click.option("--skip-planner", is_flag=True, help="Reuse the current strategy.md (after editing it by hand).")
@click.option("--no-push", is_flag=True, help="Commit locally; do not push this cycle.")
@_repo_option
def cycle(dry_run: bool, skip_planner: bool, no_push: bool, repo: Path | None) -> int:
    """Run exactly one cycle: plan, work, gates, evaluate, commit."""
    from orchestrator.commands import cycle as command

    return command.run(repo, dry_run, skip_planner, no_push)


@cli.command()
@click.option("--max-cycles", type=click.IntRange(min=1), default=None, help="Stop after this many cycles.")
@click.option("--cooldown", type=click.FloatRange(min=0), default=None, metavar="S",
              help="Seconds between cycles (default: [loop] cooldown_s).")
@_repo_option
def run(max_cycles: int | None, cooldown: float | None, repo: Path | None) -> int:
    """Cycle until stopped (SIGTERM/SIGINT stop at the next safe point) or a stop condition is met."""
    from orchestrator.commands import run as command

    return command.run(repo, max_cycles, cooldown)


@cli.command()
@click.option("--stale-after", type=click.FloatRange(min=1), default=None, metavar="S",
              help="Restart `run` when its heartbeat is older than this (default: 5 × heartbeat_s).")
@click.option("--max-restarts", type=click.IntRange(min=0), default=5, show_default=True,
              help="Give up after this many restarts within an hour.")
@click.option("--log", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where `run`'s output goes (default: .git/autoformalize/run.log).")
@click.option("--max-cycles", type=click.IntRange(min=1), default=None, help="Passed to `run`.")
@click.option("--cooldown", type=click.FloatRange(min=0), default=None, metavar="S", help="Passed to `run`.")
@_repo_option
def watchdog(stale_after: float | None, max_restarts: int, log: Path | None, max_cycles: int | None,
             cooldown: float | None, repo: Path | None) -> int:
    """Supervise `run`: restart it when it dies or hangs, kill a hung one's whole process group first."""
    from orchestrator.commands import watchdog as command

    args = [*(["--max-cycles", str(max_cycles)] if max_cycles else []),
            *(["--cooldown", str(cooldown)] if cooldown is not None else [])]
    return command.run(repo, stale_after, max_restarts, log, args)


@cli.command()
@click.option("--no-canaries", is_flag=True, help="Only check the setup; skip the cheats run on your Lean.")
@_repo_option
def doctor(no_canaries: bool, repo: Path | None) -> int:
    """Check the setup a cycle needs, then prove the gates on your real Lean: every cheat rejected."""
    from orchestrator.commands import doctor as command

    return command.run(repo, not no_canaries)


@cli.command()
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@_repo_option
def sorries(path: Path | None, as_json: bool, repo: Path | None) -> int:
    """The sorry, admit and axiom census of PATH (default: the repository's Lean roots)."""
    from orchestrator.commands import sorries as command

    return command.run(path, repo, as_json)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@_repo_option
def status(as_json: bool, repo: Path | None) -> int:
    """Where the project stands: cycle, sorries, scores, issues, lock, heartbeat, spend."""
    from orchestrator.commands import status as command

    return command.run(repo, as_json)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@_repo_option
def forecast(as_json: bool, repo: Path | None) -> int:
    """Each open target's difficulty, and the cycles and dollars left to close them all (P10, P50, P90)."""
    from orchestrator.commands import forecast as command

    return command.run(repo, as_json)


@cli.command()
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the JSON document instead of the Markdown report.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also write audit.json and audit.md into this directory.")
@click.option("--sample", type=click.IntRange(min=1), default=None, metavar="N",
              help="Judge only a stratified random sample of N formalized entities (by chapter and kind); with "
                   "--mathlib or --successors, try only a random sample of N proved theorems too.")
@click.option("--seed", type=int, default=0, show_default=True, help="The sample's random seed.")
@click.option("--no-models", is_flag=True, help="Skip the parts that need a model.")
@click.option("--filter-edges", is_flag=True, help="Ask the edge filter model about every candidate dependency.")
@click.option("--mathlib", is_flag=True,
              help="Try every proved theorem with `exact?` (Lean runs; answers cached, a re-run asks only what "
                   "changed): how many the library alone closes, the paper's Table 3.")
@click.option("--successors", "successors_", is_flag=True,
              help="Compile each proved theorem's users against mutants of its statement (Lean runs, in a copy of "
                   "the project; answers cached): is it tested, weakly tested, untested, or without users.")
@click.option("--budget-s", type=click.FloatRange(min=0), default=None, metavar="S",
              help="With --mathlib or --successors: start no Lean probe (no theorem's mutants) after S seconds, in "
                   "each (the rest are reported as not asked, and asked by the next run).")
@_repo_option
def audit(path: Path | None, as_json: bool, out: Path | None, sample: int | None, seed: int, no_models: bool,
          filter_edges: bool, mathlib: bool, successors_: bool, budget_s: float | None, repo: Path | None) -> int:
    """The quality audit of a Lean project: proof gap, statistics, faithfulness, reuse, with --mathlib the overlap
    with Mathlib, and with --successors how well each statement's users test it."""
    from orchestrator.commands import audit as command

    return command.run(path, repo, as_json, out, sample, seed, no_models, filter_edges, mathlib, budget_s,
                       successors_)


@cli.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The directory to write index.html and style.css into.")
@_repo_option
def report(out: Path, repo: Path | None) -> int:
    """A static HTML dashboard of the run (no server needed; fine on GitHub Pages)."""
    from orchestrator.commands import report as command

    return command.run(repo, out)


@cli.command()
@click.option("--port", type=click.IntRange(min=0, max=65535), default=None, metavar="N",
              help="Listen on 127.0.0.1:N (default: [review] port; 0: any free port).")
@click.option("--no-browser", is_flag=True, help="Print the address; do not open a browser.")
@click.option("--book", default=None, metavar="B", help="Show only the cards of this book (a folder of the project).")
@click.option("--list", "listing", is_flag=True, help="Print the queue and exit; with --json, as JSON for tools.")
@click.option("--json", "as_json", is_flag=True, help="With --list: print the queue as JSON.")
@_repo_option
def review(port: int | None, no_browser: bool, book: str | None, listing: bool, as_json: bool,
           repo: Path | None) -> int:
    """Review the book's statements and definitions in the browser; verdicts go to reviews.toml in your name."""
    from orchestrator.commands import review as command

    return command.run(repo, port, not no_browser, book, listing, as_json)


def _round_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--round", "folder", type=click.Path(file_okay=False, exists=True, path_type=Path),
                        required=True, help="The round's directory, as `round plan` wrote it.")(f)


@cli.group(name="round")
def round_() -> None:
    """A parallel round as separate jobs: plan, work each item, land (the workflow `init --github` writes)."""


@round_.command(name="plan")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="An empty directory for the round's files (matrix.json lists the items to work).")
@_repo_option
def round_plan(out: Path, repo: Path | None) -> int:
    """The Planner's items, written for one job each; a plan of one item runs as a cycle here."""
    from orchestrator.commands import round as command

    return command.plan(repo, out)


@round_.command(name="work")
@_round_option
@click.option("--item", type=click.IntRange(min=0), required=True, help="The item's index (from matrix.json).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The directory to write the item's result into.")
@_repo_option
def round_work(folder: Path, item: int, out: Path, repo: Path | None) -> int:
    """One item's Worker, in a temporary clone at the round's base; its change and session as files."""
    from orchestrator.commands import round as command

    return command.work(repo, folder, item, out)


@round_.command(name="land")
@_round_option
@click.option("--results", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The items' results, each in result-<index>/ (a missing one rejects its item).")
@click.option("--digest", default=None, metavar="SHA256",
              help="round.json's SHA-256 as the plan job computed it: refuse a round file changed since.")
@click.option("--no-push", is_flag=True, help="Commit locally; do not push.")
@_repo_option
def round_land(folder: Path, results: Path, digest: str | None, no_push: bool, repo: Path | None) -> int:
    """Every item's result gated again here, judged and evaluated, then landed through the merge queue."""
    from orchestrator.commands import round as command

    return command.land(repo, folder, results, no_push, digest)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and map every error to the exit codes of SPEC §4."""
    configure_logs()  # before parsing, so even a usage error logs consistently
    try:
        result = cli.main(args=argv, prog_name="autoformalize", standalone_mode=False)
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.ClickException as e:
        e.show()
        return e.exit_code
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except AutoformalizeError as e:
        click.echo(f"error: {e}", err=True)
        return e.exit_code
    except OSError as e:  # a path the user named or owns, unwritable or missing: said, never a traceback
        where = f": {e.filename}" if e.filename else ""
        click.echo(f"error: {e.strerror or e}{where}", err=True)
        return 2 if e.errno in PATH_ERRORS else 1
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        return 130
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main())
