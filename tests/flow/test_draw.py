import pytest

from evalkit.contracts.trace import Trace
from evalkit.flow import aggregate_graph, build_flow_graph, draw_flow, to_networkx

ORDER = "order A-2291-XK shipped"


def agent_trace(trace_id, n_tools=3):
    obs = [{"type": "GENERATION", "name": "chat",
            "output": {"plan": ORDER, "unused": "never reaches anyone"}}]
    for i in range(n_tools):
        obs.append({"name": f"tool{i % 2}", "input": {"q": ORDER},
                    "output": {"r": f"result number {i} here"}})
    obs.append({"name": "delegate", "input": ORDER, "output": "brief for the researcher"})
    obs.append({"type": "AGENT", "name": "researcher", "input": "brief for the researcher " + ORDER})
    return Trace.model_validate({"id": trace_id, "observations": [
        {"id": f"o{i}", "type": "TOOL", **o} for i, o in enumerate(obs)]})


def test_svg_is_deterministic_and_shows_lanes(tmp_path):
    flow = build_flow_graph(agent_trace("t1"), dispatch_tool_names=["delegate"])
    a = draw_flow(flow, tmp_path / "a.svg")
    b = draw_flow(to_networkx(flow), tmp_path / "b.svg")
    assert a.read_bytes() == b.read_bytes()
    svg = a.read_text()
    assert svg.startswith("<?xml") and "<svg" in svg and "Date" not in svg
    assert "#e6550d" in svg and "#d62728" in svg  # handoff orange, unthreaded red
    for lane in ("chat", "tool0", "tool1", "delegate", "researcher"):
        assert f">{lane}<" in svg
    assert "flow of trace t1: 6 observations" in svg


def test_png_and_aggregate(tmp_path):
    graphs = [build_flow_graph(agent_trace(f"t{i}", n_tools=i + 1), dispatch_tool_names=["delegate"])
              for i in range(3)]
    png = draw_flow(aggregate_graph(graphs), tmp_path / "all.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    one = draw_flow(aggregate_graph(graphs), tmp_path / "all1.svg")
    two = draw_flow(aggregate_graph(graphs), tmp_path / "all2.svg")
    assert one.read_bytes() == two.read_bytes()


def test_edges_beyond_max_edges_are_counted_in_the_title(tmp_path):
    flow = build_flow_graph(agent_trace("t1"))
    pairs = len({(e[0], e[1]) for e in flow.edges})
    assert "connected pairs drawn" not in draw_flow(flow, tmp_path / "full.svg").read_text()
    capped = draw_flow(flow, tmp_path / "capped.svg", title="T", max_edges=2).read_text()
    assert f"T (2 of {pairs} connected pairs drawn)" in capped


def test_only_svg_and_png(tmp_path):
    with pytest.raises(ValueError, match=r"\.svg or \.png"):
        draw_flow(build_flow_graph(agent_trace("t")), tmp_path / "graph.pdf")
    assert not (tmp_path / "graph.pdf").exists()


def test_an_aggregate_with_grouped_names_says_so(tmp_path):
    graphs = [build_flow_graph(agent_trace(f"t{i}", n_tools=3)) for i in range(2)]
    svg = draw_flow(aggregate_graph(graphs, max_names=3), tmp_path / "grouped.svg").read_text()
    assert "(other: 3 names)" in svg and "2 names shown (those passing values on first), 3 grouped" in svg


def coding_session(turns: int):
    """A coding agent's session: a model call, then a tool whose result the next call reads, ``turns`` times."""
    obs, history = [], []
    for n in range(turns):
        command = f"run step {n} of the migration"
        obs.append({"type": "GENERATION", "name": "claude-code", "input": list(history),
                    "output": {"tool_use": {"command": command}}})
        result = f"output {n}: migrated table number {n} without errors"
        obs.append({"type": "TOOL", "name": ("Bash", "Read", "Edit")[n % 3], "input": {"command": command},
                    "output": result})
        obs.append({"type": "SPAN", "name": "hook.post_tool_use"})
        history += [command, result]
    return Trace.model_validate({"id": "session", "observations": [
        {"id": f"o{i}", **o} for i, o in enumerate(obs)]})


def test_a_long_trace_is_drawn_as_a_summary_with_a_lane_per_tool_and_the_full_graph_on_request(tmp_path):
    flow = build_flow_graph(coding_session(70))
    assert len(flow.nodes) == 210
    svg = draw_flow(flow, tmp_path / "summary.svg").read_text()
    assert "flow of trace session, summarised" in svg
    assert "140 of 210 observations in 40 steps (70 other spans left out)" in svg
    for lane in ("model calls", "Bash", "Read", "Edit"):
        assert f">{lane}<" in svg
    assert ">hook.post_tool_use<" not in svg and ">claude-code<" not in svg
    full = draw_flow(flow, tmp_path / "full.svg", full=True).read_text()
    assert "flow of trace session: 210 observations" in full and ">hook.post_tool_use<" in full
    assert len(svg) < len(full) / 3


def test_a_summary_draws_links_between_lanes_only_to_a_value_s_first_reader():
    from evalkit.flow.draw_summary import summarize_trace_graph

    summary = summarize_trace_graph(to_networkx(build_flow_graph(coding_session(70))))
    lanes = {n: d["name"] for n, d in summary.nodes(data=True)}
    links = [(lanes[a], lanes[b]) for a, b in summary.edges()]
    assert links and all(a != b for a, b in links)  # no model call -> model call history
    assert summary.number_of_nodes() <= 40 * 4
    assert sum(d["count"] for _, d in summary.nodes(data=True)) == 140
