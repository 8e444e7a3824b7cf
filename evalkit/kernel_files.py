"""Where the notebooks' kernels keep their connection files: a folder of the run's own, removed after it.

A kernel's connection file holds the HMAC key that signs every message to the kernel: whoever reads it can
run code in the kernel. jupyter_client writes it as a ``mkstemp`` file in the temporary folder and removes
it when the kernel stops; a run that is killed leaves it behind. Each run gets ``TMPDIR/evalkit-kernels-PID``, removed when
the run ends, and a run removes the folders of runs whose process is gone (a run killed with ``kill -9``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

from evalkit.io.atomic import process_alive

PREFIX = "evalkit-kernels-"
RUNTIME_ENV = "JUPYTER_RUNTIME_DIR"


def remove_left_behind(parent: Path) -> list[Path]:
    """Remove the kernel folders of runs whose process is gone; returns them."""
    removed = []
    for folder in parent.glob(f"{PREFIX}*"):
        pid = folder.name.removeprefix(PREFIX)
        if pid.isdigit() and folder.is_dir() and not folder.is_symlink() and not process_alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


@contextlib.contextmanager
def kernel_runtime_dir() -> Iterator[Path]:
    """Kernels started within keep their connection files in this run's own folder (see the module doc)."""
    parent = Path(tempfile.gettempdir())
    remove_left_behind(parent)
    folder = parent / f"{PREFIX}{os.getpid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    before = os.environ.get(RUNTIME_ENV)
    os.environ[RUNTIME_ENV] = str(folder)
    try:
        yield folder
    finally:
        if before is None:
            os.environ.pop(RUNTIME_ENV, None)
        else:
            os.environ[RUNTIME_ENV] = before
        shutil.rmtree(folder, ignore_errors=True)


def kernel_connection_file() -> Path:
    """A new connection file's path in the run's kernel folder (the temporary folder outside a run)."""
    folder = os.environ.get(RUNTIME_ENV)
    parent = Path(folder) if folder and Path(folder).name.startswith(PREFIX) else Path(tempfile.gettempdir())
    return parent / f"kernel-{uuid.uuid4().hex}.json"
