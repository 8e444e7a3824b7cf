"""Partition tasks that misbehave once, to show a run survives them (sent to workers by value)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from evalkit.distributed import FlowOptions, PartitionResult, Task, build_flow_partition


def kill_worker_once(partition, *, marker: str, victim: str, task: Task = build_flow_partition,
                     **kwargs) -> PartitionResult:
    """Kill the worker process running the partition that holds ``victim``, the first time only; else
    run ``task`` on it (flow graphs by default) and note which process did."""
    if any(t.id == victim for t in partition) and not os.path.exists(marker):
        Path(marker).write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    result = task(partition, **kwargs)
    with open(marker + ".ran", "a") as fh:  # which process ran each partition
        fh.write(f"{partition[0].id} {os.getpid()}\n")
    return result


def fail_once(partition, options: FlowOptions, marker: str) -> PartitionResult:
    """Raise on the first partition the first time: a transient error Dask's retries cover."""
    if not os.path.exists(marker):
        Path(marker).write_text("raised")
        raise RuntimeError("a transient failure")
    return build_flow_partition(partition, options)


def first_partition_last(partition, *, options: FlowOptions, first: str, others_done: str,
                         expected: int) -> PartitionResult:
    """Hold the partition that starts with trace ``first`` until every other partition is done (each
    adds a line to ``others_done``), so the results arrive in another order than the partitions'."""
    result = build_flow_partition(partition, options)
    if partition[0].id != first:
        with open(others_done, "a") as fh:
            fh.write(f"{partition[0].id}\n")
        return result
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if os.path.exists(others_done) and len(Path(others_done).read_text().splitlines()) >= expected:
            break
        time.sleep(0.05)
    return result
