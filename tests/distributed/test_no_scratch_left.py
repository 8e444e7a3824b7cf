"""A local Dask cluster keeps its workers' scratch files in a folder of the run's own and removes it: no
dask-scratch-space/ is left in the temporary folder (issue 35)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

TRACE = {"id": "tr-{i}", "observations": [{"id": "o1", "type": "TOOL", "name": "lookup", "output": "SKU-12345678"},
                                          {"id": "o2", "type": "GENERATION", "name": "respond",
                                           "input": "SKU-12345678"}]}


def test_a_workers_run_leaves_no_scratch_folder(tmp_path):
    src = tmp_path / "traces.jsonl"
    src.write_text("".join(json.dumps({**TRACE, "id": f"tr-{i}"}) + "\n" for i in range(20)))
    scratch_parent = tmp_path / "tmp"
    scratch_parent.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch_parent)}
    subprocess.run([sys.executable, "-m", "evalkit.cli", "flow", "build", str(src), "--out",
                    str(tmp_path / "flows.jsonl"), "--workers", "1", "--partition-size", "5"],
                   env=env, cwd=tmp_path, check=True, capture_output=True)
    assert sum(1 for _ in (tmp_path / "flows.jsonl").open()) == 20
    assert not (scratch_parent / "dask-scratch-space").exists() and not (tmp_path / "dask-scratch-space").exists()
    assert [p.name for p in scratch_parent.iterdir() if p.name.startswith("evalkit-dask-")] == []
