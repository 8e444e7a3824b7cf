"""Every trace reader, fed damaged files: a clean InputError naming the file, or traces; never a traceback.

Each case starts from a real-shaped file of one format, damages it (a field replaced by a value of
another type, a field removed, a duplicate key, the text cut short) and reads it three ways: sniffed,
with ``--format`` forced, and skipping invalid records. Whatever is read must also write back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.errors import InputError
from evalkit.traces import iter_traces, load, write_jsonl
from evalkit.traces.native import trace_line

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures"

_NATIVE = {"id": "tr-1", "name": "run", "input": {"q": "hi"}, "observations": [
    {"id": "o1", "type": "GENERATION", "name": "llm", "startTime": "2026-01-01T00:00:00Z",
     "endTime": "2026-01-01T00:00:01Z", "model": "m", "usage": {"input": 3, "output": 2},
     "input": [{"role": "user", "content": "hi"}], "output": "hello"},
    {"id": "o2", "type": "TOOL", "name": "lookup", "parentId": "o1", "input": {"k": 1}, "output": None}]}

_ANTHROPIC = {"version": 1, "interactions": [
    {"request": {"method": "POST", "uri": "https://api.anthropic.com/v1/messages",
                 "parsed_body": {"model": "claude", "max_tokens": 10,
                                 "messages": [{"role": "user", "content": [{"type": "text", "text": "rate?"}]}]}},
     "response": {"status": {"code": 200}, "parsed_body": {
         "id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
         "content": [{"type": "text", "text": "checking"},
                     {"type": "tool_use", "id": "tu_1", "name": "rate", "input": {"pair": "USDEUR"}}],
         "usage": {"input_tokens": 5, "output_tokens": 3}}}},
    {"request": {"method": "POST", "uri": "https://api.anthropic.com/v1/messages",
                 "parsed_body": {"model": "claude", "max_tokens": 10, "messages": [
                     {"role": "user", "content": [{"type": "text", "text": "rate?"}]},
                     {"role": "assistant", "content": [{"type": "tool_use", "id": "tu_1", "name": "rate",
                                                        "input": {"pair": "USDEUR"}}]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1",
                                                   "content": "0.92"}]}]}},
     "response": {"status": {"code": 200}, "parsed_body": {
         "id": "msg_2", "type": "message", "role": "assistant", "model": "claude",
         "content": [{"type": "text", "text": "0.92"}], "usage": {"input_tokens": 9, "output_tokens": 1}}}},
]}


def _fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


SEEDS: dict[str, list[tuple[str, Any]]] = {
    "evalkit": [("trace.jsonl", _NATIVE)],
    "langfuse": [("t.json", _fixture("langfuse_api_trace.json")), ("t.json", _fixture("langfuse_legacy.json")),
                 ("t.json", _fixture("langfuse_ui_download.json"))],
    "otel": [("t.json", _fixture(name)) for name in ("otlp_genai.json", "jaeger.json", "tempo_batches.json",
                                                     "openinference_spans.json", "anyagent_style.json")],
    "openai-chat": [("chat.jsonl", json.loads((FIXTURES / "chat_logs.jsonl").read_text().splitlines()[0]))],
    "anthropic": [("cassette.json", _ANTHROPIC)],
}

AWKWARD = st.sampled_from([
    None, True, False, 0, -1, 5, 1.5, 10**30, -(10**25), "", "x", "NaN", "0x1f", [], {}, [1, "a"], {"a": 1},
    [{"key": None, "value": {"stringValue": "v"}}], {"values": 5}, {"kvlistValue": {"values": [{"value": 1}]}},
    {"arrayValue": [1]}, {"doubleValue": "Infinity"}, {"intValue": "1e400"}, "\ud7ff\ue000", "a\u0000b",
])


def _nodes(value: Any, path: tuple = ()) -> list[tuple]:
    """Every path into ``value`` (keys and indexes), the root included."""
    out = [path]
    if isinstance(value, dict):
        for key, inner in value.items():
            out += _nodes(inner, (*path, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            out += _nodes(inner, (*path, i))
    return out


def _replaced(value: Any, path: tuple, new: Any, delete: bool) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        copy = dict(value)
        if delete and not rest:
            copy.pop(head, None)
        else:
            copy[head] = _replaced(value[head], rest, new, delete)
        return copy
    copy = list(value)
    if delete and not rest:
        del copy[head]
    else:
        copy[head] = _replaced(value[head], rest, new, delete)
    return copy


@st.composite
def damaged_files(draw: st.DrawFn, fmt: str) -> tuple[str, bytes]:
    name, seed = draw(st.sampled_from(SEEDS[fmt]))
    value = seed
    for _ in range(draw(st.integers(1, 3))):
        nodes = _nodes(value)
        path = draw(st.sampled_from(nodes))
        value = _replaced(value, path, draw(AWKWARD), delete=bool(path) and draw(st.booleans()))
    text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    damage = draw(st.sampled_from(["none", "none", "duplicate-key", "cut"]))
    if damage == "duplicate-key" and text.startswith("{") and len(text) > 2:
        text = '{"id": "tr-EVIL", ' + text[1:]
    elif damage == "cut":
        text = text[:draw(st.integers(0, max(0, len(text) - 1)))]
    return name, text.encode("utf-8", "surrogatepass")


def _read_every_way(path: Path, fmt: str, out_dir: Path) -> None:
    for forced, skip in (("auto", False), (fmt, False), (fmt, True)):
        skipped: list[Any] = []
        try:
            traces = list(iter_traces(path, forced, on_invalid=skipped.append if skip else None))
        except InputError as exc:
            assert exc.file == str(path), exc.render()
            continue
        assert all(s.error.file == str(path) for s in skipped)
        out = out_dir / "back.jsonl"
        try:
            write_jsonl(traces, out)
        except InputError as exc:  # the contract reads the text "Infinity" as a number; refused on writing
            assert "not finite" in exc.message, exc.render()
            continue
        assert [trace_line(t) for t in load(out)] == [trace_line(t) for t in traces]


@pytest.mark.parametrize("fmt", list(SEEDS))
def test_damaged_files_give_a_clean_error_or_traces(tmp_path_factory: pytest.TempPathFactory, fmt: str) -> None:
    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(damaged_files(fmt))
    def check(case: tuple[str, bytes]) -> None:
        name, data = case
        folder = tmp_path_factory.mktemp(fmt)
        path = folder / name
        path.write_bytes(data)
        _read_every_way(path, fmt, folder)

    check()
