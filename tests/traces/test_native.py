from pathlib import Path

import pytest

from evalkit.errors import InputError
from evalkit.traces import load, write_jsonl, write_parquet
from evalkit.traces.native import trace_line

FIXTURES = Path(__file__).parent / "fixtures"


def _all_fixture_traces():
    return [*load(FIXTURES / "langfuse_api_trace.json"), *load(FIXTURES / "langfuse_ui_download.json"),
            *load(FIXTURES / "chat_logs.jsonl")]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_native_files_round_trip_exactly(tmp_path, suffix):
    traces = _all_fixture_traces()
    path = tmp_path / f"traces{suffix}"
    (write_jsonl if suffix == ".jsonl" else write_parquet)(traces, path)
    back = load(path)
    assert [trace_line(t) for t in back] == [trace_line(t) for t in traces]
    # absent and explicit-null payloads survive the round trip
    gen1 = next(o for t in back for o in t.observations if o.id == "o-gen-1")
    agent = next(o for t in back for o in t.observations if o.id == "o-agent")
    assert gen1.has_input and gen1.input is None
    assert not agent.has_input


def test_jsonl_rewrite_is_byte_identical(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_jsonl(_all_fixture_traces(), a)
    write_jsonl(load(a), b)
    assert a.read_bytes() == b.read_bytes()


def test_a_trace_without_observations_survives_parquet(tmp_path):
    from evalkit.contracts.trace import Trace

    path = tmp_path / "t.parquet"
    write_parquet([Trace(id="empty", observations=[], output=None)], path)
    (back,) = load(path)
    assert back.id == "empty" and back.observations == [] and "output" in back.model_fields_set


def test_malformed_native_line_names_file_line_and_field(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"id": "a", "observations": []}\n'
                    '{"id": "b", "observations": [{"id": "x", "type": "BOGUS"}]}\n')
    with pytest.raises(InputError) as err:
        load(path)
    assert err.value.render().startswith(f"{path}:2: observations[0].type: ")


def test_unknown_shape_names_the_formats_tried(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"hello": "world"}')
    with pytest.raises(InputError, match="tried: evalkit, langfuse, otel, anthropic, claude-code, codex, gemini-cli, inspect, atif, openai-chat"):
        load(path)
