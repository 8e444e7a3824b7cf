"""Two imports of one batch at once leave one copy: the read, the dedupe and the append are one turn.

The reliability probe of issue 35 ran ``labels import a.json --into s.jsonl`` twice at once: both
"appended 300" and the store ended with 600 lines in 16 of 20 runs (``verdicts import`` 7 of 20). The
fast tests widen the window between the read and the append on purpose, with threads; the slow one runs
real processes, many times.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import evalkit.analysis.exports as exports
import evalkit.calibration.imports as imports
from evalkit.calibration import append_records
from evalkit.contracts.labels import HumanLabel
from evalkit.io.append_only import read_store_lines, store_lock

N = 300


def _export(path: Path) -> Path:
    annotations = [{"traceId": f"t{i:03d}", "annotator": "ana", "at": "2026-01-01T00:00:00Z", "label": "pass"}
                   for i in range(N)]
    path.write_text(json.dumps({"format": "evalkit-review-export", "version": 1, "annotator": "ana",
                                "annotations": annotations}), encoding="utf-8")
    return path


def _table(path: Path) -> Path:
    path.write_text("id,result\n" + "".join(f"t{i:03d},pass\n" for i in range(N)), encoding="utf-8")
    return path


def _slow_reads(monkeypatch, module, name):
    """Every store read waits a little, so two imports at once would both read before either appends."""
    real = getattr(module, name)

    def slow(*args, **kwargs):
        result = real(*args, **kwargs)
        time.sleep(0.2)
        return result

    monkeypatch.setattr(module, name, slow)


def _at_once(*calls):
    results, errors = [None] * len(calls), []

    def run(i, call):
        try:
            results[i] = call()
        except BaseException as exc:  # re-raised below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def test_two_label_imports_at_once_append_one_copy(tmp_path, monkeypatch):
    _slow_reads(monkeypatch, imports, "read_store_records")
    store = tmp_path / "labels.jsonl"
    labels = [HumanLabel(trace_id=f"t{i:03d}", criterion_id="c", label="pass") for i in range(N)]
    done = _at_once(lambda: append_records(store, labels, HumanLabel), lambda: append_records(store, labels, HumanLabel))
    assert sorted(d.appended for d in done) == [0, N] and sorted(d.unchanged for d in done) == [0, N]
    assert len(read_store_lines(store)[0]) == N


def test_two_review_imports_at_once_append_one_copy(tmp_path, monkeypatch):
    from evalkit.analysis import import_review_export, read_review_export

    _slow_reads(monkeypatch, exports, "read_store")
    export, _ = read_review_export(_export(tmp_path / "a.json"))
    store = tmp_path / "annotations.jsonl"
    done = _at_once(lambda: import_review_export(export, store), lambda: import_review_export(export, store))
    assert sorted(d.appended for d in done) == [0, N]
    assert len(read_store_lines(store)[0]) == N


def test_the_lock_is_reentrant_in_a_thread_and_exclusive_between_threads(tmp_path):
    store = tmp_path / "s.jsonl"
    order = []

    def hold():
        with store_lock(store):
            order.append("in")
            time.sleep(0.2)
            order.append("out")

    with store_lock(store), store_lock(store):  # the same thread again: no wait
        thread = threading.Thread(target=hold)
        thread.start()
        time.sleep(0.1)
        order.append("main")
    thread.join()
    assert order == ["main", "in", "out"]


@pytest.mark.slow
@pytest.mark.parametrize("command", ["labels", "verdicts"])
def test_real_processes_importing_one_batch_at_once_leave_one_copy(tmp_path, command):
    export = _export(tmp_path / "a.json") if command == "labels" else _table(tmp_path / "a.csv")
    runs, copies = 12, []
    for run in range(runs):
        store = tmp_path / f"store-{run}.jsonl"
        argv = ([sys.executable, "-m", "evalkit.cli", "labels", "import", str(export), "--into", str(store)]
                if command == "labels" else
                [sys.executable, "-m", "evalkit.cli", "verdicts", "import", str(export), "--into", str(store),
                 "--result-col", "result", "--id-col", "id", "--criterion", "c"])
        procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [p.communicate(timeout=120) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outs
        said = sorted(out.split(" ")[1] for out, _ in outs)
        assert said == ["0", str(N)], outs  # one appended the batch, the other says it found it there
        assert any(f"({N} already there)" in out for out, _ in outs)
        copies.append(len(read_store_lines(store)[0]))
    assert copies == [N] * runs
