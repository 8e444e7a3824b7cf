"""A full or read-only disk ends a command with the path and the fix, never a traceback, and replaces nothing.

The fast tests make every write of a file fail as a full disk would (ENOSPC from the file's own writes and
its flush on close); the slow one mounts a real read-only file system and a tiny full one in a private
mount namespace, where the machine allows it.
"""

from __future__ import annotations

import errno
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import evalkit.io.atomic as atomic
from evalkit.cli import main

TRACE = ('{"id": "t1", "observations": [{"id": "o1", "type": "TOOL", "name": "lookup", "output": "order A-2291-XK"},'
         ' {"id": "o2", "type": "GENERATION", "name": "reply", "input": "order A-2291-XK"}]}\n')


class _FullDisk(io.TextIOWrapper):
    """A text file whose bytes never reach the disk: every write is refused as ENOSPC."""

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


@pytest.fixture
def full_disk(monkeypatch):
    real = atomic._fdopen

    def fdopen(fd, mode, encoding):
        handle = real(fd, mode, encoding)
        if "b" in mode:
            return handle
        return _FullDisk(handle.detach(), encoding=encoding, newline="")

    monkeypatch.setattr(atomic, "_fdopen", fdopen)


COMMANDS = {
    "traces import": ["traces", "import", "{traces}", "--out", "{out}/t.jsonl"],
    "flow build": ["flow", "build", "{traces}", "--out", "{out}/g.jsonl"],
    "sample": ["sample", "{traces}", "--n", "1", "--out", "{out}/s.jsonl"],
    "review build": ["review", "build", "{traces}", "--out", "{out}/r.html"],
    "schema": ["schema", "--out", "{out}/schemas"],
}


@pytest.mark.parametrize("argv", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_full_disk_is_named_with_its_fix_and_the_old_file_kept(tmp_path, capsys, full_disk, argv):
    traces = tmp_path / "traces.jsonl"
    traces.write_text(TRACE, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    old = out / Path(argv[-1]).name
    if not argv[-1].endswith("schemas"):
        old.write_text("the previous run's file\n", encoding="utf-8")
    code = main([a.format(traces=traces, out=out) for a in argv])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert err.startswith(f"error: {out}/") and "No space left on device; the disk is full: free space" in err
    if old.is_file():
        assert old.read_text(encoding="utf-8") == "the previous run's file\n"
    assert not [p for p in out.rglob("*.tmp")]  # the temporary file went with the failed write


def test_an_os_error_reaching_the_command_line_is_one_line(monkeypatch, capsys, tmp_path):
    """Whatever the command: the one handler names the path and the fix (here, a stats read refused)."""
    import evalkit.cli.traces as traces_cli

    def refuse(args):
        raise OSError(errno.EROFS, "Read-only file system", str(tmp_path / "x"))

    monkeypatch.setattr(traces_cli, "_cmd_stats", refuse)
    parser_main = main(["traces", "stats", str(tmp_path)])
    err = capsys.readouterr().err
    assert parser_main == 1
    assert err == f"error: {tmp_path / 'x'}: Read-only file system; the file system is read-only: write elsewhere " \
                  "(a folder on a writable disk)\n"


def _namespaces_allowed() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=4k tmpfs /mnt"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(not _namespaces_allowed(), reason="needs unshare -m and mount (root in a private namespace)")
def test_real_read_only_and_full_file_systems(tmp_path):
    traces = tmp_path / "traces.jsonl"
    traces.write_text(TRACE * 1 + "".join(TRACE.replace('"t1"', f'"t{i}"') for i in range(2, 400)),
                      encoding="utf-8")
    (tmp_path / "ro").mkdir()
    (tmp_path / "full").mkdir()
    evalkit = f"{sys.executable} -m evalkit.cli"
    script = f"""
mount -t tmpfs -o ro tmpfs {tmp_path}/ro && mount -t tmpfs -o size=16k tmpfs {tmp_path}/full || exit 99
cd {tmp_path}
{evalkit} traces import traces.jsonl --out ro/t.jsonl; echo "rc=$?"
{evalkit} traces import traces.jsonl --out full/t.jsonl; echo "rc=$?"
{evalkit} flow build traces.jsonl --out full/g.jsonl; echo "rc=$?"
{evalkit} schema --out ro/schemas; echo "rc=$?"
{evalkit} schema --out full/schemas; echo "rc=$?"
"""
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=300)
    assert done.stdout.count("rc=1") == 5, done
    assert "Traceback" not in done.stderr
    assert done.stderr.count("is on a read-only file system; write elsewhere") == 2, done.stderr
    assert done.stderr.count("No space left on device; the disk is full") == 3, done.stderr
