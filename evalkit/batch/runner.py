"""Running a batch: each run as its own ``evalkit run`` process, up to ``jobs`` at once, resumable.

Each run is ``python -m evalkit.cli run SUBJECT --out OUT/NAME ...``: a process of its own (its notebooks'
kernels are processes of their own too), in its own process group, its output in ``OUT/logs/NAME.log``.
A run that fails (a notebook, or the run itself) is shown failed with its error and the others go on.

Resuming. A run whose folder holds a finished run (every notebook ok) that recorded the inputs, seed,
judge, time, notebooks and parameters this run would record (``run.json``) is up to date and is not run
again; change an input file (its digest), a value or ``--at`` and it runs. A batch killed at any point can
so be started again as it was: finished runs are kept, the run folder of one that was cut short is left
as it was before (a run replaces its folder whole), and the runs still to do are done.

A killed batch takes its runs with it: on Linux each run dies with the batch process (``PR_SET_PDEATHSIG``)
and its kernels with it; an interrupted batch (Ctrl-C, ``SIGTERM``) kills every run's process group.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TextIO

from evalkit.batch.plan import BatchPlan, BatchRun
from evalkit.batch.variants import write_run_subject
from evalkit.errors import InputError

LOGS_FOLDER = "logs"
POLL_SECONDS = 0.2
ERROR_TAIL_CHARS = 600
"""A run that died without saying ``error: ...`` is shown with the end of its output, this many characters."""


@dataclass(frozen=True)
class RunState:
    """How one run of the batch went in this invocation."""

    status: str
    """``ok``, ``failed`` or ``not-run``."""
    error: str | None = None
    reused: bool = False
    """Up to date from an earlier invocation: not run again."""
    report: bool = False
    """The run folder's report is this run's (not one left by an earlier run)."""
    seconds: float | None = None


@dataclass(frozen=True)
class BatchResult:
    """What a batch did: each run's state in the batch's order, and where its index page is."""

    plan: BatchPlan
    states: dict[str, RunState]
    index: Path

    @property
    def failed(self) -> list[str]:
        return [n for n, s in self.states.items() if s.status == "failed"]

    @property
    def reused(self) -> list[str]:
        return [n for n, s in self.states.items() if s.reused]


def _dies_with_parent() -> Callable[[], None] | None:
    """On Linux, what a run's process calls before it starts so the kernel kills it when the batch process
    dies (``PR_SET_PDEATHSIG``): a kill -9 of the batch leaves no run behind. libc is loaded here, in the
    batch, so the child only makes the call."""
    if sys.platform != "linux":
        return None
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        return None

    def preexec() -> None:  # pragma: no cover - runs in the child, between fork and exec
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    return preexec


def up_to_date(subject_file: Path, run_dir: Path, *, only: tuple[str, ...], at: str | None) -> bool:
    """Whether ``run_dir`` holds a finished run of this subject that a new run would record alike."""
    from evalkit import __version__
    from evalkit.contract_files import read_model
    from evalkit.contracts.summary import RunManifest
    from evalkit.subjects import input_digests, load_subject

    manifest_path = run_dir / "run.json"
    if not manifest_path.is_file():
        return False
    try:
        manifest = read_model(manifest_path, RunManifest)
        resolved = load_subject(subject_file, allow_outside=True)  # held to its folder when it was written
    except InputError:
        return False
    subject = resolved.subject
    names = [n for n in subject.notebooks if not only or n in only]
    return (manifest.evalkit_version == __version__ and manifest.run_at == at and manifest.seed == subject.seed
            and manifest.judge == subject.judge and manifest.subject == subject.name
            and [n.name for n in manifest.notebooks] == names
            and all(n.status == "ok" for n in manifest.notebooks)
            and all(n.parameters == subject.parameters.get(n.name, {}) for n in manifest.notebooks)
            and manifest.inputs == input_digests(resolved))


def _error_of(run_dir: Path, log: Path, returncode: int) -> tuple[str, str | None, bool]:
    """A finished process's status, error and whether its report is there, from its folder and log."""
    from evalkit.contract_files import read_model
    from evalkit.contracts.summary import RunManifest

    text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
    said = [line[len("error: "):] for line in text.splitlines() if line.startswith("error: ")]
    if returncode in (0, 1) and (run_dir / "run.json").is_file() and not said:
        manifest = read_model(run_dir / "run.json", RunManifest)
        errors = [n.error or f"{n.name} failed" for n in manifest.notebooks if n.status != "ok"]
        if not errors and returncode == 0:
            return "ok", None, True
        if errors:
            return "failed", "; ".join(errors), True
    if said:
        return "failed", said[-1], False
    tail = text[-ERROR_TAIL_CHARS:].strip()
    return "failed", f"the run ended with exit code {returncode}" + (f": {tail}" if tail else ""), False


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (a CI job cancelled) ends the batch as Ctrl-C does: its runs are killed first."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _argv(run: BatchRun, subject_file: Path, out: Path, *, at: str | None, history: Path | None,
          notebooks_dir: Path | None, allow_outside: bool, batch: str) -> list[str]:
    argv = [sys.executable, "-m", "evalkit.cli", "run", str(subject_file), "--out", str(out / run.name),
            "--batch-name", batch]
    argv += ["--at", at] if at else []
    argv += ["--only", *run.only] if run.only else []
    argv += ["--notebooks", str(notebooks_dir)] if notebooks_dir else []
    argv += ["--history", str(history)] if history else ["--no-history"]
    argv += ["--allow-outside"] if allow_outside or run.derived else []
    return argv


def run_batch(plan: BatchPlan, out_dir: str | Path, *, jobs: int = 1, at: str | None = None,
              history: str | Path | None = None, notebooks_dir: str | Path | None = None,
              allow_outside: bool = False, progress: TextIO | None = None,
              on_start: Callable[[str, subprocess.Popen], None] | None = None) -> BatchResult:
    """Run every run of ``plan`` into ``OUT/NAME``, ``jobs`` at a time, and write the index page.

    Args:
        plan: the batch (:func:`plan_batch` or :func:`plan_subjects`).
        out_dir: the batch folder: one run folder per run, ``index.html``, ``batch.json``, ``subjects/``
            (the runs' own subject files), ``logs/``.
        jobs: runs at once (each is a process with a kernel of its own: about one core each).
        at: every run's timestamp (``--at``).
        history: the history folder every run is recorded in; None records nothing.
        notebooks_dir: the notebooks to run (default: evalkit's).
        allow_outside: let subjects name files outside their folder.
        progress: where to say what runs and how it went (None: nowhere).
        on_start: called with each run's name and process as it starts (tests use it to kill a batch midway).

    Returns:
        Each run's state; the index is written after every run that ends, so a killed batch leaves one too.

    Raises:
        InputError: ``jobs`` below 1, or a batch folder that cannot be written.
    """
    from evalkit.batch.index import write_index

    if jobs < 1:
        raise InputError(f"must be at least 1 (got {jobs})", path="--jobs")
    out = Path(out_dir)
    logs = out / LOGS_FOLDER
    try:
        logs.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot write the batch here: {exc.strerror or exc}", file=str(out)) from None
    say = (lambda text: print(text, file=progress, flush=True)) if progress else (lambda text: None)
    states: dict[str, RunState] = {r.name: RunState("not-run") for r in plan.runs}
    todo: list[tuple[BatchRun, Path]] = []
    for run in plan.runs:
        try:
            if run.error:
                raise InputError(run.error)
            subject_file = write_run_subject(run, out, allow_outside=allow_outside, batch_file=plan.file)
        except InputError as exc:
            states[run.name] = RunState("failed", exc.render() if not run.error else run.error)
            say(f"{run.name}: failed before it ran: {states[run.name].error}")
            continue
        if up_to_date(subject_file, out / run.name, only=run.only, at=at):
            states[run.name] = RunState("ok", reused=True, report=True)
            say(f"{run.name}: up to date (not run again)")
        else:
            todo.append((run, subject_file))
    write_index(plan, out, states, at=at)
    running: dict[str, tuple[subprocess.Popen, float, BinaryIO]] = {}
    preexec = _dies_with_parent()
    try:
        with _terminate_as_interrupt():
            while todo or running:
                while todo and len(running) < jobs:
                    run, subject_file = todo.pop(0)
                    log = (logs / f"{run.name}.log").open("wb")
                    argv = _argv(run, subject_file, out, at=at, history=Path(history) if history else None,
                                 notebooks_dir=Path(notebooks_dir) if notebooks_dir else None,
                                 allow_outside=allow_outside, batch=plan.name)
                    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True, preexec_fn=preexec)
                    running[run.name] = (proc, time.perf_counter(), log)
                    say(f"{run.name}: started")
                    if on_start is not None:
                        on_start(run.name, proc)
                for name, (proc, started, log) in list(running.items()):
                    if proc.poll() is None:
                        continue
                    log.close()
                    del running[name]
                    status, error, report = _error_of(out / name, logs / f"{name}.log", proc.returncode)
                    states[name] = RunState(status, error, report=report, seconds=time.perf_counter() - started)
                    say(f"{name}: {status} ({states[name].seconds:.1f}s)" + (f"\n    {error}" if error else ""))
                    write_index(plan, out, states, at=at)
                if running:
                    time.sleep(POLL_SECONDS)
    except BaseException:
        from evalkit.processes import kill_group

        for proc, _, log in running.values():
            kill_group(proc)
            proc.wait()
            log.close()
        raise
    return BatchResult(plan, states, write_index(plan, out, states, at=at))


def batch_history(out_dir: str | Path) -> Path:
    """The history folder a batch records its runs in when none is named: ``OUT/history``."""
    from evalkit.history import DEFAULT_FOLDER

    return Path(out_dir) / DEFAULT_FOLDER


def run_batch_file(batch_file: str | Path, out_dir: str | Path, **options: object) -> BatchResult:
    """Run a batch file (:func:`plan_batch`) into ``out_dir``; ``options`` as for :func:`run_batch`."""
    from evalkit.batch.plan import plan_batch

    return run_batch(plan_batch(batch_file), out_dir, **options)  # type: ignore[arg-type]


def run_subject_files(subjects: list[str], out_dir: str | Path, *, only: tuple[str, ...] | list[str] = (),
                      **options: object) -> BatchResult:
    """Run subject files as a batch (:func:`plan_subjects`) into ``out_dir``; ``options`` as for :func:`run_batch`."""
    from evalkit.batch.plan import plan_subjects

    return run_batch(plan_subjects(subjects, only=tuple(only)), out_dir, **options)  # type: ignore[arg-type]
