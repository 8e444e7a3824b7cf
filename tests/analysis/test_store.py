"""The annotation store only ever grows: relabels append, the latest wins, a crash loses nothing earlier."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from analysis_builders import note

from evalkit.analysis import append_annotations, labels_of, latest, read_store
from evalkit.errors import InputError
from evalkit.io.canonical import canonical_line


def test_appends_canonical_lines_and_reads_them_back_in_order(tmp_path):
    store = tmp_path / "labels" / "annotations.jsonl"  # the folder is created
    batch = [note("t1", "pass"), note("t2", "fail", ("wrong-tool-args",), text="wrong id", first="t2-plan")]
    assert append_annotations(store, batch) == 2
    assert store.read_text(encoding="utf-8") == "".join(canonical_line(a.to_json_obj()) for a in batch)
    assert read_store(store).annotations == batch
    assert append_annotations(store, []) == 0
    assert read_store(tmp_path / "missing.jsonl").annotations == []


def test_relabelling_appends_and_the_latest_per_trace_and_annotator_wins(tmp_path):
    store = tmp_path / "a.jsonl"
    append_annotations(store, [note("t1", "pass"), note("t2", "pass"), note("t1", "pass", annotator="ben")])
    before = store.read_bytes()
    append_annotations(store, [note("t1", "fail", ("hallucinated-policy",), minute=5)])
    assert store.read_bytes().startswith(before)  # nothing earlier was rewritten
    assert len(read_store(store).annotations) == 4
    current = latest(store)
    assert [(a.trace_id, a.annotator, a.label) for a in current] == [
        ("t1", "ana", "fail"), ("t2", "ana", "pass"), ("t1", "ben", "pass")]  # first-labelled order
    assert [a.label for a in latest(store, "ben")] == ["pass"]
    assert labels_of(read_store(store).annotations)[0] == "ana"  # the annotator with the most traces


def test_labels_of_an_unknown_annotator_is_an_error():
    with pytest.raises(InputError, match="no annotations by 'zoe'"):
        labels_of([note("t1")], "zoe")


def test_a_torn_last_line_is_counted_and_earlier_records_survive(tmp_path):
    store = tmp_path / "a.jsonl"
    append_annotations(store, [note("t1"), note("t2")])
    intact = store.read_bytes()
    torn = canonical_line(note("t3", "fail", ("x",)).to_json_obj())[:40]
    with store.open("ab") as fh:  # what a crash in the middle of a write leaves
        fh.write(torn.encode())
    contents = read_store(store)
    assert [a.trace_id for a in contents.annotations] == ["t1", "t2"]
    assert contents.torn_lines == [3]

    append_annotations(store, [note("t4")])
    assert store.read_bytes() == intact + canonical_line(note("t4").to_json_obj()).encode()  # cut line dropped
    contents = read_store(store)
    assert [a.trace_id for a in contents.annotations] == ["t1", "t2", "t4"]
    assert contents.torn == 0


def test_a_process_killed_mid_write_leaves_the_store_as_it_was(tmp_path):
    if not hasattr(os, "fork") or sys.platform != "linux":
        pytest.skip("uses RLIMIT_FSIZE to cut a write short, which needs Linux")
    store = tmp_path / "a.jsonl"
    append_annotations(store, [note(f"t{i}") for i in range(5)])
    intact = store.read_bytes()
    # The child appends a 50-record batch but may only write files of 300 bytes more: the kernel stops the
    # write there, part-way through a line, and the process dies (EFBIG; Python ignores SIGXFSZ), as
    # with a crash or a full disk mid-write.
    child = textwrap.dedent(f"""
        import resource, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from analysis_builders import note
        from evalkit.analysis import append_annotations
        resource.setrlimit(resource.RLIMIT_FSIZE, ({len(intact) + 300}, resource.RLIM_INFINITY))
        append_annotations({str(store)!r}, [note(f"new{{i}}", minute=i) for i in range(50)])
        print("finished")
    """)
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
    assert done.returncode != 0 and "finished" not in done.stdout
    assert store.read_bytes() == intact  # the batch is all or nothing: here nothing
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl"]  # and nothing left beside it
    assert [a.trace_id for a in read_store(store).annotations] == [f"t{i}" for i in range(5)]


def test_a_line_that_is_json_but_not_an_annotation_is_a_located_error(tmp_path):
    store = tmp_path / "a.jsonl"
    append_annotations(store, [note("t1")])
    with store.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"traceId": "t2", "annotator": "ana", "at": "yesterday", "label": "pass"}) + "\n")
    with pytest.raises(InputError) as err:
        read_store(store)
    assert err.value.render().startswith(f"{store}:2: at: not an ISO 8601 timestamp")
    other = tmp_path / "b.jsonl"
    other.write_text('{"traceId":"t3","traceId":"t3"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=f"^{other}:1: duplicate key 'traceId'"):
        read_store(other)
