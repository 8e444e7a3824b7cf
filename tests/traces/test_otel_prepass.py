"""The OTel importer's first pass (is the file sorted by trace id?) and the short path's helpers give
what their general counterparts give, spans the first pass cannot read included."""

import json
import random

import pytest

from evalkit.traces import iter_traces, otel_sorted
from evalkit.traces.otel_ids import _HEX_IDS, is_hex, is_hex_id, plain_span_times, plain_start, plain_time
from evalkit.traces.otel_sorted import unsorted_reason


def _span(trace_id, span_id, **extra):
    return {"traceId": trace_id, "spanId": span_id, "name": "op", "startTimeUnixNano": "1767225600000000000",
            "endTimeUnixNano": "1767225600005000000", **extra}


def _line(*spans):
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}) + "\n"


def _write(tmp_path, *lines):
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(lines))
    return path


def test_a_file_sorted_over_and_within_lines_is_sorted(tmp_path):
    path = _write(tmp_path, _line(_span("a" * 32, "1" * 16), _span("a" * 32, "2" * 16)), "\n",
                  json.dumps([_span("b" * 32, "3" * 16), _span("c" * 32, "4" * 16)]) + "\n",
                  _line(_span("c" * 32, "5" * 16)))
    assert unsorted_reason(path) is None
    assert [t.id for t in iter_traces(path, "otel")] == ["a" * 32, "b" * 32, "c" * 32]


def test_the_first_span_that_goes_back_is_named_within_a_line_and_across_lines(tmp_path):
    within = _write(tmp_path, _line(_span("b" * 32, "1" * 16)), _line(_span("c" * 32, "2" * 16),
                                                                       _span("a" * 32, "3" * 16)))
    assert unsorted_reason(within) == (f"is not sorted by trace id (line 2 goes back to trace {'a' * 32!r} "
                                       f"after trace {'c' * 32!r})")
    across = _write(tmp_path, _line(_span("b" * 32, "1" * 16)), _line(_span("a" * 32, "2" * 16)))
    assert unsorted_reason(across).startswith("is not sorted by trace id (line 2 goes back")


def test_a_span_the_first_pass_cannot_read_counts_where_it_stands_in_its_line(tmp_path):
    unreadable = {"spanID": "9" * 16, "traceID": "d" * 32, "operationName": "jaeger-style"}
    # Going back before the unreadable span: the file is not sorted, whatever comes after.
    back_first = _write(tmp_path, _line(_span("b" * 32, "1" * 16)),
                        _line(_span("a" * 32, "2" * 16), unreadable))
    assert unsorted_reason(back_first).startswith("is not sorted by trace id (line 2 goes back")
    # The unreadable span first: only the full read can tell, and the file is held whole.
    unsure_first = _write(tmp_path, _line(_span("b" * 32, "1" * 16)),
                          _line(unreadable, _span("a" * 32, "2" * 16)))
    assert unsorted_reason(unsure_first).startswith("may not be sorted by trace id (line 2 holds")
    not_json = _write(tmp_path, _line(_span("a" * 32, "1" * 16)), "{not json\n")
    assert unsorted_reason(not_json).startswith("may not be sorted by trace id (line 2 holds")


def test_is_hex_id_is_is_hex_for_strings_and_remembers_only_hex_ids():
    values = ["", "0", "00", "abcdefABCDEF0123456789", "0x1f", " ab", "ab ", "g1", "ab\n", "١٢", "é",
              5, None, b"ab", 1.5, ["ab"]]
    for value in values * 2:  # the second time from what was remembered, if anything
        assert is_hex_id(value) == (isinstance(value, str) and is_hex(value)), value
    assert all(isinstance(v, str) and is_hex(v) for v in _HEX_IDS)


def test_plain_span_times_are_plain_start_and_plain_time_together():
    rng = random.Random(7)
    texts = ["0", "1", "999999999", "1000000000", "1767225600000000000", "99999999999999999999999",
             "253402300799999999999", "253402300800000000000", "١٧٦٧٢٢٥٦٠٠٠٠٠٠٠٠٠٠٠", "17672256x0000000000",
             " 1767225600000000000", "", None, 1767225600000000000]
    texts += [str(rng.randrange(10 ** rng.randrange(1, 22))) for _ in range(300)]
    for start in texts:
        for end in rng.sample(texts, 8) + [start]:
            fused = plain_span_times(start, end)
            first, last = plain_start(start), plain_time(end)
            if fused is not None:
                assert fused == (first[0], first[1], last), (start, end)
            elif (isinstance(start, str) and isinstance(end, str) and len(start) >= 10 and len(end) >= 10
                  and start.isascii() and end.isascii() and first is not None and last is not None):
                raise AssertionError(f"plain_span_times left {start!r}, {end!r} to the general path")


def _exact_reason(path, monkeypatch):
    """What the first pass says when every line is parsed (the byte scan turned off)."""
    with monkeypatch.context() as patch:
        patch.setattr(otel_sorted, "_scanned_id", lambda raw: None)
        return unsorted_reason(path)


_LINK_BACK = {"links": [{"traceId": "0" * 32, "spanId": "7" * 16}]}
"""A link to a trace written before: a "traceId" key that is not the span's own."""


@pytest.mark.parametrize("case", [
    # one trace a line, compact and spaced, and a line of two traces
    [[("b", {})], [("c", {})]],
    [[("b", {}), ("c", {})], [("c", {})]],
    # going back, within a line and across lines
    [[("c", {})], [("b", {})]],
    [[("b", {}), ("a", {})]],
    # a link back to an earlier trace does not make a sorted file unsorted
    [[("b", {})], [("c", _LINK_BACK)]],
    [[("b", _LINK_BACK), ("c", _LINK_BACK)]],
    # "traceId" as an attribute's key or value, a plain attribute map, and a key spelt with an escape
    [[("b", {"attributes": [{"key": "traceId", "value": {"stringValue": "0" * 32}}]})], [("c", {})]],
    [[("b", {"attributes": {"traceId": "f" * 32}})], [("c", {})]],
    [[("c", {})], [("b", {"\\u0074raceId": "0"})]],
    # another spelling of the trace id, read only by the full read
    [[("c", {})], [("b", {"context": {"trace_id": "0" * 32}})]],
    # ids of other lengths and cases, and not hex
    [[("B" * 16, {})], [("b" * 16, {})]],
    [[("b", {})], [("zz", {})]],
])
@pytest.mark.parametrize("spaced", [False, True])
def test_the_byte_scan_says_what_parsing_every_line_says(tmp_path, monkeypatch, case, spaced):
    lines = []
    for spans in case:
        built = [_span(t * 32 if len(t) == 1 else t, f"{len(lines)}{i}".rjust(16, "0"), **extra)
                 for i, (t, extra) in enumerate(spans)]
        doc = {"resourceSpans": [{"scopeSpans": [{"spans": built}]}]}
        text = json.dumps(doc, separators=(", ", ": ") if spaced else (",", ":"))
        lines.append(text.replace('"\\\\u0074raceId"', '"\\u0074raceId"') + "\n")
    path = _write(tmp_path, *lines)
    assert unsorted_reason(path) == _exact_reason(path, monkeypatch)


def test_a_link_back_leaves_a_sorted_file_read_one_trace_at_a_time(tmp_path):
    path = _write(tmp_path, _line(_span("b" * 32, "1" * 16)), _line(_span("c" * 32, "2" * 16, **_LINK_BACK)))
    first, second = path.read_bytes().splitlines()
    assert otel_sorted._scanned_id(first) == "b" * 32  # one trace: found without parsing the line
    assert otel_sorted._scanned_id(second) is None  # two trace ids: the line is parsed
    assert unsorted_reason(path) is None
