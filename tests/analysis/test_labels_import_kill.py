"""`evalkit labels import` killed with SIGKILL at any moment: the store holds all of the batch or none of it,
validates, has nothing left beside it, and running the import again completes it."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evalkit.analysis import read_store
from evalkit.contract_files import validate_file
from evalkit.io.append_only import append_batch
from evalkit.io.canonical import canonical_line

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")]


def _annotation(i: int, annotator: str) -> dict:
    return {"traceId": f"t{i:05d}", "annotator": annotator, "at": "2026-01-05T12:00:00Z",
            "label": "pass" if i % 3 == 0 else "fail", "modes": [] if i % 3 == 0 else ["wrong-tool"],
            "note": f"checked by {annotator}: " + "x" * (i % 90)}


def _evalkit() -> list[str]:
    script = Path(sys.executable).parent / "evalkit"
    return [str(script)] if script.exists() else [sys.executable, "-m", "evalkit.cli"]


@pytest.fixture()
def setting(tmp_path: Path) -> tuple[Path, Path, bytes, bytes]:
    """A store with 1000 annotations by ben, an export of 2000 by ana, and the bytes before and after."""
    folder = tmp_path / "labels"
    store = folder / "annotations.jsonl"
    append_batch(store, [_annotation(i, "ben") for i in range(1000)])
    batch = [_annotation(i, "ana") for i in range(2000)]
    export = tmp_path / "export.json"
    export.write_text(json.dumps({"format": "evalkit-review-export", "version": 1, "annotator": "ana",
                                  "annotations": batch}), encoding="utf-8")
    before = store.read_bytes()
    return store, export, before, before + "".join(canonical_line(a) for a in batch).encode()


def _check(store: Path, before: bytes, after: bytes) -> bool:
    """The store is exactly as before or exactly with the whole batch, valid, alone in its folder."""
    data = store.read_bytes()
    assert data in (before, after), f"partial batch: {len(data)} bytes, expected {len(before)} or {len(after)}"
    assert [p.name for p in store.parent.iterdir()] == [store.name]  # no temporary file left behind
    kind, count, problems = validate_file(store, "annotation", notes=[])
    assert (kind, problems) == ("annotation", []) and count == (1000 if data == before else 3000)
    return data == after


def test_labels_import_killed_at_random_moments_is_all_or_nothing(setting):
    store, export, before, after = setting
    command = [*_evalkit(), "labels", "import", str(export), "--into", str(store)]
    started = time.monotonic()
    subprocess.run(command, check=True, capture_output=True)  # warm the caches; time a whole import
    took = time.monotonic() - started
    store.write_bytes(before)
    rng = random.Random(17)
    outcomes = []
    for _ in range(4):
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 1.1) * took)
        child.send_signal(signal.SIGKILL)
        child.wait()
        outcomes.append((child.returncode, _check(store, before, after)))
        done = subprocess.run(command, capture_output=True, text=True)  # run again: completes the import
        assert done.returncode == 0, done.stderr
        assert _check(store, before, after)
        assert "appended 0 annotations" in done.stdout if outcomes[-1][1] else "appended 2000" in done.stdout
        store.write_bytes(before)
    assert any(code == -signal.SIGKILL for code, _ in outcomes)  # at least one import really was killed
    shown = subprocess.run([*_evalkit(), "validate", "--kind", "annotation", str(store)], capture_output=True,
                           text=True)
    assert shown.returncode == 0 and "ok (1000 annotation records)" in shown.stdout


def test_labels_import_killed_in_the_middle_of_writing_leaves_the_store_as_it_was(setting):
    store, export, before, after = setting
    # The child writes half of the new store's bytes, then is killed: the moment an append in place
    # would leave a partial batch and a cut-off line.
    child = textwrap.dedent(f"""
        import os, signal, sys
        from evalkit.io import append_only
        from evalkit.cli import main

        def write_half_then_die(fd, data):
            os.write(fd, bytes(data[: len(data) // 2]))
            os.kill(os.getpid(), signal.SIGKILL)

        append_only._write_all = write_half_then_die
        sys.exit(main(["labels", "import", {str(export)!r}, "--into", {str(store)!r}]))
    """)
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert not _check(store, before, after)
    assert [a.annotator for a in read_store(store).annotations] == ["ben"] * 1000
    again = subprocess.run([*_evalkit(), "labels", "import", str(export), "--into", str(store)],
                           capture_output=True, text=True)
    assert again.returncode == 0 and "appended 2000 annotations by ana" in again.stdout
    assert _check(store, before, after)


def test_the_staging_name_left_by_a_kill_between_naming_and_renaming_is_cleared(setting):
    store, export, before, after = setting
    staging = store.with_name(f".{store.name}.append")
    staging.write_bytes(before[:100])  # what a kill right after naming the new store leaves
    assert read_store(store).annotations[0].annotator == "ben"  # readers never look at it
    done = subprocess.run([*_evalkit(), "labels", "import", str(export), "--into", str(store)],
                          capture_output=True, text=True)
    assert done.returncode == 0 and not staging.exists()
    assert _check(store, before, after)
    assert os.stat(store).st_size == len(after)
