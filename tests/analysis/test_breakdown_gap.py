"""A breakdown by a field the traces lack is skipped with a note that names the fields they do have."""

from evalkit.analysis.breakdown import breakdown_gap, metadata_fields
from evalkit.contracts.trace import Trace


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
