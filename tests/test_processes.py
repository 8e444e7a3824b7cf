"""One way to run another program: own process group, killed whole on a timeout, a tail of what it printed."""

from __future__ import annotations

import os
import sys
import time

import pytest

from evalkit.io.atomic import process_alive
from evalkit.processes import OUTPUT_TAIL_CHARS, output_tail, run_in_own_group

SPAWNS_A_CHILD = ("import subprocess, sys, time; "
                  "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
                  "print(child.pid, flush=True); sys.stderr.write('started\\n'); time.sleep(60)")


@pytest.mark.slow
def test_a_timeout_kills_the_program_and_what_it_started(tmp_path):
    done = run_in_own_group([sys.executable, "-c", SPAWNS_A_CHILD], cwd=tmp_path, timeout=2)
    assert done.timed_out and done.returncode is None and done.stderr == b"started\n"
    child = int(done.stdout.split()[0])
    for _ in range(50):  # the kernel reaps the orphan shortly after its group is killed
        if not process_alive(child):
            break
        time.sleep(0.1)
    assert not process_alive(child)


def test_a_program_that_ends_gives_its_code_and_output(tmp_path):
    done = run_in_own_group([sys.executable, "-c", "import sys; print('out'); sys.exit(3)"], cwd=tmp_path, timeout=30)
    assert (done.returncode, done.stdout, done.timed_out) == (3, b"out\n", False)


def test_a_program_that_cannot_start_is_an_os_error(tmp_path):
    with pytest.raises(OSError):
        run_in_own_group([str(tmp_path / "missing")], cwd=tmp_path, timeout=5)


def test_the_tail_counts_characters_not_bytes():
    text = "é" * (OUTPUT_TAIL_CHARS + 10)  # two bytes each
    assert output_tail(text.encode()) == "é" * OUTPUT_TAIL_CHARS
    assert output_tail(b"") is None and output_tail(None) is None
    assert output_tail(b"\xff ok") == "\ufffd ok"


def test_this_process_is_alive():
    assert process_alive(os.getpid())
