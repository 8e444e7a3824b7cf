"""Atomic writes: temp file beside the target, then rename; a failure keeps the old file and leaves no temp."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalkit.io import InputError, atomic_write_bytes, atomic_write_lines, atomic_write_text, atomic_writer
from evalkit.io.atomic import remove_stale_temps


class Boom(RuntimeError):
    pass


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_write_text_creates_the_file_with_exact_content(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    atomic_write_text(target, '{\n  "a": "é"\n}\n')
    assert target.read_bytes() == '{\n  "a": "é"\n}\n'.encode()
    assert _names(tmp_path) == ["out.json"]


def test_write_text_keeps_newlines_as_given(tmp_path: Path) -> None:
    target = tmp_path / "nl.txt"
    atomic_write_text(target, "a\nb\r\nc")
    assert target.read_bytes() == b"a\nb\r\nc"


def test_write_bytes_replaces_existing_content(tmp_path: Path) -> None:
    target = tmp_path / "data.bin"
    target.write_bytes(b"old content that is longer")
    atomic_write_bytes(target, b"\x00new")
    assert target.read_bytes() == b"\x00new"
    assert _names(tmp_path) == ["data.bin"]


def test_missing_parent_folders_are_created(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c.txt"
    atomic_write_text(target, "x")
    assert target.read_text() == "x"


def test_accepts_a_string_path(tmp_path: Path) -> None:
    atomic_write_text(str(tmp_path / "s.txt"), "ok")
    assert (tmp_path / "s.txt").read_text() == "ok"


def test_target_is_untouched_until_the_block_ends(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old")
    with atomic_writer(target) as fh:
        fh.write("new")
        fh.flush()
        assert target.read_text() == "old"
        temps = [n for n in _names(tmp_path) if n != "f.txt"]
        assert len(temps) == 1  # the temporary file sits beside the target
    assert target.read_text() == "new"
    assert _names(tmp_path) == ["f.txt"]


def test_exception_mid_write_keeps_previous_content_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text('{"version": 1}\n')
    with pytest.raises(Boom), atomic_writer(target) as fh:
        fh.write('{"version": 2, "half')
        fh.flush()
        raise Boom("crash in the middle of writing")
    assert target.read_text() == '{"version": 1}\n'
    assert _names(tmp_path) == ["report.json"]


def test_exception_mid_write_of_a_new_file_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "new.json"
    with pytest.raises(Boom), atomic_writer(target, "wb") as fh:
        fh.write(b"partial")
        raise Boom
    assert not target.exists()
    assert _names(tmp_path) == []


def test_keyboard_interrupt_mid_write_also_cleans_up(tmp_path: Path) -> None:
    target = tmp_path / "k.txt"
    target.write_text("keep")
    with pytest.raises(KeyboardInterrupt), atomic_writer(target) as fh:
        fh.write("lost")
        raise KeyboardInterrupt
    assert target.read_text() == "keep"
    assert _names(tmp_path) == ["k.txt"]


def test_encoding_error_mid_write_keeps_previous_content(tmp_path: Path) -> None:
    target = tmp_path / "enc.txt"
    target.write_text("before")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(target, "ok \udcff not encodable")
    assert target.read_text() == "before"
    assert _names(tmp_path) == ["enc.txt"]


def test_failed_rename_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "occupied"
    target.mkdir()
    (target / "inside.txt").write_text("x")
    with pytest.raises(InputError, match="it is a folder") as info:
        atomic_write_text(target, "cannot replace a folder")
    assert info.value.file == str(target)
    assert _names(tmp_path) == ["occupied"]
    assert _names(target) == ["inside.txt"]


def test_failed_replace_keeps_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "t.txt"
    target.write_text("old")

    def failing_replace(src: str, dst: str) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(InputError, match="cannot write: disk on fire"):
        atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert _names(tmp_path) == ["t.txt"]


def test_repeated_writes_leave_only_the_target(tmp_path: Path) -> None:
    target = tmp_path / "many.txt"
    for i in range(5):
        atomic_write_text(target, f"v{i}")
    assert target.read_text() == "v4"
    assert _names(tmp_path) == ["many.txt"]


# --- leftovers of a killed write, and places that cannot be written -------------------------------


def _dead_pid() -> int:
    """A process id that no process has (a child that has already been reaped)."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_temp_file_left_by_a_killed_write_is_removed_by_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    stale = tmp_path / f".out.jsonl.{_dead_pid()}.abc123.tmp"
    stale.write_bytes(b"half a file" * 1000)
    older = tmp_path / ".out.jsonl.x1y2z3q4.tmp"  # an older evalkit named its temp files without a pid
    older.write_bytes(b"half")
    other = tmp_path / ".other.jsonl.1.abc.tmp"  # another target's: not ours to remove
    other.write_bytes(b"x")
    atomic_write_text(target, "new\n")
    assert _names(tmp_path) == [other.name, "out.jsonl"]


def test_a_temp_file_of_a_write_still_running_is_left_alone(tmp_path: Path) -> None:
    live = tmp_path / f".out.jsonl.{os.getppid()}.abc123.tmp"
    live.write_bytes(b"in progress")
    assert remove_stale_temps(tmp_path / "out.jsonl") == []
    assert live.exists()


@pytest.mark.parametrize("case", ["folder", "below-a-file", "read-only-folder"])
def test_a_place_that_cannot_be_written_is_a_clear_error(tmp_path: Path, case: str) -> None:
    if case == "folder":
        target = tmp_path / "out.jsonl"
        target.mkdir()
        message = "it is a folder"
    elif case == "below-a-file":
        (tmp_path / "file.txt").write_text("x")
        target = tmp_path / "file.txt" / "sub" / "out.jsonl"
        message = "is a file, not a folder"
    else:
        if os.geteuid() == 0:
            pytest.skip("root may write in a read-only folder")
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o500)
        target = folder / "out.jsonl"
        message = "no permission"
    with pytest.raises(InputError, match=message) as info:
        atomic_write_text(target, "x")
    assert info.value.file == str(target)


def test_write_lines_counts_and_an_error_midway_leaves_the_old_file(tmp_path):
    out = tmp_path / "lines.jsonl"
    assert atomic_write_lines(out, (f"{i}\n" for i in range(3))) == 3
    assert out.read_text() == "0\n1\n2\n"

    def broken():
        yield "new\n"
        raise RuntimeError("source failed")

    with pytest.raises(RuntimeError):
        atomic_write_lines(out, broken())
    assert out.read_text() == "0\n1\n2\n" and [p.name for p in tmp_path.iterdir()] == ["lines.jsonl"]


def test_files_written_together_replace_their_targets_only_when_the_block_succeeds(tmp_path: Path) -> None:
    from evalkit.io import atomic_writers

    main, side = tmp_path / "verdicts.jsonl", tmp_path / "sub" / "runs.jsonl"
    main.write_text("old main\n")
    with pytest.raises(Boom), atomic_writers([main, side]) as (mf, sf):
        mf.write("new main\n")
        sf.write("new side\n")
        raise Boom()
    assert main.read_text() == "old main\n" and not side.exists()
    assert _names(tmp_path) == ["sub", "verdicts.jsonl"] and _names(tmp_path / "sub") == []

    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "fsync", fsync)
        with atomic_writers([main, side]) as (mf, sf):
            mf.write("new main\n")
            sf.write("new side\n")
    assert main.read_text() == "new main\n" and side.read_text() == "new side\n"
    assert len(set(synced)) == 2  # each file flushed to disk before it replaced its target
    assert _names(tmp_path) == ["sub", "verdicts.jsonl"] and _names(tmp_path / "sub") == ["runs.jsonl"]


def test_a_failed_flush_of_one_file_written_together_replaces_none(tmp_path: Path) -> None:
    from evalkit.io import atomic_writers

    main, side = tmp_path / "a.txt", tmp_path / "b.txt"
    main.write_text("old a")
    side.write_text("old b")
    real_fsync = os.fsync
    calls = []

    def fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "fsync", fsync)
        with pytest.raises(InputError, match="No space left"), atomic_writers([main, side]) as (af, bf):
            af.write("new a")
            bf.write("new b")
    assert (main.read_text(), side.read_text()) == ("old a", "old b")
    assert _names(tmp_path) == ["a.txt", "b.txt"]
