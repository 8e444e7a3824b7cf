"""The runner's fast paths hold to what they replace: the external sort, the journal line, the reply parser."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.contracts.judge import JudgeOutput
from evalkit.errors import InputError
from evalkit.io.sorted_spill import SortedSpill
from evalkit.judge.output import parse_judge_output
from evalkit.judge.run_outputs import FinishedItems, journal_line, record_line
from tests.judge.servers import judge_output


def _rows(n, seed=0):
    rng = random.Random(seed)
    rows = [(f"c{rng.randrange(3)}", f"t{i:05d}-{'é' if i % 7 == 0 else ''}", rng.randrange(3), "pass",
             f"verdict {i}", f"run {i}") for i in range(n)]
    rng.shuffle(rows)
    return rows


@pytest.mark.parametrize("order", ["shuffled", "sorted", "sorted then not"])
@pytest.mark.parametrize(("n", "run_rows", "fan_in"), [(0, 8, 4), (5, 8, 4), (500, 8, 4), (2000, 64, 3)])
def test_spill_gives_back_every_row_sorted_holding_at_most_a_run_in_memory(n, run_rows, fan_in, order):
    spill = SortedSpill(3, run_rows=run_rows, block_rows=5, fan_in=fan_in)
    rows = _rows(n)
    if order != "shuffled":
        rows.sort(key=lambda r: r[:3])
    if order == "sorted then not":  # in order for a while (one growing run), then an early key
        rows = rows[len(rows) // 3:] + rows[:len(rows) // 3]
    for row in rows:
        spill.add(row)
        assert len(spill._rows) < run_rows and len(spill._runs) < fan_in
    if order == "sorted":
        assert len(spill._runs) <= 1  # one run, read straight through
    try:
        assert list(spill.sorted()) == sorted(rows, key=lambda r: r[:3])
    finally:
        spill.close()


def test_rows_of_any_size_are_held_and_merged_within_a_byte_bound():
    rng = random.Random(5)
    rows = [(f"k{rng.randrange(50):03d}", i, b"x" * rng.choice([10, 10, 10, 3000])) for i in range(400)]
    spill = SortedSpill(2, run_rows=10_000, block_rows=10_000, fan_in=4, row_size=lambda r: len(r[2]),
                        run_bytes=8000, block_bytes=2000)
    try:
        for row in rows:
            spill.add(row)
            assert spill._bytes < 8000 and sum(len(r[2]) for r in spill._rows) == spill._bytes
        extents = [extent for run in spill._runs for extent in run]
        assert len(spill._runs) < 4 and len(extents) > 10  # runs ended by bytes, then merged by fan-in
        assert max(length for _, length in extents) < 2000 + 3000 + 200  # a block: the bound and one more row
        assert list(spill.sorted()) == sorted(rows)
    finally:
        spill.close()


def test_a_full_disk_is_an_error_that_says_where_and_what_to_do(monkeypatch, tmp_path):
    import errno
    import os
    import tempfile

    def full(*_):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    spill = SortedSpill(3, run_rows=4)
    monkeypatch.setattr(os, "pwrite", full)
    try:
        with pytest.raises(InputError) as info:
            for row in _rows(10):
                spill.add(row)
    finally:
        spill.close()
    assert info.value.message == (f"cannot write the temporary sort file in {tmp_path} (No space left on device): "
                                  "free space there, or set TMPDIR to a folder with room")


def test_finished_items_write_sorted_files_and_refuse_an_item_given_twice(tmp_path):
    items = FinishedItems(run_rows=16)
    rows = [(c, t, r, "pass", f'{{"v":"{c}{t}{r}"}}\n', f'{{"r":"{c}{t}{r}"}}\n') for c, t, r, *_ in _rows(300)]
    for row in rows:
        items.add(*row)
    written, _ = items.write(tmp_path / "v.jsonl", tmp_path / "r.jsonl", 1, None)
    items.close()
    expected = sorted(rows, key=lambda r: r[:3])
    assert written == 300
    assert (tmp_path / "v.jsonl").read_text() == "".join(r[4] for r in expected)
    assert (tmp_path / "r.jsonl").read_text() == "".join(r[5] for r in expected)

    items = FinishedItems(run_rows=16)
    for row in [*rows, rows[123]]:
        items.add(*row)
    with pytest.raises(InputError, match=f"criterion '{rows[123][0]}' on trace '{rows[123][1]}' was given twice"):
        items.write(tmp_path / "v2.jsonl", tmp_path / "r2.jsonl", 1, None)
    items.close()
    assert not (tmp_path / "v2.jsonl").exists()  # nothing half-written


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=200, deadline=None)
@given(c=_text, t=_text, r=st.integers(0, 9), result=st.sampled_from(["pass", "fail", "uncertain"]),
       critique=_text, cost=st.one_of(st.none(), st.floats(0, 1)))
def test_journal_line_is_record_line_of_the_journal_record(c, t, r, result, critique, cost):
    verdict = {"criterionId": c, "traceId": t, "result": result, "confidence": 0.5, "critique": critique,
               "refs": [], "assumptions": []}
    run = {"criterionId": c, "traceId": t, "repeat": r, "result": result, "costUsd": cost}
    record = {"criterionId": c, "traceId": t, "repeat": r, "promptDigest": "sha256:ab", "result": result,
              "verdict": verdict, "run": run}
    line = journal_line(c, t, r, "sha256:ab", result, record_line(verdict), record_line(run))
    assert line == record_line(record)
    assert json.loads(line) == record


@pytest.mark.parametrize("reply", [
    json.dumps(judge_output("pass", "x")),
    json.dumps(judge_output("uncertain", "x") | {"confidence": 1}),
    json.dumps(judge_output("fail", "x") | {"refs": [{"obs": "o1", "path": "output", "value": "v"}]}),
])
def test_reply_parser_fast_path_equals_json_then_validate(reply):
    assert parse_judge_output(reply) == JudgeOutput.model_validate(json.loads(reply))


@pytest.mark.parametrize(("reply", "message"), [
    ("not json", "reply is not JSON"),
    ('{"critique": "", "result": "maybe"}', "critique"),
])
def test_reply_parser_still_names_what_is_wrong(reply, message):
    with pytest.raises(InputError, match=message):
        parse_judge_output(reply)



@settings(max_examples=300, deadline=None)
@given(c=_text, t=_text, r=st.integers(0, 9), result=st.sampled_from(["pass", "fail", "uncertain"]),
       tokens=st.tuples(st.one_of(st.none(), st.integers(0, 10**7)), st.one_of(st.none(), st.integers(0, 10**7))),
       cost=st.one_of(st.none(), st.floats(0, 10), st.floats(0, 1e-4), st.just(1e-5)),
       mode=st.sampled_from(["json_schema", "json_object", "prompt", "tool", "scripted"]),
       model=_text.filter(bool), temperature=st.sampled_from([0.0, 0]), judge=st.one_of(st.none(), _text))
@pytest.mark.slow
def test_cached_run_line_is_record_line_of_the_run_record(c, t, r, result, tokens, cost, mode, model, temperature,
                                                          judge):
    from evalkit.judge.run_outputs import cached_run_line

    record = {"criterionId": c, "traceId": t, "repeat": r, "provider": "openai", "model": model,
              "temperature": float(temperature), "promptDigest": "sha256:ab", "result": result,
              "inputTokens": tokens[0], "outputTokens": tokens[1], "attempts": 0, "cached": True, "costUsd": cost,
              "structuredOutput": mode}
    if judge is not None:
        record["judgeDigest"] = judge
    line = cached_run_line("openai", model, temperature)(c, t, r, "sha256:ab", result, *tokens, cost, mode, judge)
    assert line == record_line(record)


_float = st.one_of(st.floats(0, 1e-4), st.floats(-1e-3, 1e-3), st.sampled_from([1e-5, 2.4e-05, 5e-324, 0.0, -0.0]),
                   st.floats(0, 10))


@settings(max_examples=400, deadline=None)
@given(cost=_float, temperature=_float, confidence=_float,
       text=st.one_of(_text, st.sampled_from(["1e-5", "cost 0.00001", "3e-07 and 0.0000"])))
def test_record_line_is_canonical_line_with_small_floats_anywhere(cost, temperature, confidence, text):
    from evalkit.io.canonical import canonical_line

    run = {"criterionId": text, "costUsd": cost, "temperature": temperature, "attempts": 1,
           "verdict": {"confidence": confidence, "critique": text}}
    assert record_line(run) == canonical_line(run)
