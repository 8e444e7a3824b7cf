from collections import Counter
from pathlib import Path

import pytest

from evalkit.errors import InputError
from evalkit.traces import detect_format, load

FIXTURES = Path(__file__).parent / "fixtures"


def test_api_trace_builds_the_tree_and_orders_siblings_by_start_time():
    (trace,) = load(FIXTURES / "langfuse_api_trace.json")
    assert trace.id == "lf-trace-1"
    assert trace.name == "weather-agent"
    assert [o.id for o in trace.observations] == ["o-agent", "o-gen-1", "o-tool", "o-gen-2"]
    assert {o.parent_id for o in trace.observations[1:]} == {"o-agent"}


def test_api_trace_maps_types_names_usage_levels_and_scores():
    (trace,) = load(FIXTURES / "langfuse_api_trace.json")
    by_id = {o.id: o for o in trace.observations}
    tool = by_id["o-tool"]
    assert tool.type == "TOOL"  # a SPAN marked execute_tool is a tool run
    assert tool.name == "get_weather"
    assert tool.input == {"city": "Paris"} and tool.output == {"temp_c": 18, "sky": "sunny"}
    assert tool.metadata["spanName"] == "execute_tool get_weather"
    gen1 = by_id["o-gen-1"]
    assert gen1.usage == {"input": 100, "output": 12, "total": 112}
    assert gen1.level == "WARNING" and gen1.status_message == "slow response"
    assert by_id["o-gen-2"].usage == {"input": 120, "output": 30, "total": 150}
    assert trace.metadata["release"] == "v3"  # metadata given as a JSON string is parsed
    assert trace.metadata["langfuse"]["sessionId"] == "sess-9"
    assert trace.metadata["scores"] == [
        {"comment": "good", "dataType": "NUMERIC", "name": "helpfulness", "value": 0.9}]


def test_explicit_null_and_omitted_payloads_stay_distinct():
    (trace,) = load(FIXTURES / "langfuse_api_trace.json")
    by_id = {o.id: o for o in trace.observations}
    assert by_id["o-gen-1"].has_input and by_id["o-gen-1"].input is None
    assert not by_id["o-agent"].has_input and not by_id["o-agent"].has_output
    dumped = by_id["o-gen-1"].to_json_obj()
    assert dumped["input"] is None
    assert "input" not in by_id["o-agent"].to_json_obj()


def test_ui_download_takes_the_trace_id_from_observations():
    (trace,) = load(FIXTURES / "langfuse_ui_download.json")
    assert trace.id == "lf-ui-7"
    assert [o.type for o in trace.observations] == ["RETRIEVER", "GENERATION"]
    assert trace.observations[0].level == "ERROR"
    assert not trace.observations[1].has_input


def test_legacy_export_does_not_count_repeated_observations_twice():
    (trace,) = load(FIXTURES / "langfuse_legacy.json")
    assert trace.id == "lf-legacy-3"
    assert Counter(o.type for o in trace.observations) == {"EVENT": 1, "GUARDRAIL": 1}
    assert trace.metadata["team"] == "support"


def test_sniffing_places_each_langfuse_shape():
    for name in ("langfuse_api_trace.json", "langfuse_ui_download.json", "langfuse_legacy.json"):
        assert detect_format(FIXTURES / name) == "langfuse"


def test_a_list_of_api_traces_gives_one_trace_each(tmp_path):
    text = (FIXTURES / "langfuse_api_trace.json").read_text()
    other = text.replace("lf-trace-1", "lf-trace-2")
    path = tmp_path / "many.json"
    path.write_text(f"[{text}, {other}]")
    assert [t.id for t in load(path)] == ["lf-trace-1", "lf-trace-2"]


def test_an_observation_without_id_is_a_located_error(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[{"id": "t", "observations": [{"type": "SPAN", "traceId": "t"}]}]')
    with pytest.raises(InputError) as err:
        load(path, "langfuse")
    assert err.value.render() == f"{path}: [0].observations[0].id: required field is missing"


def test_a_bad_timestamp_names_the_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "t", "observations": [{"id": "a", "type": "SPAN", "traceId": "t"}]}\n'
                    '{"id": "u", "observations": [{"id": "a", "type": "SPAN", "traceId": "u", '
                    '"startTime": "yesterday"}]}\n')
    with pytest.raises(InputError) as err:
        load(path)
    assert err.value.file == str(path) and err.value.line == 2
    assert err.value.path == "observations[0].startTime"
