"""`evalkit run` builds its folder beside the old one and swaps it in: killed mid-run (SIGKILL), the previous
run folder is left byte for byte, no half-written report takes its place, and the next run cleans up."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.errors import InputError
from evalkit.pipeline import run_subject
from evalkit.run_folder import building

from .conftest import RUN_AT
from .test_run import RUN_FILES

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

DEAD_PID = 2**22 + 12345  # above Linux's pid_max (4194304): no process has it


def _evalkit() -> list[str]:
    script = Path(sys.executable).parent / "evalkit"
    return [str(script)] if script.exists() else [sys.executable, "-m", "evalkit.cli"]


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _hidden_siblings(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _kill_mid_run(subject: Path, out: Path) -> None:
    """Start `evalkit run`, wait until the first notebook is executing, then SIGKILL the command."""
    child = subprocess.Popen([*_evalkit(), "run", str(subject), "--out", str(out), "--at", RUN_AT],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kernels: list[int] = []
    try:
        deadline = time.monotonic() + 120
        # papermill writes the executed notebook as its cells run: the first notebook has started
        while not list(out.parent.glob(f".{out.name}.partial-*/00_overview/00_overview.ipynb")):
            assert child.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "the first notebook never started"
            time.sleep(0.05)
        kernels = _children(child.pid)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        # the kernel notices its parent is gone and exits; one that has not within 20 s is ended here
        for pid in kernels:
            for _ in range(200):
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_a_run_killed_over_a_finished_one_leaves_it_as_it_was(overview_run, fixture_subject, tmp_path):
    out = tmp_path / "reports" / "run"
    shutil.copytree(overview_run, out)
    (out / "notes.txt").write_text("the reader's notes beside the report", encoding="utf-8")
    before = _files(out)
    _kill_mid_run(fixture_subject, out)
    assert _files(out) == before  # the previous report, byte for byte: no new notebook beside an old index
    assert [n.split("-")[0] for n in _hidden_siblings(out)] == [".run.partial"]  # killed mid-run, really
    manifest = run_subject(fixture_subject, out, at=RUN_AT)  # the next run completes and cleans up
    assert [n.status for n in manifest.notebooks] == ["ok"]
    assert _hidden_siblings(out) == []
    # same inputs, same bytes (executed notebook and pages included); what else the old folder held is gone
    kept = (*RUN_FILES, "trace-view.json.gz")  # the report's trace viewer, beside the notebooks' files
    assert _files(out) == {rel: data for rel, data in before.items() if rel in kept}


@pytest.mark.slow
def test_a_run_killed_into_a_new_folder_leaves_no_report(fixture_subject, tmp_path):
    out = tmp_path / "reports" / "fresh"
    _kill_mid_run(fixture_subject, out)
    assert not out.exists()  # nothing presented as a run, let alone a complete one
    assert main(["run", str(fixture_subject), "--out", str(out), "--at", RUN_AT]) == 0
    assert (out / "index.html").is_file() and _hidden_siblings(out) == []


def test_a_run_swaps_in_whole_and_refuses_a_folder_that_is_not_a_run(tmp_path):
    out = tmp_path / "run"
    with building(out) as folder:
        (folder / "run.json").write_text("{}", encoding="utf-8")
        (folder / "old-notebook").mkdir()
        assert not out.exists() and folder.parent == out.parent
    assert sorted(p.name for p in out.iterdir()) == ["old-notebook", "run.json"]
    with building(out) as folder:
        (folder / "run.json").write_text("{}", encoding="utf-8")
    assert [p.name for p in out.iterdir()] == ["run.json"]  # nothing of the previous run is left beside
    with pytest.raises(RuntimeError), building(out) as folder:  # a run that fails leaves the old one
        (folder / "run.json").write_text("half", encoding="utf-8")
        raise RuntimeError("the run failed")
    assert (out / "run.json").read_text(encoding="utf-8") == "{}" and _hidden_siblings(out) == []
    mine = tmp_path / "documents"
    mine.mkdir()
    (mine / "thesis.txt").write_text("years of work", encoding="utf-8")
    with pytest.raises(InputError, match="not a run folder"), building(mine):
        pass
    assert (mine / "thesis.txt").read_text(encoding="utf-8") == "years of work"
    with pytest.raises(InputError, match="it is a file"), building(mine / "thesis.txt"):
        pass
    with pytest.raises(InputError, match="the folder holds .*subject.yaml, which the run reads"), \
            building(out, [tmp_path / "run" / "sub" / "subject.yaml"]):
        pass
    assert [p.name for p in out.iterdir()] == ["run.json"]


def test_what_a_killed_run_left_is_removed_and_a_half_done_swap_is_undone(tmp_path):
    out = tmp_path / "run"
    # killed between the swap's two renames: the previous run is aside, the new one not yet in place
    previous = tmp_path / f".run.old-{DEAD_PID}-aaaa"
    previous.mkdir()
    (previous / "run.json").write_text("previous", encoding="utf-8")
    (tmp_path / f".run.partial-{DEAD_PID}-bbbb").mkdir()
    running = tmp_path / f".run.partial-{os.getpid()}-cccc"  # a run still going on: left alone
    running.mkdir()
    with pytest.raises(RuntimeError), building(out):
        assert (out / "run.json").read_text(encoding="utf-8") == "previous"  # put back before the run
        raise RuntimeError("stop here")
    assert (out / "run.json").read_text(encoding="utf-8") == "previous"
    assert _hidden_siblings(out) == [running.name]
