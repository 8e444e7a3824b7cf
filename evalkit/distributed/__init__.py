"""Per-trace work spread over a Dask cluster, with output byte-identical to one process.

Traces are cut into partitions (runs of consecutive traces); each partition is one Dask task. A
result is written to its own file atomically as it arrives, and the files are merged in partition
order, so the output does not depend on which worker finished first. A partition whose worker dies
is run again on another worker (the scheduler's ``allowed-failures``); one whose task raises is
retried ``retries`` times. ``--workers N`` starts a local cluster of N processes; ``--scheduler
ADDRESS`` uses a running one, whose workers must have evalkit installed.
"""

from evalkit.distributed.cluster import dask_client
from evalkit.distributed.flow import FlowOptions, FlowPartition, build_flow_partition, build_flow_work
from evalkit.distributed.partitions import (
    DEFAULT_PARTITION_TRACES,
    PartitionResult,
    run_partitions,
    source_partitions,
    source_traces,
    trace_partitions,
)

__all__ = [
    "DEFAULT_PARTITION_TRACES",
    "FlowOptions",
    "FlowPartition",
    "PartitionResult",
    "build_flow_partition",
    "build_flow_work",
    "dask_client",
    "run_partitions",
    "source_partitions",
    "source_traces",
    "trace_partitions",
]
