
"""The OTel importer's cheaper checks give what the full ones give: JSON texts written with Python's
default separators (tool arguments, GenAI messages) are read as the strict parser reads them, a model
call without any payload attribute skips the payload search, and usage and span ids are read as before."""

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.io.strict_json import _strict, loads_strict
from evalkit.traces.otel_attributes import MISSING, maybe_json, payloads, usage
from tests.strict_outcomes import outcome

# Strings made of the separators whose spaces the check takes out, so a text where one sits inside a
# string must not be read as the text without it.
TRICKY = st.text(alphabet=['"', ",", ":", " ", "{", "[", "a", "\\"], max_size=8)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**25), max_value=10**25) | TRICKY,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(TRICKY, children, max_size=3),
    max_leaves=10,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(VALUES, st.sampled_from(["", "dup", "dup-spaced-string", "long", "long-dup"]))
def test_texts_with_python_separators_read_as_the_strict_parser_reads_them(value: Any, twist: str) -> None:
    text = json.dumps(value)
    if twist == "dup":
        text = '{"k": ' + text + ', "k": 1}'
    elif twist == "dup-spaced-string":  # the duplicate hides after a string holding '": ' and ', "'
        text = '{"k": "a\\": b, \\"c", "x": ' + text + ', "k": 1}'
    elif twist == "long":  # past the size written back without padding
        text = '{"pad": "' + "p" * 2100 + '", "v": ' + text + "}"
    elif twist == "long-dup":
        text = '{"pad": "' + "p" * 2100 + '", "v": ' + text + ', "pad": 2}'
    assert outcome(loads_strict, text) == outcome(lambda t: _strict(t, None, None), text)


def test_tool_arguments_written_by_python_are_parsed_and_duplicates_kept_as_text():
    args = json.dumps({"query": "Paris, France", "note": 'say "a": b, "c"', "n": [1, 2], "o": {"p": None}})
    assert maybe_json(args) == json.loads(args)
    duplicate = '{"city": "Paris", "units": "C", "city": "Lyon"}'
    assert maybe_json(duplicate) == duplicate  # not strict JSON: kept as written, never the last key


def _sv(text):
    return {"stringValue": text}


def test_a_model_call_reads_each_payload_source_and_nothing_when_there_is_none():
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    assert payloads("GENERATION", chat, []) == (MISSING, MISSING)
    assert payloads("AGENT", dict(chat, **{"input.value": '{"q": 1}'}), []) == ({"q": 1}, MISSING)
    assert payloads("GENERATION", dict(chat, **{"gen_ai.output.messages": "[1, 2]"}), []) == (MISSING, [1, 2])
    assert payloads("GENERATION", dict(chat, **{"gen_ai.prompt.0.content": "hi"}), []) == (
        [{"content": "hi"}], MISSING)
    events = [{"name": "gen_ai.user.message", "attributes": {"content": "ev"}},
              {"name": "gen_ai.choice", "attributes": {"message": '{"role": "assistant"}'}}]
    assert payloads("GENERATION", chat, events) == ([{"role": "user", "content": "ev"}],
                                                    [{"message": {"role": "assistant"}}])
    vercel = {"ai.operationId": "ai.generateText.doGenerate", "ai.response.toolCalls": '[{"name": "f"}]'}
    assert payloads("GENERATION", vercel, []) == (MISSING, {"toolCalls": [{"name": "f"}]})
    vercel_text = dict(vercel, **{"ai.response.text": "done"})
    assert payloads("GENERATION", vercel_text, [])[1] == {"text": "done", "toolCalls": [{"name": "f"}]}


def test_usage_reads_only_the_counts_given_and_totals_them():
    assert usage({"gen_ai.usage.input_tokens": 3, "gen_ai.usage.output_tokens": 4}) == {
        "input": 3, "output": 4, "total": 7}
    assert usage({"gen_ai.usage.output_tokens": "5"}) == {"output": 5}
    # the first key that holds a number wins, whatever comes after
    assert usage({"llm.token_count.prompt": 9, "gen_ai.usage.input_tokens": "NaN",
                  "gen_ai.usage.prompt_tokens": 2, "ai.usage.totalTokens": 11}) == {"input": 2, "total": 11}
    assert usage({"gen_ai.usage.input_tokens": "Infinity", "other": 1}) is None


def test_only_a_hex_span_id_takes_the_short_path_and_span_ids_are_not_remembered():
    from evalkit.traces.otel_ids import _HEX_IDS
    from evalkit.traces.otel_spans import _plain_span
    from evalkit.traces.source import SourceValue

    sv = SourceValue({}, "f.jsonl", 1)
    span = {"traceId": "a" * 32, "name": "op", "startTimeUnixNano": "1767225600000000000",
            "endTimeUnixNano": "1767225600005000000"}
    for span_id in ["", "zz", 5, None, "0x1f", " ab", "ab\n", "AAAAAAAAAAE="]:
        assert _plain_span(sv, dict(span, spanId=span_id), "p", {}, None) is None, span_id
    plain = _plain_span(sv, dict(span, spanId="12AbCdef00000000"), "p", {}, None)
    assert plain.span_id == "12AbCdef00000000" and plain.trace_id == "a" * 32
    assert "12AbCdef00000000" not in _HEX_IDS and "a" * 32 in _HEX_IDS
