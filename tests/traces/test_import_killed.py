"""`traces import` killed with SIGKILL mid-write: no half-written output, and the next run leaves no temp file."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.traces import load
from tests.processes import kill_once

pytestmark = pytest.mark.slow


def _big_source(path: Path, n_traces: int) -> None:
    with path.open("w") as fh:
        for t in range(n_traces):
            obs = [{"id": f"o{t}-{i}", "type": "SPAN", "name": f"step {i}", "input": {"text": "lorem ipsum " * 20},
                    "output": {"n": i}} for i in range(10)]
            fh.write(json.dumps({"id": f"tr-{t:06d}", "observations": obs}) + "\n")


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def _start_import(src: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "evalkit.cli", "traces", "import", str(src), "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _kill_mid_write(proc: subprocess.Popen, folder: Path, sig: int) -> None:
    kill_once(proc, lambda: any(p.stat().st_size > 0 for p in folder.glob(".*.tmp") if p.exists()),
              "temporary file", sig=sig, timeout=60)


@pytest.mark.parametrize("previous", [False, True])
def test_kill_9_mid_write_leaves_no_output_or_the_previous_one_and_the_next_run_cleans_up(
        tmp_path: Path, previous: bool) -> None:
    src, small = tmp_path / "big.jsonl", tmp_path / "small.jsonl"
    _big_source(src, 8_000)
    _big_source(small, 3)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "traces.jsonl"
    if previous:
        assert subprocess.run([sys.executable, "-m", "evalkit.cli", "traces", "import", str(small),
                               "--out", str(out)], capture_output=True).returncode == 0
    before = out.read_bytes() if previous else None

    proc = _start_import(src, out)
    _kill_mid_write(proc, out_dir, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    assert (out.read_bytes() if out.exists() else None) == before
    assert _temps(out_dir), "the kill should have caught the import mid-write"

    again = subprocess.run([sys.executable, "-m", "evalkit.cli", "traces", "import", str(small), "--out", str(out)],
                           capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert _temps(out_dir) == []
    assert [t.id for t in load(out)] == ["tr-000000", "tr-000001", "tr-000002"]


def test_sigterm_mid_write_removes_its_own_temp_file(tmp_path: Path) -> None:
    src = tmp_path / "big.jsonl"
    _big_source(src, 8_000)
    out = tmp_path / "out" / "traces.jsonl"
    out.parent.mkdir()
    proc = _start_import(src, out)
    _kill_mid_write(proc, out.parent, signal.SIGTERM)
    assert proc.returncode == 128 + signal.SIGTERM
    assert not out.exists() and _temps(out.parent) == []
