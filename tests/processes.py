"""Killing a command mid-run, for the tests that check what a killed run leaves behind."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable


def kill_once(proc: subprocess.Popen, written: Callable[[], bool], what: str, *, sig: int = signal.SIGKILL,
              timeout: float = 120) -> None:
    """Send ``sig`` to ``proc`` as soon as ``written()`` holds, and wait for it to end.

    Fails the test if the command ends first or ``what`` has not been written within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while not written():
        assert proc.poll() is None, f"the command ended before it could be killed ({what} never seen)"
        assert time.monotonic() < deadline, f"no {what} was written"
        time.sleep(0.01)
    os.kill(proc.pid, sig)
    proc.wait(timeout=30)
