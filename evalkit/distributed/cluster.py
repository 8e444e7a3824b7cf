"""The Dask client of a run: a local cluster of worker processes, or a running scheduler."""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from evalkit.distributed.lifeline import COMMAND
from evalkit.errors import InputError

if TYPE_CHECKING:
    from distributed import Client

LOOPBACK = "127.0.0.1"

LIFELINE = "evalkit.distributed.lifeline"
"""The preload each local worker runs: it exits when the command that started it is gone, however it
ended (see the module)."""

SCHEDULER_TIMEOUT = "20s"
"""How long to try reaching a scheduler before saying none answers (Dask retries while it waits)."""


QUIET_LOCAL_CLUSTER = {
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.memory.monitor-interval": "500ms",
    "distributed.worker.profile.enabled": False,
}
"""Dask's housekeeping slowed for a local cluster, whose processes share the cores with the work: by
default every scheduler, nanny and worker wakes every 20 ms (event-loop tick), the nannies read memory
every 100 ms and each worker samples its own stack every 10 ms for the dashboard's profile. Idle, a
two-worker cluster then used about 0.13 CPU seconds a second; with these, about 0.02 (measured here)."""

WORKER_START = "fork" if sys.platform == "linux" else "spawn"
"""How a local cluster starts its worker processes. Dask spawns them by default: each is a fresh
interpreter importing Dask and evalkit again (about 1.5 CPU seconds, on cores the work shares) before
its first partition. Forked, a worker starts with everything this process has imported, in a tenth
of a second (measured: 600 long traces on two workers, 9.4 CPU seconds in all against 14.3, 0.5 s
to start against 1.6 s). Only on Linux: forking is unsafe on macOS. Dask forks from a thread of
its own while its event loop runs in another; the child keeps only the forking thread and starts a
worker of its own, as Dask's ``multiprocessing-method: fork`` does. A method set in Dask's own
configuration other than its default is kept (``DASK_DISTRIBUTED__WORKER__MULTIPROCESSING_METHOD=forkserver``
where forking a threaded process is not wanted)."""


LOADED_BEFORE_FORK = ("evalkit.contracts", "evalkit.traces", "evalkit.flow", "evalkit.checks", "evalkit.distributed")
"""The facades per-trace tasks read from, every name of them loaded before forking the workers: these
facades load their names on first use (so a command's start stays light), and a forked worker that
loads them itself, after the fork, pays for it on every worker (about 2 CPU seconds each, measured on
flow graphs)."""


def _load_before_fork() -> None:
    for package in LOADED_BEFORE_FORK:
        facade = importlib.import_module(package)
        for name in facade.__all__:
            getattr(facade, name)


def _distributed():  # imported late: Dask is an optional extra, and slow to import
    try:
        import distributed
    except ImportError:
        raise InputError("--workers and --scheduler need Dask: pip install 'evalkit[cluster]'") from None
    return distributed


def check_partition_size(size: int) -> None:
    """Refuse a partition size below one, before any work."""
    if size < 1:
        raise InputError(f"--partition-size must be at least 1, got {size}", path="--partition-size")


@contextlib.contextmanager
def dask_client(*, workers: int | None = None, scheduler: str | None = None,
                announce: Callable[[str], None] | None = None) -> Iterator[Client]:
    """A Dask client for the length of the block; a local cluster is shut down after it.

    Args:
        workers: start a local cluster of this many worker processes, one thread each (the
            per-trace work is pure Python: threads would share one core).
        scheduler: the address of a running scheduler (``tcp://host:8786``) instead.
        announce: told, in a line, how long a local cluster took to start.

    Raises:
        InputError: both or neither given, fewer than one worker, Dask not installed, or no
            scheduler at the address.
    """
    started = time.perf_counter()  # importing Dask is part of the start
    if (workers is None) == (scheduler is None):
        raise InputError("give either --workers N (a local cluster) or --scheduler ADDRESS, not both")
    distributed = _distributed()
    import dask

    if scheduler is not None:
        try:
            client = distributed.Client(scheduler, timeout=SCHEDULER_TIMEOUT)
        except OSError as exc:
            raise InputError(f"no Dask scheduler answers at {scheduler}: {exc}", path="--scheduler") from None
        with client:
            yield client
        return
    if workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}", path="--workers")
    # Loopback only, and the dashboard on a free port: nothing listens beyond this machine, and two
    # runs at once do not fight over Dask's default ports.
    start = dask.config.get("distributed.worker.multiprocessing-method")
    if start == "spawn":  # Dask's default; a method the user configured (forkserver, say) is kept
        start = WORKER_START
    if start == "fork":
        _load_before_fork()
    preload = [*dask.config.get("distributed.worker.preload", []), LIFELINE]
    # The workers' spill and lock files in a folder of this run's own, removed with it: Dask's default
    # (dask-scratch-space/ in the temporary folder) outlives every run.
    scratch = tempfile.mkdtemp(prefix="evalkit-dask-")
    local = dask.config.set({**QUIET_LOCAL_CLUSTER, "distributed.worker.multiprocessing-method": start,
                             "distributed.worker.preload": preload, COMMAND: os.getpid(),
                             "temporary-directory": scratch})
    try:
        with local, distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                             host=LOOPBACK, dashboard_address=f"{LOOPBACK}:0",
                                             local_directory=scratch, silence_logs=logging.ERROR) as cluster, \
                distributed.Client(cluster) as client:
            if announce is not None:
                announce(f"local Dask cluster of {workers} worker process{'es' if workers != 1 else ''} "
                         f"started in {time.perf_counter() - started:.1f}s")
            yield client
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
