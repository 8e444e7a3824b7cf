"""Native JSONL cut into runs of lines: read apart, they give the traces and errors of the whole file."""

from __future__ import annotations

import itertools

import pytest

from evalkit.errors import InputError
from evalkit.sample_subject.agent import simulate_traces
from evalkit.traces import is_native_jsonl, iter_traces, line_ranges, read_line_range, write_jsonl


@pytest.mark.parametrize("size", [1, 4, 10, 100])
@pytest.mark.parametrize("ending", ["\n", ""])
def test_ranges_cover_the_file_and_read_back_its_traces(tmp_path, size, ending):
    src = tmp_path / "traces.jsonl"
    write_jsonl(simulate_traces(seed=5, count=23), src)
    text = src.read_text()
    text = text.replace("\n", "\n\n  \n", 3)  # blank lines, skipped by both readers
    src.write_text(text[:-1] + ending)
    ranges = list(line_ranges(src, size))
    assert ranges[0].start == 0 and ranges[-1].end == src.stat().st_size
    assert all(a.end == b.start and a.first_line + a.lines == b.first_line
               for a, b in zip(ranges, ranges[1:], strict=False))
    assert [t for r in ranges for t in read_line_range(r)] == list(iter_traces(src))


def test_a_bad_line_fails_with_the_message_of_the_whole_file_reader(tmp_path):
    src = tmp_path / "traces.jsonl"
    write_jsonl(simulate_traces(seed=5, count=12), src)
    rows = src.read_text().splitlines()
    rows[8] = rows[8].replace('"type":"TOOL"', '"type":"NOPE"', 1)
    rows[10] = rows[10][:-7]  # truncated JSON, never reached
    src.write_text("\n".join(rows) + "\n")
    with pytest.raises(InputError) as whole:
        list(iter_traces(src))
    with pytest.raises(InputError) as apart:
        for r in line_ranges(src, 4):
            read_line_range(r)
    assert apart.value.render() == whole.value.render()
    assert whole.value.line == 9


def test_only_native_jsonl_is_read_by_ranges(tmp_path):
    native = tmp_path / "t.jsonl"
    write_jsonl(simulate_traces(seed=1, count=2), native)
    assert is_native_jsonl(native)
    assert not is_native_jsonl(native, "otel")
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n')
    assert not is_native_jsonl(chat)
    (tmp_path / "empty.jsonl").write_text("")
    assert not is_native_jsonl(tmp_path / "empty.jsonl")


def test_a_byte_order_mark_is_refused_like_the_whole_file_reader(tmp_path):
    src = tmp_path / "bom.jsonl"
    write_jsonl(simulate_traces(seed=1, count=2), src)
    src.write_bytes(b"\xef\xbb\xbf" + src.read_bytes())
    with pytest.raises(InputError, match="byte-order mark"):
        list(line_ranges(src, 5))


@pytest.mark.parametrize("max_bytes", [1, 700, 5_000, 10**9])
def test_ranges_cut_by_bytes_end_at_line_breaks_and_read_back_the_file(tmp_path, max_bytes):
    src = tmp_path / "traces.jsonl"
    write_jsonl(simulate_traces(seed=5, count=23), src)
    lines = src.read_bytes().splitlines(keepends=True)
    ranges = list(line_ranges(src, 10, max_bytes))
    assert [t for r in ranges for t in read_line_range(r)] == list(iter_traces(src))
    assert sum(r.lines for r in ranges) == len(lines) and all(1 <= r.lines <= 10 for r in ranges)
    for r in ranges[:-1]:  # each ends at the first line break at or past max_bytes, or at 10 lines
        own = lines[r.first_line - 1:r.first_line - 1 + r.lines]
        ends = list(itertools.accumulate(len(line) for line in own))
        assert ends[-1] == r.end - r.start
        assert r.lines == 10 or (ends[-1] >= max_bytes and (r.lines == 1 or ends[-2] < max_bytes))
    if max_bytes == 1:
        assert len(ranges) == len(lines)
