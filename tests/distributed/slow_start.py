"""``python slow_start.py ARGS...``: the ``evalkit`` command with every process start delayed half a second,
as on a loaded machine, where a local cluster opens its second worker's pipe before it forks the first."""

import multiprocessing.process
import sys
import time

from evalkit.cli import main

_start = multiprocessing.process.BaseProcess.start


def _slow_start(self: multiprocessing.process.BaseProcess) -> None:
    time.sleep(0.5)
    _start(self)


if __name__ == "__main__":  # a worker started by the fork server imports this file again, as __mp_main__
    multiprocessing.process.BaseProcess.start = _slow_start  # type: ignore[method-assign]
    sys.exit(main(sys.argv[1:]))
