"""The Dask client of a run: a local cluster of worker processes, or a running scheduler."""

from __future__ import annotations

import contextlib
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

def worker_start() -> str:
    """How a local cluster starts its worker processes: ``forkserver`` on Linux, else ``spawn``.

    Dask spawns them by default: each is a fresh interpreter importing Dask and evalkit again (about 1.5
    CPU seconds, on cores the work shares) before its first partition. With a fork server, one process
    imports Dask and evalkit's facades (:data:`WARM`) once and forks each worker from itself, so a worker
    starts with all of it. Not a plain fork of this process: it runs threads (Dask's event loop, its
    logging), and a child forked while one of them held a lock waits on it for ever (seen: a worker stuck
    flushing a log line, the cluster never up, a test run hung). The fork server is single-threaded, and
    it exits when this process does. It listens on a socket in the temporary folder, whose path may hold
    at most 107 bytes: under a longer ``TMPDIR`` the workers are spawned.
    """
    if sys.platform != "linux":
        return "spawn"
    if len(os.fsencode(tempfile.gettempdir())) + _FORK_SERVER_SOCKET > _SOCKET_PATH_MAX:
        return "spawn"
    return "forkserver"


_FORK_SERVER_SOCKET = len("/pymp-xxxxxxxx/listener-xxxxxxxx")
"""What multiprocessing adds to the temporary folder's path for the fork server's socket."""

_SOCKET_PATH_MAX = 107
"""The longest path a Unix socket may have on Linux (108 bytes with the closing NUL)."""

WARM = "evalkit.distributed.warm"
"""The module the fork server imports before forking workers (it loads the facades' names)."""


def _warm_fork_server() -> None:
    """Add :data:`WARM` to the modules the fork server imports, after those Dask asks for (distributed and
    its packages). Dask chooses its list once per process; a fork server already running is not changed."""
    from multiprocessing import forkserver

    from distributed.utils import get_mp_context

    context = get_mp_context()  # Dask's own preload list, set once per process
    preload = list(getattr(forkserver._forkserver, "_preload_modules", None) or [])
    if WARM not in preload:
        context.set_forkserver_preload([*preload, WARM])


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
    if start == "spawn":  # Dask's default; a method the user configured is kept
        start = worker_start()
    if start == "fork":
        from evalkit.distributed.warm import load_facades

        load_facades()
    preload = [*dask.config.get("distributed.worker.preload", []), LIFELINE]
    # The workers' spill and lock files in a folder of this run's own, removed with it: Dask's default
    # (dask-scratch-space/ in the temporary folder) outlives every run.
    scratch = tempfile.mkdtemp(prefix="evalkit-dask-")
    try:
        # dask.config.set applies on creation and undoes on exit: one block holds the whole cluster's life.
        with dask.config.set({**QUIET_LOCAL_CLUSTER, "distributed.worker.multiprocessing-method": start,
                              "distributed.worker.preload": preload, COMMAND: os.getpid(),
                              "temporary-directory": scratch}):
            if start == "forkserver":
                _warm_fork_server()
            with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                          host=LOOPBACK, dashboard_address=f"{LOOPBACK}:0",
                                          local_directory=scratch, silence_logs=logging.ERROR,
                                          # the fork server's environment is the one it started with
                                          # (a run earlier in this process); each worker takes today's
                                          env=dict(os.environ)) as cluster, \
                    distributed.Client(cluster) as client:
                if announce is not None:
                    announce(f"local Dask cluster of {workers} worker process{'es' if workers != 1 else ''} "
                             f"started in {time.perf_counter() - started:.1f}s")
                yield client
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
