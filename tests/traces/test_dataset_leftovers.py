
"""A partitioned import killed with SIGKILL leaves its staging folder; the next import removes it (and
says so), never the folder of an import still running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.traces import iter_dataset_traces
from tests.processes import kill_once

pytestmark = pytest.mark.slow


def _source(path: Path, n_traces: int) -> None:
    with path.open("w") as fh:
        for t in range(n_traces):
            obs = [{"id": f"o{t}-{i}", "type": "SPAN", "name": f"step {i}",
                    "input": {"text": "lorem ipsum " * 20}, "output": {"n": i}} for i in range(10)]
            fh.write(json.dumps({"id": f"tr-{t:06d}", "metadata": {"intent": f"i{t % 3}"},
                                 "observations": obs}) + "\n")


def _import(src: Path, out: Path, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "evalkit.cli", "traces", "import", str(src),
                             "--out", str(out), "--partition-by", "intent"], **kwargs)


def test_a_killed_partitioned_import_is_cleaned_up_by_the_next_one(tmp_path: Path) -> None:
    big, small = tmp_path / "big.jsonl", tmp_path / "small.jsonl"
    _source(big, 30_000)
    _source(small, 4)
    out = tmp_path / "ds"
    proc = _import(big, out, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stage = tmp_path / f".ds.{proc.pid}.importing"
    kill_once(proc, lambda: any(stage.rglob("*.parquet")), "batch")  # once it has written a batch
    assert stage.is_dir() and not out.exists()
    running = tmp_path / f".ds.{os.getpid()}.importing"  # this test process is alive: an import in progress
    running.mkdir()

    again = _import(small, out, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    assert f"removed {stage}: left by an earlier run that was killed (process {proc.pid} is gone)" in err
    assert not stage.exists() and running.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == [running.name, "big.jsonl", "ds", "small.jsonl"]
    assert sorted(t.id for t in iter_dataset_traces(out)) == [f"tr-{t:06d}" for t in range(4)]
