"""Running another program as evalkit does everywhere: in its own process group, killed whole on a timeout.

An agent, a remedy command or a bound tool may start children of its own; on a timeout (or when evalkit
itself is interrupted) the whole group is killed, so nothing it started outlives the run. What it printed on
standard error is kept as a tail of :data:`OUTPUT_TAIL_CHARS` characters, the one unit every record uses.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

OUTPUT_TAIL_CHARS = 2000
"""How much of a program's standard error a record keeps: the last this many characters (decoded as UTF-8,
undecodable bytes replaced), enough for a traceback's end, small enough for a JSONL record."""


@dataclass(frozen=True)
class Finished:
    """How a program ended: its exit code (None when killed on the timeout) and what it printed."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool = False


def kill_group(proc: subprocess.Popen) -> None:
    """Kill ``proc`` and everything in its process group (it may have exited already)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def run_in_own_group(argv: Sequence[str], *, cwd: str | Path, timeout: float, env: Mapping[str, str] | None = None,
                     capture_stdout: bool = True) -> Finished:
    """Run ``argv`` (no shell) in a new process group with empty standard input, to its end or the timeout.

    Args:
        argv: the program and its arguments, each one literal argument.
        cwd: the folder it runs in.
        timeout: seconds; past them the whole group is killed and ``timed_out`` is set.
        env: its environment (default: evalkit's own).
        capture_stdout: keep its standard output; otherwise it is thrown away.

    Raises:
        OSError: the program cannot be started (the caller says which and why).
    """
    proc = subprocess.Popen(list(argv), cwd=cwd, env=None if env is None else dict(env), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE if capture_stdout else subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        stdout, stderr = proc.communicate()
        return Finished(None, stdout or b"", stderr or b"", timed_out=True)
    except BaseException:  # interrupted: what it started must not outlive evalkit
        kill_group(proc)
        proc.communicate()
        raise
    return Finished(proc.returncode, stdout or b"", stderr or b"")


def output_tail(data: bytes | None, chars: int = OUTPUT_TAIL_CHARS) -> str | None:
    """The last ``chars`` characters of a program's output, or None when it printed nothing."""
    if not data:
        return None
    return data.decode("utf-8", errors="replace")[-chars:]
