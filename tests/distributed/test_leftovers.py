
"""A cluster run killed with SIGKILL leaves its parts folder; the next run removes it (and says so),
never the folder of a run still going."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.sample_subject.agent import simulate_traces
from evalkit.traces import write_jsonl
from tests.processes import kill_once

pytestmark = pytest.mark.slow


def test_a_killed_cluster_run_is_cleaned_up_by_the_next_run(tmp_path: Path, capsys) -> None:
    src = tmp_path / "traces.jsonl"
    write_jsonl(simulate_traces(seed=3, count=1500), src)
    out = tmp_path / "flows.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "evalkit.cli", "flow", "build", str(src),
                             "--out", str(out), "--workers", "2", "--partition-size", "5"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    parts = tmp_path / f".flows.jsonl.{proc.pid}.parts"
    kill_once(proc, lambda: any(parts.glob("part-*.txt")), "part")  # once the workers have written a part
    assert parts.is_dir() and not out.exists()
    running = tmp_path / f".flows.jsonl.{os.getpid()}.parts"  # this test process is alive: a run in progress
    running.mkdir()
    other = tmp_path / f".other.jsonl.{proc.pid}.parts"  # another output's: not this run's to remove
    other.mkdir()

    assert main(["flow", "build", str(src), "--out", str(out), "--partition-size", "500"]) == 0
    err = capsys.readouterr().err
    assert f"removed {parts}: left by an earlier run that was killed (process {proc.pid} is gone)" in err
    assert not parts.exists() and running.is_dir() and other.is_dir()
    assert sum(1 for _ in out.open()) == 1500
