"""The append-only store policy, the same for every store: bad lines are errors naming the line; only a
final line cut off by an interrupted write is left out, by every reader alike, and dropped by the next append."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from evalkit.analysis import append_annotations, read_store
from evalkit.calibration import TestLedger, append_records
from evalkit.contract_files import validate_file
from evalkit.contracts.annotation import Annotation
from evalkit.contracts.labels import HumanLabel, LedgerEntry
from evalkit.errors import InputError
from evalkit.io.append_only import AppendOnlyStore, append_batch, read_store_records
from evalkit.io.canonical import canonical_line


def note(trace_id: str, label: str = "pass") -> Annotation:
    return Annotation(trace_id=trace_id, annotator="ana", at="2026-01-05T12:00:00Z", label=label)


def human(trace_id: str, label: str = "pass") -> HumanLabel:
    return HumanLabel(trace_id=trace_id, label=label, criterion_id="diet", split="dev")


def entry(digest: str) -> LedgerEntry:
    return LedgerEntry(criterion_id="diet", prompt_digest=digest, judge_model="judge", test_set_digest="t" * 8,
                       measured_at="2026-01-05T12:00:00Z", label_count=20, tpr=0.9, tnr=0.8, status="validated")


def line(record: Annotation | HumanLabel) -> bytes:
    return canonical_line(record.to_json_obj()).encode()


def test_records_come_back_in_order_and_a_missing_store_is_empty(tmp_path):
    store = AppendOnlyStore(tmp_path / "deep" / "a.jsonl", Annotation)
    assert store.read().records == [] and store.read().cut_off is None
    assert store.append([note("t1"), note("t2", "fail")]).appended == 2
    assert store.append([note("t3")]).appended == 1
    assert [a.trace_id for a in store.read().records] == ["t1", "t2", "t3"]
    assert store.path.read_bytes() == line(note("t1")) + line(note("t2", "fail")) + line(note("t3"))


def test_a_byte_order_mark_is_an_error_naming_line_1(tmp_path):
    store = tmp_path / "a.jsonl"
    store.write_bytes(b"\xef\xbb\xbf" + line(note("t1")) + line(note("t2")))
    with pytest.raises(InputError, match=rf"^{store}:1: byte-order mark"):
        read_store(store)
    kind, _, problems = validate_file(store, "annotation", notes=[])
    assert [p.line for p in problems] == [1]


def test_a_corrupted_record_in_the_middle_is_an_error_naming_its_line(tmp_path):
    store = tmp_path / "a.jsonl"
    corrupted = line(note("t2"))[:30] + line(note("t2"))[45:]  # bytes lost in the middle of a line
    store.write_bytes(line(note("t1")) + corrupted + line(note("t3")))
    with pytest.raises(InputError, match=rf"^{store}:2: "):
        read_store(store)
    labels = tmp_path / "labels.jsonl"
    labels.write_bytes(line(human("t1")) + line(human("t2")).replace(b'"label"', b'"lab') + line(human("t3")))
    before = labels.read_bytes()
    with pytest.raises(InputError, match=rf"^{labels}:2: "):  # an import reads the store first: nothing appended
        append_records(labels, [human("t9")], HumanLabel)
    assert labels.read_bytes() == before


def test_garbage_is_an_error_not_an_empty_store(tmp_path):
    store = tmp_path / "a.jsonl"
    garbage = bytes(range(256)) * 12  # 3 KB of binary noise, with line breaks in it
    store.write_bytes(garbage)
    with pytest.raises(InputError, match=rf"^{store}:1: "):
        read_store(store)
    text_garbage = tmp_path / "b.jsonl"
    text_garbage.write_bytes(b"0 reviewed, all fine " * 150)  # 3 KB, no line break at all
    with pytest.raises(InputError, match=rf"^{text_garbage}:1: "):
        read_store(text_garbage)
    with pytest.raises(InputError, match=rf"^{text_garbage}:1: "):  # and nothing is appended after garbage
        append_annotations(text_garbage, [note("t1")])
    assert text_garbage.read_bytes() == b"0 reviewed, all fine " * 150


def _cut(record: bytes, keep: int) -> bytes:
    """The first ``keep`` bytes of a record; a negative ``keep`` leaves out that many bytes at its end."""
    cut = record[:keep]
    assert 0 < len(cut) < len(record) - 1
    return cut


@pytest.mark.parametrize("keep", [1, 12, 40, -2])
def test_a_cut_off_final_line_is_left_out_by_every_reader_alike(tmp_path, keep):
    intact = line(note("t1")) + line(note("t2"))
    annotations = tmp_path / "annotations.jsonl"
    annotations.write_bytes(intact + _cut(line(note("t3")), keep))
    contents = read_store(annotations)
    assert [a.trace_id for a in contents.annotations] == ["t1", "t2"] and contents.torn_lines == [3]
    read = read_store_records(annotations, Annotation)
    assert len(read.records) == 2 and (read.cut_off.line, read.cut_off.size) == (3, len(_cut(line(note("t3")), keep)))
    notes: list[InputError] = []
    kind, count, problems = validate_file(annotations, notes=notes)
    assert (kind, count, problems) == ("annotation", 2, []) and [n.line for n in notes] == [3]

    labels = tmp_path / "human-labels.jsonl"
    labels.write_bytes(line(human("t1")) + _cut(line(human("t2")), keep))
    assert [r.trace_id for r in read_store_records(labels, HumanLabel).records] == ["t1"]
    done = append_records(labels, [human("t1"), human("t2")], HumanLabel)
    assert (done.appended, done.unchanged, done.cut_off_line) == (1, 1, 2)
    assert labels.read_bytes() == line(human("t1")) + line(human("t2"))

    ledger = tmp_path / "ledger.jsonl"
    first = canonical_line(entry("a" * 8).model_dump(mode="json", by_alias=True)).encode()
    ledger.write_bytes(first + _cut(first.replace(b"a" * 8, b"b" * 8), keep))
    book = TestLedger(ledger)
    assert [e.prompt_digest for e in book.entries()] == ["a" * 8]
    book.append(entry("c" * 8))
    assert [e.prompt_digest for e in book.entries()] == ["a" * 8, "c" * 8]
    assert ledger.read_bytes().startswith(first) and ledger.read_bytes().count(b"\n") == 2


def test_the_next_append_drops_the_cut_off_line_and_says_so(tmp_path):
    store = tmp_path / "a.jsonl"
    store.write_bytes(line(note("t1")) + line(note("t2"))[:50])
    done = append_batch(store, [note("t3")])
    assert done.appended == 1 and (done.dropped.line, done.dropped.size) == (2, 50)
    assert store.read_bytes() == line(note("t1")) + line(note("t3"))
    assert read_store(store).torn == 0


def test_a_line_cut_inside_a_character_is_a_cut_off_line(tmp_path):
    store = tmp_path / "a.jsonl"
    record = canonical_line(note("t2").to_json_obj() | {"notes": "très bien"}).encode()
    cut_at = record.index("è".encode()) + 1  # half of the two bytes of è
    store.write_bytes(line(note("t1")) + record[:cut_at])
    assert read_store(store).torn_lines == [2]


def test_a_complete_last_record_without_its_line_break_is_kept(tmp_path):
    store = tmp_path / "a.jsonl"
    store.write_bytes(line(note("t1")) + line(note("t2")).rstrip(b"\n"))  # as an editor may save it
    assert [a.trace_id for a in read_store(store).annotations] == ["t1", "t2"]
    assert append_batch(store, [note("t3")]).dropped is None
    assert store.read_bytes() == line(note("t1")) + line(note("t2")) + line(note("t3"))


def test_an_unterminated_last_line_that_is_not_a_record_start_is_an_error(tmp_path):
    store = tmp_path / "a.jsonl"
    store.write_bytes(line(note("t1")) + b"[1, 2")
    with pytest.raises(InputError, match=rf"^{store}:2: "):
        read_store(store)
    with pytest.raises(InputError, match=rf"^{store}:2: "):
        append_batch(store, [note("t2")])


def test_appending_keeps_the_stores_mode_and_follows_a_symbolic_link(tmp_path):
    real = tmp_path / "real" / "a.jsonl"
    append_batch(real, [note("t1")])
    os.chmod(real, 0o640)
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    append_batch(link, [note("t2")])
    assert link.is_symlink() and real.stat().st_mode & 0o777 == 0o640
    assert [a.trace_id for a in read_store(real).annotations] == ["t1", "t2"]
    assert sorted(p.name for p in real.parent.iterdir()) == ["a.jsonl"]


def test_appenders_at_the_same_time_all_land(tmp_path):
    store = tmp_path / "a.jsonl"

    def append(who: str) -> None:
        for i in range(15):
            append_batch(store, [note(f"{who}-{i}-a"), note(f"{who}-{i}-b")])

    threads = [threading.Thread(target=append, args=(w,)) for w in "xyz"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = [a.trace_id for a in read_store(store).annotations]
    assert sorted(ids) == sorted(f"{w}-{i}-{s}" for w in "xyz" for i in range(15) for s in "ab")
    for w in "xyz":  # each batch stays together, in order
        for i in range(15):
            at = ids.index(f"{w}-{i}-a")
            assert ids[at + 1] == f"{w}-{i}-b"


def test_an_empty_batch_writes_nothing(tmp_path):
    store = tmp_path / "a.jsonl"
    assert append_batch(store, []).appended == 0 and not store.exists()
    append_batch(store, [{"traceId": "t1"}])
    assert json.loads(store.read_bytes()) == {"traceId": "t1"}
    assert Path(store).stat().st_size == len(b'{"traceId":"t1"}\n')


def test_the_calibration_commands_treat_a_cut_off_line_the_same_way(tmp_path, capsys):
    from evalkit.calibration import read_labels
    from evalkit.cli import main

    table = tmp_path / "verdicts.csv"
    table.write_text("trace_id,result\n1,pass\n2,fail\n", encoding="utf-8")
    verdicts = tmp_path / "verdicts.jsonl"
    args = ["verdicts", "import", str(table), "--into", str(verdicts), "--criterion", "diet", "--id-col",
            "trace_id", "--result-col", "result"]
    assert main(args) == 0
    intact = verdicts.read_bytes()
    verdicts.write_bytes(intact + b'{"criterionId":"di')
    capsys.readouterr()
    assert main(args) == 0  # nothing new: the cut-off line is left out, and said so
    assert f"{verdicts}: line 3, cut off by an interrupted write, was left out" in capsys.readouterr().err
    table.write_text("trace_id,result\n1,pass\n2,fail\n3,pass\n", encoding="utf-8")
    assert main(args) == 0
    assert f"{verdicts}: line 3, cut off by an interrupted write, was dropped" in capsys.readouterr().err
    assert verdicts.read_bytes().startswith(intact) and verdicts.read_bytes().count(b"\n") == 3

    labels = tmp_path / "labels.jsonl"
    labels.write_bytes(line(human("1")) + line(human("2", "fail")) + line(human("3"))[:20])
    with pytest.raises(InputError, match=rf"^{labels}:3: line cut off by an interrupted write"):
        read_labels(labels)  # a caller that cannot be told is refused rather than left unaware
    notes: list[InputError] = []
    assert [lb.trace_id for lb in read_labels(labels, notes=notes)] == ["1", "2"]
    assert [n.line for n in notes] == [3]


def test_without_unnamed_files_the_staging_file_is_named_and_renamed(tmp_path, monkeypatch):
    from evalkit.io import append_only

    monkeypatch.setattr(append_only, "_open_unnamed", lambda folder, mode: None)  # no O_TMPFILE (macOS, NFS)
    store = tmp_path / "a.jsonl"
    append_batch(store, [note("t1")])
    append_batch(store, [note("t2")])
    assert store.read_bytes() == line(note("t1")) + line(note("t2"))
    assert [p.name for p in tmp_path.iterdir()] == ["a.jsonl"]


def test_a_complete_last_line_with_duplicate_keys_is_an_error_not_a_cut(tmp_path):
    store = tmp_path / "a.jsonl"
    store.write_bytes(line(note("t1")) + b'{"traceId":"t2","traceId":"t3","annotator":"a","at":"x","label":"pass"}')
    with pytest.raises(InputError, match=rf"^{store}:2: duplicate key 'traceId'"):
        read_store(store)
