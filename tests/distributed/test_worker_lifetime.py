"""Workers die with their command: a ``--workers N`` run killed with SIGKILL (the command alone, not its
process group) leaves no process behind, whatever its workers were doing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalkit.traces import write_jsonl
from tests.judge.servers import JudgeServer
from tests.judge.traces import leasing_trace

SPEC = """\
id: answers_the_question
criterion: The assistant answers the question the user asked.
pass: The final reply answers the user's question.
fail: The final reply does not answer the user's question.
"""


def _group(pgid: int) -> list[int]:
    """The live processes of a process group (zombies are dead: their parent reaps them or init does)."""
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(entry))
    return alive


SLOW_START = str(Path(__file__).with_name("slow_start.py"))


@pytest.mark.slow
@pytest.mark.parametrize("command", [["-m", "evalkit.cli"], [SLOW_START]], ids=["started", "started-under-load"])
def test_a_killed_cluster_run_leaves_no_worker_behind(tmp_path: Path, monkeypatch, command: list[str]) -> None:
    """Killed while its workers wait on judge calls: none survives, also when the workers were started the
    way a loaded machine starts them (each holding the other's lifeline pipe, so Dask's own watch fails)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    traces = tmp_path / "traces.jsonl"
    write_jsonl([leasing_trace(f"t{i:02d}", reply=f"item=t{i:02d}") for i in range(8)], traces)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    server = JudgeServer(latency=60.0).start()  # the workers sit in their calls when the command dies
    proc = subprocess.Popen([sys.executable, *command, "judge", "run", "--no-progress", "--spec",
                             str(spec), "--traces", str(traces), "--out", str(tmp_path / "v.jsonl"),
                             "--provider", "openai", "--model", "m", "--base-url", server.url + "/v1",
                             "--workers", "2", "--partition-size", "1", "--concurrency", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(server.requests) < 2:
            assert proc.poll() is None, "the command ended before it could be killed"
            assert time.monotonic() < deadline, "the workers never started"
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _group(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        survivors = _group(proc.pid)
        assert survivors == [], f"worker processes outlived their command: {survivors}"
    finally:
        for pid in _group(proc.pid):
            os.kill(pid, signal.SIGKILL)
        server.stop()
