"""A stage a killed run left unfinished: found by its marker, removed by the next run into the same folder.

``skill-eval run`` writes ``.running-PID`` into the stage folder before its first arm and removes it just
before it seals the stage (``stage.json``). A folder holding such a marker of a process that is gone, and
no ``stage.json``, is a run that was killed: its evidence was never sealed and nothing can resume it, so the
next run removes it and says so, instead of refusing the folder as not empty. A sealed stage, a folder
without the marker, or one whose run is still going is never touched.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from evalkit.io.atomic import process_alive

MARKER_PREFIX = ".running-"


def mark_running(out: Path) -> Path:
    """The marker of this run in its stage folder (created)."""
    marker = out / f"{MARKER_PREFIX}{os.getpid()}"
    marker.touch()
    return marker


def remove_killed_stage(out: Path, stage_file: str, say: Callable[[str], None]) -> bool:
    """Remove ``out`` when it is a stage a killed run left unsealed (see the module doc); True when removed."""
    if not out.is_dir() or out.is_symlink() or (out / stage_file).exists():
        return False
    pids = [m.name.removeprefix(MARKER_PREFIX) for m in out.glob(f"{MARKER_PREFIX}*")]
    if not pids or not all(p.isdigit() for p in pids) or any(process_alive(int(p)) for p in pids):
        return False
    shutil.rmtree(out)
    say(f"removed {out}: a stage left unsealed by a run that was killed (process {', '.join(pids)} is gone; "
        "no stage.json)")
    return True
