"""A local cluster's workers end with the command that started them, however the command ends.

Dask gives each worker process the read end of a pipe whose write end only its parent should hold: when
the parent dies the read sees end-of-file and the worker exits. With forked workers that fails under
load: when the second worker's pipe is opened before the first worker is forked, each worker inherits
the write end of the other's pipe, neither ever sees end-of-file, and both outlive a command killed
with SIGKILL (seen: two workers still running 24 minutes later). So each worker of a local cluster
also watches its parent process itself (this module is the worker's Dask preload) and exits the moment
the parent is gone, whoever holds which pipe.
"""

from __future__ import annotations

import os
import threading
import time

COMMAND = "evalkit.cluster-command"
"""Dask configuration key: the process id of the command that started the local cluster."""

POLL_SECONDS = 0.2
"""How often a worker looks at its parent: a killed command's workers are gone within this."""

STARTED_BY_COMMAND = ("fork", "spawn")
"""Start methods with which the command itself is each worker's parent (forkserver starts them from a
server process of its own, which ends with the command)."""


def dask_setup(worker: object) -> None:
    """Dask's preload hook, run in each worker process as it starts: watch the parent from now on."""
    import dask

    command = dask.config.get(COMMAND, None)
    if command is None:  # not a local cluster of evalkit's
        return
    parent = os.getppid()
    method = dask.config.get("distributed.worker.multiprocessing-method", "spawn")
    if parent != command and method in STARTED_BY_COMMAND:
        os._exit(1)  # the command died before this worker got here
    threading.Thread(target=_watch, args=(parent,), name="evalkit-lifeline", daemon=True).start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:  # an orphan is handed to init (or a subreaper): the parent id changes
        time.sleep(POLL_SECONDS)
    os._exit(1)  # at once, as Dask's own watch does: a clean close needs the scheduler, which is gone
