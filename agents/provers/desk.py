"""What a cycle does with the external prover: harvest open jobs, submit new ones, hand proofs to the Worker,
and settle which returned proofs were used.

The desk only changes memory; the cycle's bookkeeping writes the ledger and
the harvested files into the commit (`write`), so a cycle that does not land
leaves no trace of its harvest and the next one polls again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import structlog

from agents.provers.base import Off, Phase, Prover, ProverError
from agents.provers.config import ProverConfig
from gates import directives
from gates.census import Census
from gates.chosen import shown
from gates.index import Decl, index_source
from gates.tree import Tree
from state import files
from state.atomic import write_atomic
from state.prover_jobs import JobStatus, ProverJob, ProverJobs, Target, Use, read_jobs, write_jobs

log = structlog.get_logger()
PROJECT_FILES = {"lakefile.toml", "lakefile.lean", "lean-toolchain", "lake-manifest.json"}


class Declined(Exception):
    """A submission the desk will not make; the message says why."""


def declaration(text: str, path: str, name: str) -> Decl | None:
    """The declaration `name` (qualified, or its last parts) of a Lean file."""
    found = [d for d in index_source(path, text).decls
             if d.name and (d.name == name or d.name.endswith("." + name))]
    return found[0] if len(found) == 1 else None


def project_files(tree: Tree, state_dir: str) -> dict[str, bytes]:
    """What a prover needs to build the targets: the Lean sources and the Lake project files."""
    return {p: tree.read(p) for p in tree.files()
            if not p.startswith(f"{state_dir}/") and (p.endswith(".lean") or p.rsplit("/", 1)[-1] in PROJECT_FILES)}


def _decl(census: Census, target: Target) -> Decl | None:
    index = census.files.get(target.file)
    return next((d for d in index.decls if d.name == target.declaration), None) if index else None


def _progress(job: ProverJob) -> tuple[bool, bool, bool]:
    """How far a job has gone: finished, then settled, then used."""
    return job.status is not JobStatus.SUBMITTED, job.use is not None, job.use is Use.USED


def signature(d: Decl) -> str:
    """The declaration's statement as written, whitespace aside: a proof must leave it as it is."""
    return " ".join(d.written(body=False).split())


def _whole(d: Decl) -> str:
    return " ".join(d.written(body=True).split())


def target(name: str, census: Census) -> Target:
    """The one declaration holding a sorry that `name` (qualified, or its last parts) names."""
    found = sorted({(h.declaration, path) for path, f in census.files.items() for h in f.holes
                    if h.declaration and (h.declaration == name or h.declaration.endswith("." + name))})
    if len(found) != 1:
        raise Declined(f"{name!r} names {'no' if not found else 'more than one'} declaration with a sorry")
    return Target(declaration=found[0][0], file=found[0][1])


@dataclass
class Proof:
    job: str
    file: str  # the target's file in the repository
    text: str  # the returned declaration, signature and proof
    statement: str  # its `signature`


@dataclass
class Desk:
    config: ProverConfig
    prover: Prover | Off
    jobs: ProverJobs
    results_dir: Path  # <state>/prover_results of the cycle's base
    clock: Callable[[], datetime]
    cycle: int
    state_dir: str
    fetched: dict[str, dict[str, str]] = field(default_factory=dict)  # job → returned files of its targets
    applied: dict[str, str] = field(default_factory=dict)  # declaration → job whose proof the Worker applied
    submitted: list[str] = field(default_factory=list)  # jobs submitted this cycle
    notes: list[str] = field(default_factory=list)  # what went wrong talking to the prover
    on_submit: Callable[[ProverJob], None] | None = None  # journals each job at once: it runs on, landed or not
    unsettled: dict[str, ProverJob] | None = None  # the jobs as they were before `settle`, to settle again
    base: dict[str, ProverJob] = field(default_factory=dict)  # the ledger as the base has it, to tell our changes

    @classmethod
    def open(cls, config: ProverConfig, prover: Prover | Off, jobs_file: Path, results_dir: Path,
             clock: Callable[[], datetime], cycle: int, state_dir: str, adopted: list[ProverJob]) -> Desk:
        """The ledger of `jobs_file`, with the jobs of interrupted cycles (`adopted`) it does not hold yet."""
        jobs = read_jobs(jobs_file)
        base = {j.id: j for j in jobs.jobs}
        jobs.jobs += [j for j in adopted if j.id not in base]
        return cls(config, prover, jobs, results_dir, clock, cycle, state_dir, base=base)

    @property
    def off(self) -> str | None:
        """Why the prover is off, or None."""
        return self.prover.reason if isinstance(self.prover, Off) else None

    def open_jobs(self) -> list[ProverJob]:
        return [j for j in self.jobs.jobs if j.open]

    # -- harvest -------------------------------------------------------------

    def harvest(self, census: Census) -> None:
        """Poll every open job; fetch the finished, cancel the overdue and those whose targets were closed."""
        holding = {h.declaration for f in census.files.values() for h in f.holes if h.declaration}
        for job in self.open_jobs():
            if isinstance(self.prover, Off):
                break
            try:
                self._harvest(job, holding, census)
            except ProverError as e:
                log.warning("prover.unreachable", job=job.id, error=str(e)[:300])
                self.notes.append(f"job {job.id} could not be polled: {str(e)[:200]}")
        for job in self.jobs.jobs:  # a returned proof nobody needs any more
            if job.status is JobStatus.RETURNED and job.use is None and not holding & set(job.proved):
                self._finish(job, job.status, use=Use.UNUSED, note="its targets were closed otherwise")

    def _harvest(self, job: ProverJob, holding: set[str], census: Census) -> None:
        assert not isinstance(self.prover, Off)
        poll = self.prover.poll(job.id)  # first: a job that finished late is still worth harvesting
        if poll.phase is Phase.RUNNING:
            hours = (self.clock() - job.submitted_at).total_seconds() / 3600
            if hours > self.config.max_wait_hours:
                self._cancel(job, f"no result after {hours:.1f} h (max_wait_hours {self.config.max_wait_hours:g})")
            elif not holding & {t.declaration for t in job.targets}:
                self._cancel(job, "its targets were closed before it returned")
            return
        if poll.phase is not Phase.RETURNED:
            self._finish(job, JobStatus(poll.phase.value), note=poll.detail)
            return
        returned = self.prover.fetch(job.id)
        kept: dict[str, str] = {}
        proved = []
        for t in job.targets:
            path = next((p for p in sorted(returned) if p == t.file or p.endswith("/" + t.file)), None)
            if path is None:
                continue
            kept[t.file] = returned[path]
            d = declaration(returned[path], t.file, t.declaration)
            now = _decl(census, t)
            # A proof of another statement is no proof: the prover may not restate what it was asked to prove.
            if d is not None and d.holes == 0 and now is not None and signature(d) == signature(now):
                proved.append(t.declaration)
        self.fetched[job.id] = kept
        self._finish(job, JobStatus.RETURNED, proved=proved, note=poll.detail,
                     use=None if proved else Use.UNUSED)
        log.info("prover.returned", job=job.id, proved=proved)

    def _cancel(self, job: ProverJob, note: str) -> None:
        assert not isinstance(self.prover, Off)
        try:
            self.prover.cancel(job.id)
        except ProverError as e:  # marked all the same: the loop stops waiting for it
            note += f" (cancelling failed: {str(e)[:200]})"
        self._finish(job, JobStatus.CANCELLED, note=note)
        log.info("prover.cancelled", job=job.id, note=note)

    def _finish(self, job: ProverJob, status: JobStatus, *, note: str = "", proved: list[str] | None = None,
                use: Use | None = None, used_cycle: int | None = None) -> None:
        update: dict[str, object] = {"status": status, "note": note or job.note, "use": use or job.use,
                                     "used_cycle": used_cycle or job.used_cycle}
        if job.open:
            update["finished_at"] = self.clock()
        if proved is not None:
            update["proved"] = proved
        self.jobs.jobs[self.jobs.jobs.index(job)] = job.model_copy(update=update)

    # -- submit --------------------------------------------------------------

    def submit(self, names: list[str], tree: Tree, census: Census) -> ProverJob:
        """A job for the named declarations, each holding a sorry in `census`; `Declined` says why not."""
        if isinstance(self.prover, Off):
            raise Declined(f"the prover is off: {self.prover.reason}")
        if not names:
            raise Declined("name at least one declaration")
        if len(names) > self.config.max_targets_per_job:
            raise Declined(f"at most {self.config.max_targets_per_job} declarations per job")
        if len(self.open_jobs()) >= self.config.max_open_jobs:
            raise Declined(f"{self.config.max_open_jobs} jobs are open already (max_open_jobs)")
        targets = [target(name, census) for name in names]
        pending = {t.declaration for j in self.open_jobs() for t in j.targets}
        taken = [t.declaration for t in targets if t.declaration in pending]
        if taken:
            raise Declined(f"already with the prover: {', '.join(taken)}")
        try:
            job_id = self.prover.submit(targets, project_files(tree, self.state_dir))
        except ProverError as e:
            log.warning("prover.unreachable", error=str(e)[:300])
            self.notes.append(f"a submission failed: {str(e)[:200]}")
            raise Declined(f"the prover could not take the job: {str(e)[:300]}") from e
        job = ProverJob(id=job_id, prover=self.prover.name, submitted_cycle=self.cycle, submitted_at=self.clock(),
                        targets=targets)
        self.jobs.jobs.append(job)
        self.submitted.append(job_id)
        if self.on_submit is not None:
            self.on_submit(job)
        log.info("prover.submitted", job=job_id, targets=[t.declaration for t in targets])
        return job

    # -- proofs --------------------------------------------------------------

    def proof(self, name: str) -> Proof | None:
        """The newest returned proof of the declaration `name`."""
        for job in reversed(self.jobs.jobs):
            for t in job.targets:
                if t.declaration not in job.proved or not (t.declaration == name or t.declaration.endswith(
                        "." + name)):
                    continue
                text = self.returned_file(job.id, t.file)
                d = declaration(text, t.file, t.declaration) if text is not None else None
                if d is not None and d.source is not None:
                    return Proof(job.id, t.file, d.source.text[d.start:d.end], signature(d))
        return None

    def returned_file(self, job: str, file: str) -> str | None:
        if job in self.fetched:
            return self.fetched[job].get(file)
        try:  # a state file: never read through a link
            return files.read_text(self.results_dir / job / file)
        except files.Linked:
            return None

    def settle(self, before: Census, accepted: bool, after: Census | None) -> None:
        """Which returned proofs the cycle used: a job is used when the landed change closed one of its targets
        (a sorry of `before`) with its proof, applied by the tool (and perhaps mended) or copied as it is from the
        results folder; a job whose applied proof did not land is unused. Settling again (after a rebase) first
        undoes the previous settling."""
        self._unsettle()
        self.unsettled = {j.id: j for j in self.jobs.jobs}
        landed: dict[str, Decl] = {}
        if accepted and after is not None:
            holding = {d.name for _, d in before.decls() if d.name and d.holes}
            landed = {d.name: d for _, d in after.decls() if d.name in holding and d.holes == 0}
        for i, job in enumerate(self.jobs.jobs):
            if job.status is not JobStatus.RETURNED or job.use is Use.USED:
                continue
            applied = {name for name, j in self.applied.items() if j == job.id}
            closed = sorted(name for name in job.proved if name in landed and (name in applied or self._copied(
                job, name, landed[name])))
            if closed:
                self.jobs.jobs[i] = job.model_copy(update={
                    "use": Use.USED, "used_cycle": self.cycle, "closed": closed,
                    "note": f"cycle {self.cycle} landed its proof of {', '.join(closed)}"})
            elif applied:
                self.jobs.jobs[i] = job.model_copy(update={
                    "use": Use.UNUSED, "note": f"cycle {self.cycle} applied its proof of {', '.join(sorted(applied))}; "
                                              "the change did not land"})

    def _copied(self, job: ProverJob, name: str, landed: Decl) -> bool:
        target = next(t for t in job.targets if t.declaration == name)
        text = self.returned_file(job.id, target.file)
        returned = declaration(text, target.file, name) if text is not None else None
        return returned is not None and _whole(returned) == _whole(landed)

    def _unsettle(self) -> None:
        if self.unsettled is not None:
            self.jobs.jobs = [self.unsettled.get(j.id, j) for j in self.jobs.jobs]
            self.unsettled = None

    def rebase(self, remote: ProverJobs, cycle: int) -> None:
        """The branch moved under the cycle: the remote's ledger, with what this cycle did to a job where that
        went further (another loop may have harvested or used the same job), and this cycle's number."""
        self._unsettle()
        theirs = {j.id: j for j in remote.jobs}
        mine = {j.id: j for j in self.jobs.jobs if self.base.get(j.id) != j}
        self.jobs = ProverJobs(jobs=[
            *(j if j.id not in mine or _progress(j) > _progress(mine[j.id]) else mine[j.id] for j in remote.jobs),
            *(j for i, j in mine.items() if i not in theirs)])
        self.base = theirs
        self.jobs.jobs = [j.model_copy(update={"submitted_cycle": cycle}) if j.id in self.submitted else j
                          for j in self.jobs.jobs]
        self.cycle = cycle

    def request(self, text: str, tree: Tree, census: Census) -> None:
        """Submit the declarations named on `PROVER: <declaration>` lines of a strategy or a Worker's report."""
        self.send(directives.names(text, "PROVER"), tree, census, "PROVER:")

    def send(self, names: list[str], tree: Tree, census: Census, why: str) -> None:
        """Submit `names` in jobs of at most `max_targets_per_job`; a note, headed `why`, says what was not and why."""
        found = []
        for name in names:
            try:
                target(name, census)
                found.append(name)
            except Declined as e:  # one bad name does not sink the others
                self.notes.append(f"{why} {name} not submitted: {e}")
        step = self.config.max_targets_per_job
        for group in (found[i:i + step] for i in range(0, len(found), step)):
            try:
                self.submit(group, tree, census)
            except Declined as e:
                self.notes.append(f"{why} {', '.join(group)} not submitted: {e}")

    # -- files and briefs ----------------------------------------------------

    def write(self, jobs_file: Path, results_dir: Path) -> None:
        """The ledger and this cycle's harvest, into the cycle's working copy."""
        if not self.jobs.jobs:
            return
        write_jobs(jobs_file, self.jobs)
        for job, returned in self.fetched.items():
            for file, text in returned.items():
                write_atomic(results_dir / job / file, text)

    def summary(self, results: str) -> str:
        """Open jobs and returned proofs, for the Planner and the Worker; `results` is the results folder's
        repository-relative path."""
        if self.off:
            return f"The external prover is off: {self.off}."
        now = self.clock()
        lines = [f"- job {shown(j.id)}, submitted in cycle {j.submitted_cycle} "
                 f"({(now - j.submitted_at).total_seconds() / 3600:.1f} h ago): "
                 + ", ".join(f"{shown(t.declaration)} ({shown(t.file)})" for t in j.targets) for j in self.open_jobs()]
        lines = [f"Open jobs ({len(lines)} of at most {self.config.max_open_jobs}):", *lines] if lines else [
            f"No open job (at most {self.config.max_open_jobs}, {self.config.max_targets_per_job} "
            "declarations each)."]
        ready = [j for j in self.jobs.jobs if j.status is JobStatus.RETURNED and j.use is None]
        for j in ready:
            proved = sorted({t.file for t in j.targets if t.declaration in j.proved})
            lines.append(f"- returned job {shown(j.id)} proves {', '.join(shown(n) for n in j.proved)}: "
                         + ", ".join(shown(f"{results}/{j.id}/{f}") for f in proved))
        lines += [f"- note: {shown(n, 500)}" for n in self.notes]
        return "\n".join(lines)
