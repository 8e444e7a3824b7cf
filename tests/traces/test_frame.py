"""What the trace table says about data a source did not record: said in words, never counted as zero."""

from evalkit.contracts.trace import Observation, Trace
from evalkit.traces.frame import data_gaps, extreme_traces, per_trace, to_frame, trace_stats


def _chat(trace_id: str, turns: int) -> Trace:
    """A chat-log trace as an importer writes it: no times, tokens, model or level."""
    obs = [Observation(id=f"{trace_id}-{i}", type="GENERATION", name="assistant", output="ok") for i in range(turns)]
    return Trace(id=trace_id, observations=obs)


def _timed(trace_id: str, seconds: float, tokens: int | None) -> Trace:
    usage = {"input": tokens, "output": 1} if tokens is not None else None
    return Trace(id=trace_id, observations=[
        Observation(id=f"{trace_id}-g", type="GENERATION", name="llm", model="m", usage=usage,
                    start_time="2026-01-01T00:00:00Z", end_time=f"2026-01-01T00:00:{seconds:06.3f}Z"),
        Observation(id=f"{trace_id}-t", type="TOOL", name="lookup", level="DEFAULT"),
    ])


def test_traces_without_timing_tokens_levels_or_tools_say_each_gap():
    traces = [_chat("a", 2), _chat("b", 3)]
    stats = trace_stats(to_frame(traces), n_traces=2)
    assert stats["coverage"] == {"observations": 5, "timed": 0, "traces_timed": 0, "generations": 5,
                                 "generations_with_tokens": 0, "generations_with_model": 0, "with_level": 0,
                                 "tools": 0}
    gaps = data_gaps(stats)
    assert gaps == [
        "No observation has start and end times: latency and trace duration are left out.",
        "No generation records token usage: token counts are left out.",
        "No generation names its model: models are not counted.",
        "No observation has a level (DEFAULT, WARNING, ERROR): errors cannot be counted from the traces alone.",
        "No TOOL observation: the agent called no tools, or the source does not record tool calls.",
    ]


def test_partial_coverage_is_said_with_its_share_and_complete_data_has_no_gap():
    stats = trace_stats(to_frame([_timed("a", 2.5, 10), _timed("b", 1.0, None)]))
    assert data_gaps(stats) == [
        "Only 2 of 4 observations have start and end times: latency and durations cover those alone.",
        "Only 1 of 2 generations record token usage: token figures cover those alone.",
    ]
    assert data_gaps(trace_stats(to_frame([_timed("a", 2.5, 10)]))) == [
        "Only 1 of 2 observations have start and end times: latency and durations cover those alone."]


def test_unknown_tokens_and_durations_stay_null_not_zero():
    table = per_trace(to_frame([_chat("a", 2)]))
    assert table["tokens"].to_list() == [None] and table["duration_ms"].to_list() == [None]


def test_slowest_traces_need_timing_and_keep_only_columns_the_data_has():
    chats = to_frame([_chat("a", 2), _chat("b", 5), _chat("c", 5)])
    assert extreme_traces(chats, "duration_s").height == 0
    longest = extreme_traces(chats, "observations", n=2)
    assert longest.columns == ["trace_id", "observations", "tool_calls"]
    assert longest["trace_id"].to_list() == ["b", "c"]  # ties broken by id
    timed = extreme_traces(to_frame([_timed("a", 2.5, 10), _timed("b", 12.34, 100)]), "duration_s")
    assert timed.columns == ["trace_id", "observations", "tool_calls", "errors", "duration_s", "tokens"]
    assert timed.rows() == [("b", 2, 1, 0, 12.3, 101), ("a", 2, 1, 0, 2.5, 11)]
