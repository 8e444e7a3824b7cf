"""Running the agent on the suite's cases: one process per case and repeat, no shell, bounded and scrubbed.

Each run gets a folder ``work/CASE_ID.rREPEAT/`` under the output folder: ``case.json`` (the case the
agent reads through ``{case}``), ``trace.jsonl`` (``{out}``, where the agent writes its trace in any
format evalkit imports), ``inputs.sha256`` (what decided the run) and ``run.json`` (the run record,
written last). A crash, a timeout or a trace
evalkit cannot read is an errored run record with the reason, never a dropped run. ``runs.jsonl`` and
``traces.jsonl`` gather every run in case order; a rerun keeps finished runs whose case, command and
named files (the agent spec) are unchanged and runs the others again, so the same cases and the same
agent give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from evalkit.contract_files import read_model
from evalkit.contracts.dataset import AgentRun, Case, RunStatus
from evalkit.contracts.subject import AgentCommand
from evalkit.contracts.trace import Trace
from evalkit.io import InputError, atomic_write_text, canonical_dumps, canonical_line
from evalkit.processes import output_tail, run_in_own_group
from evalkit.traces import ImportReport, iter_traces, write_jsonl

BASIC_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "SYSTEMROOT")
"""Variables every agent gets (when set): enough to find programs and decode text; nothing secret."""

@dataclass(frozen=True)
class RunOutcome:
    """Every run record in case order, the traces of the runs that succeeded, and where they were written."""

    runs: list[AgentRun]
    traces: list[Trace]
    runs_file: Path
    traces_file: Path
    reused: int

    def counts(self) -> dict[str, int]:
        """Runs per status."""
        out = {"ok": 0, "error": 0, "timeout": 0}
        for run in self.runs:
            out[run.status] += 1
        return out


def run_trace_id(case_id: str, repeat: int) -> str:
    """The id evalkit gives the trace of one run: unique per case and repeat, whatever the agent chose."""
    return f"{case_id}-r{repeat}"


def scrubbed_env(allowed: Sequence[str], source: dict[str, str] | None = None) -> dict[str, str]:
    """The environment an agent sees: the basics plus the allowed names, when set; nothing else."""
    source = dict(os.environ) if source is None else source
    return {name: source[name] for name in (*BASIC_ENV, *allowed) if name in source}


def _argv(agent: AgentCommand, case: Case, repeat: int, case_file: Path, out_file: Path) -> list[str]:
    values = {"case": str(case_file), "out": str(out_file), "repeat": str(repeat), "case_id": case.id,
              "python": sys.executable}
    return [arg.format(**values) for arg in agent.command]


def _read_trace(out_file: Path) -> list[Trace]:
    """The traces in the agent's output: JSONL, or one JSON document (an OTLP export, a trace list)."""
    try:
        return list(iter_traces(out_file, report=ImportReport()))
    except InputError as as_lines:
        try:
            json.loads(out_file.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            raise as_lines from None  # neither JSONL nor one JSON document: report the JSONL reading's error
        as_document = out_file.with_name("trace.json")
        as_document.unlink(missing_ok=True)
        os.link(out_file, as_document)
        return list(iter_traces(as_document, report=ImportReport()))


def _linked(trace: Trace, case: Case, repeat: int) -> Trace:
    metadata = dict(trace.metadata or {})
    wanted_id = run_trace_id(case.id, repeat)
    if trace.id != wanted_id:
        metadata["agentTraceId"] = trace.id
    metadata.update(caseId=case.id, repeat=repeat)
    return trace.model_copy(update={"id": wanted_id, "metadata": metadata})


def _record(case: Case, repeat: int, status: RunStatus, **fields: object) -> AgentRun:
    """A run record with only the fields that have a value (absent, not null, in the file)."""
    return AgentRun(case_id=case.id, repeat=repeat, status=status,
                    **{k: v for k, v in fields.items() if v is not None})


def _errored(case: Case, repeat: int, status: RunStatus, reason: str, exit_code: int | None,
             stderr: bytes) -> tuple[AgentRun, None]:
    return _record(case, repeat, status, reason=reason, exit_code=exit_code, stderr_tail=output_tail(stderr)), None


def run_once(agent: AgentCommand, case: Case, repeat: int, folder: Path, *, cwd: Path,
             env: dict[str, str]) -> tuple[AgentRun, Trace | None]:
    """Run the agent on one case once, in ``folder``; the record and, when it succeeded, its trace."""
    folder.mkdir(parents=True, exist_ok=True)
    case_file, out_file = folder / "case.json", folder / "trace.jsonl"
    atomic_write_text(case_file, canonical_dumps(case.to_json_obj()))
    for stale in (out_file, folder / "trace.json"):
        stale.unlink(missing_ok=True)
    argv = _argv(agent, case, repeat, case_file.resolve(), out_file.resolve())
    try:  # in its own process group: on a timeout the children it started die too
        done = run_in_own_group(argv, cwd=cwd, env=env, timeout=agent.timeout_s, capture_stdout=False)
    except OSError as exc:
        return _errored(case, repeat, "error", f"could not start {argv[0]!r}: {exc.strerror or exc}", None, b"")
    stderr = done.stderr
    if done.timed_out:
        return _errored(case, repeat, "timeout", f"no exit within {agent.timeout_s:g} s; killed", None, stderr)
    if done.returncode != 0:
        return _errored(case, repeat, "error", f"exited with code {done.returncode}", done.returncode, stderr)
    if not out_file.exists():
        return _errored(case, repeat, "error", "exited 0 but wrote no trace to {out}", 0, stderr)
    try:
        traces = _read_trace(out_file)
    except InputError as exc:
        return _errored(case, repeat, "error", f"unreadable trace: {exc}", 0, stderr)
    if len(traces) != 1:
        return _errored(case, repeat, "error", f"wrote {len(traces)} traces; one run must write one", 0, stderr)
    trace = _linked(traces[0], case, repeat)
    return _record(case, repeat, "ok", trace_id=trace.id, exit_code=0, stderr_tail=output_tail(stderr)), trace


def run_inputs_digest(agent: AgentCommand, case: Case, cwd: Path) -> str:
    """What decides a run's result: the case, the command, and every file the command names (the agent
    spec, a script), by content. A finished run is reused only while this stays the same."""
    files = {}
    for arg in agent.command:
        if "{" not in arg and (cwd / arg).is_file():
            files[arg] = hashlib.sha256((cwd / arg).read_bytes()).hexdigest()
    inputs = {"case": case.to_json_obj(), "command": agent.command, "env": agent.env, "files": files,
              "timeoutS": agent.timeout_s}
    return hashlib.sha256(canonical_line(inputs).encode("utf-8")).hexdigest()


def _finished(folder: Path, digest: str) -> tuple[AgentRun, Trace] | None:
    """A finished successful run of an earlier invocation on the same inputs, re-read; else None."""
    record_file, digest_file = folder / "run.json", folder / "inputs.sha256"
    if not record_file.exists() or not digest_file.exists() or digest_file.read_text().strip() != digest:
        return None
    try:
        record = read_model(record_file, AgentRun)
        if record.status != "ok":
            return None
        traces = [t for t in iter_traces(folder / "linked-trace.jsonl", report=ImportReport())]
    except (InputError, OSError):
        return None  # a damaged folder is run again, not trusted
    return (record, traces[0]) if len(traces) == 1 else None


def run_cases(agent: AgentCommand, cases: Sequence[Case], out_dir: str | Path, *, cwd: str | Path,
              repeats: int = 1, concurrency: int = 2, env: dict[str, str] | None = None) -> RunOutcome:
    """Run the agent on every case ``repeats`` times, at most ``concurrency`` at once.

    Args:
        agent: the subject's agent command.
        cases: the cases, in the order the outputs list them.
        out_dir: where ``work/``, ``runs.jsonl`` and ``traces.jsonl`` go.
        cwd: the folder the command runs in (the subject file's folder: relative paths resolve there).
        repeats: runs per case (numbered from 1).
        concurrency: agent processes running at once.
        env: the environment to scrub (default: this process's).
    """
    if repeats < 1 or concurrency < 1:
        raise ValueError("repeats and concurrency must be at least 1")
    out = Path(out_dir)
    agent_env = scrubbed_env(agent.env, env)
    jobs = [(case, r) for case in cases for r in range(1, repeats + 1)]

    def one(job: tuple[Case, int]) -> tuple[AgentRun, Trace | None, bool]:
        case, repeat = job
        folder = out / "work" / f"{case.id}.r{repeat}"
        digest = run_inputs_digest(agent, case, Path(cwd))
        done = _finished(folder, digest)
        if done is not None:
            return done[0], done[1], True
        (folder / "run.json").unlink(missing_ok=True)
        record, trace = run_once(agent, case, repeat, folder, cwd=Path(cwd), env=agent_env)
        if trace is not None:
            write_jsonl([trace], folder / "linked-trace.jsonl")
        atomic_write_text(folder / "inputs.sha256", digest + "\n")
        atomic_write_text(folder / "run.json", canonical_dumps(record.to_json_obj()))
        return record, trace, False

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        results = list(pool.map(one, jobs))
    runs = [r for r, _, _ in results]
    traces = [t for _, t, _ in results if t is not None]
    runs_file, traces_file = out / "runs.jsonl", out / "traces.jsonl"
    atomic_write_text(runs_file, "".join(canonical_line(r.to_json_obj()) for r in runs))
    write_jsonl(traces, traces_file)
    return RunOutcome(runs, traces, runs_file, traces_file, sum(1 for *_, reused in results if reused))


def run_subject(subject_file: str | Path, out_dir: str | Path, *, repeats: int = 1, concurrency: int = 2,
                case_ids: Sequence[str] | None = None) -> RunOutcome:
    """Run the subject's agent on its dataset's cases (all, or those of ``case_ids``).

    Raises:
        InputError: the subject has no ``agent`` or no ``dataset``, or names a case id the suite lacks.
    """
    from evalkit.contracts.subject import Subject
    from evalkit.suite.files import read_dataset

    subject_path = Path(subject_file)
    subject = read_model(subject_path, Subject)
    if subject.agent is None:
        raise InputError("the subject names no agent command (add agent: {command: [...]})",
                         file=str(subject_path), path="agent")
    if subject.dataset is None:
        raise InputError("the subject names no dataset to run the agent on", file=str(subject_path),
                         path="dataset")
    dataset = read_dataset(subject_path.parent / subject.dataset)
    cases = dataset.cases
    if case_ids is not None:
        by_id = {c.id: c for c in cases}
        unknown = [i for i in case_ids if i not in by_id]
        if unknown:
            raise InputError(f"not a case of the suite: {', '.join(unknown)}", file=subject.dataset)
        cases = [by_id[i] for i in case_ids]
    return run_cases(subject.agent, cases, out_dir, cwd=subject_path.parent.resolve(), repeats=repeats,
                     concurrency=concurrency)
