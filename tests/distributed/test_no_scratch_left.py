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
    done = subprocess.run([sys.executable, "-m", "evalkit.cli", "flow", "build", str(src), "--out",
                           str(tmp_path / "flows.jsonl"), "--workers", "1", "--partition-size", "5"],
                          env=env, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert sum(1 for _ in (tmp_path / "flows.jsonl").open()) == 20
    assert not (scratch_parent / "dask-scratch-space").exists() and not (tmp_path / "dask-scratch-space").exists()
    assert [p.name for p in scratch_parent.iterdir() if p.name.startswith("evalkit-dask-")] == []


def test_workers_are_spawned_where_the_fork_servers_socket_path_would_be_too_long(monkeypatch):
    """The fork server listens on a socket in the temporary folder; under a long TMPDIR (a test's own
    folder, say) binding it failed ('AF_UNIX path too long') and no worker started."""
    import tempfile

    from evalkit.distributed.cluster import worker_start

    if sys.platform != "linux":
        pytest.skip("the fork server is used on Linux only")
    monkeypatch.setattr(tempfile, "tempdir", "/tmp")
    assert worker_start() == "forkserver"
    monkeypatch.setattr(tempfile, "tempdir", "/tmp/" + "x" * 80)
    assert worker_start() == "spawn"
