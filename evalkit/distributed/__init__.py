"""Per-trace work (flow graphs, code checks, judge calls) spread over a Dask cluster, byte-identical to one process.

Traces are cut into partitions (runs of consecutive traces); each partition is one Dask task. A
result is written to its own file atomically as it arrives, and the files are merged in partition
order, so the output does not depend on which worker finished first. A partition whose worker dies
is run again on another worker (the scheduler's ``allowed-failures``); one whose task raises is
retried ``retries`` times. ``--workers N`` starts a local cluster of N processes; ``--scheduler
ADDRESS`` uses a running one, whose workers must have evalkit installed.

Any per-trace work runs the same way: write a task ``task(partition, **shared) -> PartitionResult``
(``partition_traces`` gives its traces), then call :func:`run_partitions` with a client (or
:func:`run_partitions_here` for the one-process run, the same bytes); ``shared`` values (a judge,
a verdict table) reach each worker once.

Every name loads on first use (:func:`evalkit.facade.load_on_first_use`): the command line reads
:mod:`evalkit.distributed.defaults` for its options, and must not pay for Dask and pydantic to do so.
``from evalkit.distributed import run_partitions`` works as for any facade.
"""

from typing import TYPE_CHECKING

from evalkit.facade import load_on_first_use

if TYPE_CHECKING:
    from evalkit.distributed.checks import CheckOptions, CheckTally, check_partition, check_work, scorecard_of
    from evalkit.distributed.cluster import check_partition_size, dask_client
    from evalkit.distributed.defaults import DEFAULT_PARTITION_TRACES
    from evalkit.distributed.flow import FlowOptions, FlowPartition, build_flow_partition, build_flow_work
    from evalkit.distributed.judge import JudgeJob, judge_on_cluster, judge_partition, judge_work
    from evalkit.distributed.judge import work_folder as judge_work_folder
    from evalkit.distributed.judge_run import (
        judge_file_on_cluster,
        refuse_cluster_journals,
        refuse_on_cluster,
    )
    from evalkit.distributed.partitions import (
        PartitionResult,
        Task,
        partition_traces,
        run_partitions,
        run_partitions_here,
        source_partitions,
        source_traces,
        trace_partitions,
    )

__all__ = [
    "DEFAULT_PARTITION_TRACES",
    "CheckOptions",
    "CheckTally",
    "FlowOptions",
    "FlowPartition",
    "JudgeJob",
    "PartitionResult",
    "Task",
    "build_flow_partition",
    "build_flow_work",
    "check_partition",
    "check_partition_size",
    "check_work",
    "dask_client",
    "judge_file_on_cluster",
    "judge_on_cluster",
    "judge_partition",
    "judge_work",
    "judge_work_folder",
    "partition_traces",
    "refuse_cluster_journals",
    "refuse_on_cluster",
    "run_partitions",
    "run_partitions_here",
    "source_partitions",
    "source_traces",
    "scorecard_of",
    "trace_partitions",
]

__getattr__, __dir__ = load_on_first_use(__name__, __all__)
