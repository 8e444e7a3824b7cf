"""Judge calls as partition work: ``evalkit judge run --workers N | --scheduler ADDRESS``.

Each partition (consecutive traces) is judged on every spec by the judge runner's own loop
(:class:`~evalkit.judge.RunLoop`: concurrency, retries, cache, verify), in the worker, with
``--concurrency`` calls in flight per worker. It sends back its finished items, one line each
(``[criterion, trace, repeat, result, verdict line, run line]``); the client merges them through the
one-process writer (:class:`~evalkit.judge.FinishedItems`), so ``OUT``, ``OUT.runs.jsonl``
and ``OUT.repeats.jsonl`` are byte-identical to a one-process run: sorted by criterion, trace, repeat,
whatever partition or worker judged an item.

Resuming. On a local cluster (``--workers``) each partition keeps a journal in ``.OUT.judge/`` beside
the output, named by its traces: a partition rerun after its worker died, or after the whole run was
killed (with the same partition size), resumes from it (the journal's verdicts and run records are kept as they were, calls already
answered are not made again). The folder is removed when the run completes. On a remote scheduler the
workers may not see that folder, so a partition's journal lives only as long as its task; there the
reply cache (``--cache``, a path every worker sees) is what saves paid calls. The one-process journal
(``--journal``) and the budget (``--max-cost``: one total across workers) are not offered on a cluster.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from evalkit.contracts.trace import Trace
from evalkit.distributed.partitions import PartitionResult, partition_traces

if TYPE_CHECKING:
    from distributed import Client

    from evalkit.contracts import HumanLabel, JudgeSpec
    from evalkit.judge import JudgeRunSummary, PriceTable, Provider, RetryPolicy
    from evalkit.traces import LineRange

WORK = "judge"
"""The run's work folder beside the output: ``.OUT.judge/`` (partition journals, merged rows)."""


@dataclass(frozen=True)
class JudgeJob:
    """What every partition is judged with (sent to each worker once).

    Attributes:
        specs: the judge specs, in the order the one-process run builds prompts.
        provider: builds the judge in the worker (a picklable callable: ``functools.partial(make_provider,
            pin, ...)``); SDK clients do not travel between processes.
        labels: human labels, for the few-shot examples' leakage check.
        examples: the few-shot example traces by id (only those: not the whole file).
        repeats: judgements per item.
        concurrency: calls in flight per worker.
        cache: the reply cache file, shared by the workers (one machine), or None.
        journals: the folder of per-partition journals every worker sees, or None (a remote cluster).
        prices: the price table (None: the built-in one).
        retry: the retry policy (None: the default).
        counter: builds the token counter in the worker (a picklable callable), or None for the estimate.
        context: the model's context window in tokens, when known.
        retry_errors: ask again the items whose deterministic error an earlier run kept.
    """

    specs: tuple[JudgeSpec, ...]
    provider: Callable[[], Provider]
    labels: tuple[HumanLabel, ...] | None = None
    examples: Mapping[str, Trace] = field(default_factory=dict)
    repeats: int = 1
    concurrency: int = 16
    cache: str | None = None
    journals: str | None = None
    prices: PriceTable | None = None
    retry: RetryPolicy | None = None
    counter: Callable[[], Any] | None = None
    context: int | None = None
    retry_errors: bool = False


COUNTS = ("items", "calls", "cache_hits", "resumed", "without_call", "errors", "not_run", "input_tokens",
          "output_tokens", "cost_usd", "unknown_cost_calls", "kept_errors", "refused")
"""The counts of a :class:`~evalkit.judge.JudgeRunSummary` that partitions add up."""


def _row_line(row: tuple) -> bytes:
    try:
        return orjson.dumps(row) + b"\n"
    except TypeError:  # a lone surrogate in a line: json escapes it, and reads it back the same
        return json.dumps(row).encode() + b"\n"


def _journal_name(traces: list[Trace]) -> str:
    """A partition's journal: named by its traces, so a rerun of the same partition finds it."""
    digest = hashlib.sha256("\0".join(t.id for t in traces).encode("utf-8", "surrogatepass")).hexdigest()
    return f"part-{digest[:32]}.journal.jsonl"


async def _judge(prompts: list[Any], provider: Provider, job: JudgeJob, journal: Path,
                 verify: Any) -> tuple[bytes, dict[str, Any]]:
    """Run the judge runner's loop over a partition's prompts; its finished items as row lines."""
    from evalkit.judge import JudgeCache, PriceTable, RetryPolicy, RunLoop, TokenCounter, journal_lock

    cache = JudgeCache(job.cache) if job.cache else None
    try:
        with journal_lock(journal):
            run = RunLoop(provider, journal.with_suffix(".out"), journal, job.repeats, job.concurrency, cache,
                          None, job.prices or PriceTable.load(), verify, job.retry or RetryPolicy(),
                          asyncio.sleep, False, counter=job.counter() if job.counter else TokenCounter(),
                          context=job.context, retry_errors=job.retry_errors)
            try:
                run.open_journal()
                await run.run(prompts)
                run.flush(force=True)
                await run.drain()
                text = b"".join(_row_line(row) for row in run.items.rows())
            finally:
                run.close()
    finally:
        await provider.aclose()
        if cache is not None:
            cache.close()
    if run.fatal is not None:
        raise run.fatal
    s = run.summary
    counts = {name: getattr(s, name) for name in COUNTS}
    counts["retries"] = dict(s.retries)
    counts["causes"] = {cause: [n, list(s.tally.examples[cause])] for cause, n in s.tally.counts.items()}
    counts["stopped"] = s.stopped
    return text, counts


def judge_partition(traces: list[Trace], job: JudgeJob) -> PartitionResult:
    """Judge a partition's traces on every spec.

    Args:
        traces: consecutive traces of the input.
        job: the specs, the judge, the run's options.

    Returns:
        The finished items as row lines (``[c, t, r, result, verdict line or null, run line]``, sorted)
        and the partition's counts (``traces`` and those of :data:`COUNTS`, ``retries`` by kind).
    """
    from evalkit.judge import build_prompts, run_coroutine, verifier

    prompts = [prompt for spec in job.specs for prompt in
               build_prompts(spec, traces, labels=job.labels, traces_by_id=job.examples)]
    verify = verifier({**job.examples, **{t.id: t for t in traces}})
    scratch = None
    if job.journals is not None:
        journal = Path(job.journals) / _journal_name(traces)
    else:
        scratch = tempfile.mkdtemp(prefix="evalkit-judge-")
        journal = Path(scratch) / "partition.journal.jsonl"
    try:
        text, counts = run_coroutine(_judge(prompts, job.provider(), job, journal, verify))
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    counts["traces"] = len(traces)
    return PartitionResult(text.decode(), counts)


def judge_work(work: list[Trace] | LineRange, job: JudgeJob) -> PartitionResult:
    """:func:`judge_partition` of traces sent by the client, or of lines the worker reads itself."""
    return judge_partition(partition_traces(work), job)


def work_folder(out: str | os.PathLike[str]) -> Path:
    """``.OUT.judge/`` beside the verdicts file: the partition journals and merged rows of a cluster run."""
    out = Path(out)
    return out.parent / f".{out.name}.{WORK}"


def judge_on_cluster(client: Client | None, job: JudgeJob, partitions: Iterable[Any], out: str | Path, *,
                     on_done: Callable[[int], None] | None = None,
                     workers_write: bool = False) -> tuple[JudgeRunSummary, int]:
    """Judge every partition on the cluster and write the one-process run's output files.

    Args:
        client: the Dask client; None runs the partitions in this process (the same bytes).
        job: what to judge with; its ``journals`` folder, when set, is :func:`work_folder` of ``out``.
        partitions: the partitions (lists of traces or runs of lines), consumed lazily.
        out: the verdicts file; ``OUT.runs.jsonl`` (and with repeats ``OUT.repeats.jsonl``) beside it.
        on_done: called with the traces of each finished partition (a progress bar).
        workers_write: the workers see ``out``'s folder (a local cluster) and write their parts there.

    Returns:
        The run's summary (counts added over the partitions) and the number of traces judged.

    Raises:
        Whatever a partition raised after its retries (``FatalError`` when the provider refused);
        nothing is written then, and the partition journals are kept for the rerun.
    """
    from evalkit.distributed.partitions import run_partitions, run_partitions_here
    from evalkit.judge import FinishedItems, JudgeRunSummary, sidecar_paths

    out = Path(out)
    runs, journal, repeats = sidecar_paths(out)
    work = work_folder(out)
    work.mkdir(parents=True, exist_ok=True)
    rows = work / "rows.jsonl"
    if client is None:
        counts = run_partitions_here(judge_work, partitions, rows, on_done=on_done, shared={"job": job})
    else:
        counts = run_partitions(client, judge_work, partitions, rows, on_done=on_done,
                                workers_write=workers_write, shared={"job": job})
    summary = JudgeRunSummary(verdicts_path=out, runs_path=runs, journal_path=journal)
    traces = 0
    for part in counts:
        traces += part["traces"]
        for name in COUNTS:
            setattr(summary, name, getattr(summary, name) + part[name])
        for kind, n in part["retries"].items():
            summary.retries[kind] = summary.retries.get(kind, 0) + n
        for cause, (n, example) in part.get("causes", {}).items():
            summary.tally.counts[cause] = summary.tally.counts.get(cause, 0) + n
            summary.tally.examples.setdefault(cause, tuple(example))  # type: ignore[arg-type]
        summary.stopped = summary.stopped or part.get("stopped")
    items = FinishedItems()
    try:
        with open(rows, "rb") as fh:
            for line in fh:
                try:
                    row = orjson.loads(line)
                except orjson.JSONDecodeError:  # a lone surrogate, written by json
                    row = json.loads(line)
                items.add(*row)
        written, stats = items.write(out, runs, job.repeats, repeats if job.repeats > 1 else None)
    finally:
        items.close()
    summary.verdicts = written
    summary.repeat_stats = stats if job.repeats > 1 else None
    shutil.rmtree(work, ignore_errors=True)  # done: the partition journals are not needed any more
    return summary, traces


__all__ = ["JudgeJob", "judge_on_cluster", "judge_partition", "judge_work", "work_folder"]
