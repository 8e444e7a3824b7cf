"""Kernel connection files (the HMAC key to a kernel) go to the run's own folder and do not outlive it, even
when the run is killed (issue 35)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from evalkit.kernel_files import (
    PREFIX,
    RUNTIME_ENV,
    kernel_connection_file,
    kernel_runtime_dir,
    remove_left_behind,
)
from tests.processes import kill_once


def test_a_run_keeps_connection_files_in_its_own_folder_and_removes_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    with kernel_runtime_dir() as folder:
        assert folder == tmp_path / f"{PREFIX}{os.getpid()}" and os.environ[RUNTIME_ENV] == str(folder)
        assert kernel_connection_file().parent == folder
        (folder / "kernel-1.json").write_text("{}")
    assert not folder.exists() and RUNTIME_ENV not in os.environ


def test_the_folders_of_runs_that_are_gone_are_removed_and_no_others(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    gone = tmp_path / f"{PREFIX}{dead.pid}"
    alive = tmp_path / f"{PREFIX}{os.getpid()}"
    other = tmp_path / "evalkit-kernels-notapid"
    for folder in (gone, alive, other):
        folder.mkdir()
    assert remove_left_behind(tmp_path) == [gone]
    assert alive.is_dir() and other.is_dir() and not gone.exists()


@pytest.mark.slow
def test_a_killed_run_leaves_its_connection_file_only_until_the_next_run(tmp_path, fixture_subject):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "evalkit.cli", "run", str(fixture_subject), "--out",
                             str(tmp_path / "run")], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    folder = tmp_path / f"{PREFIX}{proc.pid}"
    kill_once(proc, lambda: any(folder.glob("kernel-*.json")), "kernel connection file")
    assert list(tmp_path.glob("tmp*.json")) == []  # not jupyter_client's mkstemp file in TMPDIR
    code = ("import tempfile; from evalkit.kernel_files import kernel_runtime_dir\n"
            "with kernel_runtime_dir(): pass")
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    assert not folder.exists()
    for leftover in tmp_path.glob("kernel-*"):  # the kernel the killed run started may still be going
        pytest.fail(f"a connection file outside the run's folder: {leftover}")
