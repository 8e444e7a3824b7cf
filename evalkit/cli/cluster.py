"""The cluster options every per-trace command shares: ``--workers``, ``--scheduler``, ``--partition-size``.

Parsing only: what a cluster run does lives in :mod:`evalkit.distributed`.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from evalkit.distributed import DEFAULT_PARTITION_TRACES

if TYPE_CHECKING:
    from distributed import Client


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--workers N | --scheduler ADDRESS`` and ``--partition-size N`` to a per-trace command."""
    cluster = parser.add_argument_group("cluster", "spread the traces over Dask workers (pip install "
                                                   "'evalkit[cluster]'); the output is byte-identical to "
                                                   "one process")
    where = cluster.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N", help="start a local cluster of N worker processes")
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="use a running Dask scheduler (tcp://host:8786); its workers need evalkit "
                            "installed and the trace files are read here, not by the workers")
    cluster.add_argument("--partition-size", type=int, default=DEFAULT_PARTITION_TRACES, metavar="N",
                         help=f"traces per unit of work (default {DEFAULT_PARTITION_TRACES})")


def check_partition_size(args: argparse.Namespace) -> None:
    """Refuse a partition size below one, before any work."""
    from evalkit.distributed import check_partition_size as check

    check(args.partition_size)


def on_cluster(args: argparse.Namespace) -> bool:
    """True when the command was asked to run on Dask."""
    return args.workers is not None or args.scheduler is not None


def announce(line: str) -> None:
    """What the cluster says about itself goes to stderr (stdout is the command's result)."""
    print(line, file=sys.stderr)


@contextlib.contextmanager
def cluster_client(args: argparse.Namespace) -> Iterator[Client]:
    """The run's Dask client; says on stderr how long a local cluster took to start."""
    from evalkit.distributed import dask_client

    with dask_client(workers=args.workers, scheduler=args.scheduler, announce=announce) as client:
        yield client
