"""analysis.breakdown: modes tagged together, modes by a dataset field, a note when the field is missing."""

from __future__ import annotations

import pytest
from analysis_builders import make_trace, note

from evalkit.analysis import mode_cooccurrence, modes_by
from evalkit.analysis.breakdown import breakdown_gap, metadata_fields
from evalkit.contracts.trace import Trace
from evalkit.errors import InputError


def test_cooccurrence_counts_modes_tagged_together():
    labels = [note("a", "fail", ("x", "y")), note("b", "fail", ("x", "y")), note("c", "fail", ("x",)),
              note("d", "fail", ("y", "z"))]
    table = mode_cooccurrence(labels)
    rows = {(r["mode"], r["other"]): (r["both"], r["share_of_mode"]) for r in table.iter_rows(named=True)}
    assert rows[("x", "y")] == (2, pytest.approx(2 / 3))
    assert rows[("y", "x")] == (2, pytest.approx(2 / 3))
    assert rows[("z", "y")] == (1, 1.0)
    assert ("x", "z") not in rows
    assert table["both"].to_list() == sorted(table["both"].to_list(), reverse=True)


def test_modes_broken_down_by_a_metadata_field():
    traces = [make_trace(f"r{i}", metadata={"intent": "refund"}) for i in range(4)]
    traces += [make_trace(f"s{i}", metadata={"intent": "status"}) for i in range(2)]
    labels = [note("r0", "fail", ("bad-args",)), note("r1", "fail", ("bad-args",)), note("r2"), note("r3", "defer"),
              note("s0", "fail", ("hallucination",)), note("s1")]
    table = modes_by(labels, traces, "intent")
    rows = {(r["group"], r["mode"]): (r["count"], r["reviewed"], r["rate"]) for r in table.iter_rows(named=True)}
    assert rows[("refund", "bad-args")] == (2, 3, pytest.approx(2 / 3))
    assert rows[("refund", "hallucination")] == (0, 3, 0.0)
    assert rows[("status", "hallucination")] == (1, 2, 0.5)
    with pytest.raises(InputError, match="not among the traces given"):
        modes_by([note("elsewhere", "fail", ("x",))], traces, "intent")


def _traces():
    return [Trace(id="a", metadata={"channel": "sms", "source": "chat"}, observations=[]),
            Trace(id="b", metadata={"channel": "email"}, observations=[]),
            Trace(id="c", observations=[])]


def test_metadata_fields_are_counted_most_common_first():
    assert metadata_fields(_traces()) == {"channel": 2, "source": 1}


def test_a_missing_field_gets_a_note_naming_the_fields_present_and_how_to_choose():
    note = breakdown_gap(_traces(), "intent")
    assert note == ("No trace has metadata field 'intent', so the breakdown by it is left out; their metadata "
                    "fields (traces carrying each): channel (2), source (1); features: name, tools, tool_calls, "
                    "has_error. Choose one in the subject file: parameters: {01_error_analysis: {by: FIELD}}.")


def test_a_present_field_or_a_feature_needs_no_note():
    assert breakdown_gap(_traces(), "channel") is None
    assert breakdown_gap(_traces(), "metadata.source") is None
    assert breakdown_gap(_traces(), "tools") is None
    assert "they carry no metadata" in breakdown_gap([Trace(id="x", observations=[])], "intent")
