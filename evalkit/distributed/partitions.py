"""Partitions as the unit of work: submit, write each result atomically, merge in partition order."""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.contracts.trace import Trace
from evalkit.io import atomic_write_text, atomic_writer

if TYPE_CHECKING:
    from distributed import Client

    from evalkit.traces import LineRange

DEFAULT_PARTITION_TRACES = 25
"""Traces per partition: many partitions per worker, so a slow one does not hold the others up, and
few enough that scheduling (a few milliseconds a task) stays small beside the work."""

PARTITION_OBSERVATIONS = 20_000
"""A partition is also cut at this many observations, so long traces make small partitions."""

RETRIES = 2
"""How often a partition whose task raised is tried again (a dead worker's partition is rescheduled
by Dask itself, up to its ``distributed.scheduler.allowed-failures``, 3 by default)."""

IN_FLIGHT_PER_WORKER = 4
"""Partitions submitted ahead per worker: enough to keep workers busy, while the client holds only
these in memory whatever the number of traces."""


@dataclass(frozen=True)
class PartitionResult:
    """What a task returns: the text of its output lines, and a summary the caller merges."""

    text: str
    summary: Any = None


def trace_partitions(traces: Iterable[Trace], size: int = DEFAULT_PARTITION_TRACES) -> Iterator[list[Trace]]:
    """Consecutive runs of up to ``size`` traces (and about ``PARTITION_OBSERVATIONS`` observations)."""
    batch: list[Trace] = []
    observations = 0
    for trace in traces:
        batch.append(trace)
        observations += len(trace.observations)
        if len(batch) >= size or observations >= PARTITION_OBSERVATIONS:
            yield batch
            batch, observations = [], 0
    if batch:
        yield batch


def source_traces(sources: Iterable[str], format: str = "auto") -> Iterator[Trace]:
    """The traces of trace files (any format, see ``iter_traces``) and trace dataset folders, in order."""
    from evalkit.traces import is_trace_dataset, iter_dataset_traces, iter_traces

    for src in sources:
        if is_trace_dataset(src):  # a partitioned Parquet dataset: read one file at a time
            yield from iter_dataset_traces(src)
        else:
            yield from iter_traces(src, format)


def source_partitions(sources: Iterable[str], format: str = "auto", size: int = DEFAULT_PARTITION_TRACES, *,
                      workers_read_files: bool = False) -> Iterator[list[Trace] | LineRange]:
    """The partitions of :func:`source_traces`, in order: lists of traces read here, or, when the
    workers see the same files, runs of lines of native JSONL files that each worker reads and
    validates itself (so this process parses none of those traces)."""
    from evalkit.traces import is_native_jsonl, line_ranges

    for src in sources:
        if workers_read_files and is_native_jsonl(src, format):
            yield from line_ranges(src, size)
        else:
            yield from trace_partitions(source_traces([src], format), size)


def _part(work: Path, index: int) -> Path:
    return work / f"part-{index:06d}.txt"


def run_partitions(client: Client, task: Callable[[Any], PartitionResult], partitions: Iterable[Any],
                   out: str | os.PathLike[str], *, on_done: Callable[[int], None] | None = None) -> list[Any]:
    """Run ``task`` on every partition on the cluster and write their texts to ``out`` in order.

    Each result is written to ``.OUT.PID.parts/part-N.txt`` (atomically) as it arrives; when all are
    in, the parts are concatenated in partition order into ``out`` (atomically) and removed. The
    output is therefore the same bytes as running ``task`` on each partition in turn in one process.

    Args:
        client: the Dask client (see :func:`~evalkit.distributed.dask_client`).
        task: a function of one partition, importable by the workers.
        partitions: the partitions, consumed lazily (only a few per worker are held at once).
        out: the output file.
        on_done: called with the number of items of each finished partition (a progress bar).

    Returns:
        The summaries of the partitions, in partition order.

    Raises:
        Whatever a task raised after its retries; ``distributed.KilledWorker`` when a partition
        killed more workers than the scheduler allows.
    """
    from distributed import as_completed

    out = Path(out)
    work = out.parent / f".{out.name}.{os.getpid()}.parts"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    workers = max(1, len(client.scheduler_info(n_workers=-1).get("workers", {})))
    pending = enumerate(partitions)
    summaries: dict[int, Any] = {}
    submitted: dict[Any, tuple[int, int]] = {}  # future key -> (partition index, items in it)

    def submit(batch: Iterable[tuple[int, Any]]) -> list[Any]:
        futures = []
        for index, partition in batch:
            future = client.submit(task, partition, retries=RETRIES, pure=False)
            submitted[future.key] = (index, len(partition) if hasattr(partition, "__len__") else 1)
            futures.append(future)
        return futures

    try:
        running = as_completed(submit(itertools.islice(pending, workers * IN_FLIGHT_PER_WORKER)))
        for future in running:
            index, items = submitted.pop(future.key)
            result: PartitionResult = future.result()
            future.release()
            atomic_write_text(_part(work, index), result.text)
            summaries[index] = result.summary
            if on_done is not None:
                on_done(items)
            for more in submit(itertools.islice(pending, 1)):
                running.add(more)
        with atomic_writer(out, "w") as fh:
            for index in range(len(summaries)):
                with open(_part(work, index), encoding="utf-8") as part:
                    shutil.copyfileobj(part, fh)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return [summaries[i] for i in range(len(summaries))]
