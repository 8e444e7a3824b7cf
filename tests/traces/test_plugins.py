"""Trace-format plug-ins: the evalkit.trace_formats entry-point group and the example in examples/plugins."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.traces import FORMATS, ImportReport, Trace, TraceFormat, load, register_format
from evalkit.traces.plugins import load_plugin_formats

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins"


def _tool_meta(call_id, function, response_id, model="claude-test"):
    return {"function_name": function, "tool_call_id": call_id, "total_calls_in_response": 1,
            "model_response": {"id": response_id, "model": model, "object": "chat.completion",
                               "choices": [{"message": {"role": "assistant", "content": "On it.",
                                                        "tool_calls": [{"id": call_id}]}}],
                               "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}}


def _openhands_events():
    meta1 = _tool_meta("toolu_1", "execute_bash", "chatcmpl-1")
    meta2 = _tool_meta("toolu_2", "execute_bash", "chatcmpl-2")
    return [
        {"id": 0, "timestamp": "2025-01-20T20:29:13.000000", "source": "environment", "message": "",
         "observation": "agent_state_changed", "content": "", "extras": {"agent_state": "loading"}},
        {"id": 1, "timestamp": "2025-01-20T20:29:14.000000", "source": "user", "message": "Make an app",
         "action": "message", "args": {"content": "Make an app"}},
        {"id": 2, "timestamp": "2025-01-20T20:29:14.100000", "source": "user", "message": "No observation",
         "cause": 1, "observation": "null", "content": "", "extras": {}},
        {"id": 3, "timestamp": "2025-01-20T20:29:15.000000", "source": "agent", "message": "Running mkdir",
         "action": "run", "args": {"command": "mkdir app"}, "tool_call_metadata": meta1},
        {"id": 4, "timestamp": "2025-01-20T20:29:15.500000", "source": "agent", "message": "exit code 0",
         "cause": 3, "observation": "run", "content": "", "success": True,
         "extras": {"command": "mkdir app", "metadata": {"exit_code": 0}}, "tool_call_metadata": meta1},
        {"id": 5, "timestamp": "2025-01-20T20:29:16.000000", "source": "agent", "message": "Running server",
         "action": "run", "args": {"command": "python3 -m http.server"}, "tool_call_metadata": meta2},
        {"id": 6, "timestamp": "2025-01-20T20:29:46.000000", "source": "agent", "message": "exit code -1",
         "cause": 5, "observation": "run", "content": "Serving HTTP", "success": False,
         "extras": {"command": "python3 -m http.server", "metadata": {"exit_code": -1}},
         "tool_call_metadata": meta2},
        {"id": 7, "timestamp": "2025-01-20T20:29:50.000000", "source": "agent", "message": "Done",
         "action": "message", "args": {"content": "Your app is ready."}},
    ]


def _swe_agent_traj():
    history = [
        {"role": "system", "content": "You are an autonomous programmer.", "agent": "primary"},
        {"role": "user", "content": "Here is a demonstration.", "is_demo": "True", "agent": "primary"},
        {"role": "user", "content": "Fix issue 1458.", "agent": "primary"},
        {"role": "assistant", "content": "Let me look.\n```\nopen numpy_handler.py\n```", "agent": "primary"},
        {"role": "user", "content": "[File: numpy_handler.py]", "agent": "primary"},
        {"role": "assistant", "content": "Done.\n```\nsubmit\n```", "agent": "primary"},
    ]
    steps = [
        {"action": "open numpy_handler.py\n", "observation": "[File: numpy_handler.py]",
         "response": history[3]["content"], "thought": "Let me look.", "state": '{"open_file": "n/a"}\n'},
        {"action": "submit\n", "observation": "diff --git a/x b/x", "response": history[5]["content"],
         "thought": "Done.", "state": '{"open_file": "numpy_handler.py"}\n'},
    ]
    return {"environment": "swe_main", "trajectory": steps, "history": history,
            "info": {"exit_status": "submitted", "submission": "diff --git a/x b/x",
                     "model_stats": "{'total_cost': 1.5, 'tokens_sent': 1000, 'api_calls': 2}"}}


def _dist_info(root: Path, entry_points: str) -> None:
    """A minimal installed distribution declaring entry points, as pip would leave it."""
    info = root / "evalkit_agent_formats-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: evalkit-agent-formats\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(entry_points)


ENTRY_POINTS = ("[evalkit.trace_formats]\nopenhands = evalkit_agent_formats.openhands:FORMAT\n"
                "swe-agent = evalkit_agent_formats.swe_agent:FORMAT\n")


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    """The example plug-in, found through its entry points and registered in FORMATS for this test."""
    _dist_info(tmp_path / "site", ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(EXAMPLE))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    found: dict = {}
    assert load_plugin_formats(found) == ["openhands", "swe-agent"]
    for name, fmt in found.items():
        monkeypatch.setitem(FORMATS, name, fmt)
    return found


def test_openhands_events_become_generations_tools_and_events(tmp_path, plugins):
    path = tmp_path / "session.json"
    path.write_text(json.dumps(_openhands_events()))
    report = ImportReport()
    (trace,) = load(path, report=report)
    assert report.by_format == {"openhands": 1}
    assert trace.id == "session" and trace.input == "Make an app" and trace.output == "Your app is ready."
    gens = [o for o in trace.observations if o.type == "GENERATION"]
    tools = [o for o in trace.observations if o.type == "TOOL"]
    assert [g.id for g in gens] == ["chatcmpl-1", "chatcmpl-2"]  # repeated model_response counted once
    assert gens[0].usage == {"input": 100, "output": 10, "total": 110} and gens[0].model == "claude-test"
    assert [(t.name, t.parent_id) for t in tools] == [("execute_bash", "chatcmpl-1"), ("execute_bash", "chatcmpl-2")]
    assert tools[0].input == {"command": "mkdir app"} and tools[0].level is None
    assert tools[1].level == "ERROR" and tools[1].output == "Serving HTTP"  # timed out: exit code -1
    assert tools[1].end_time == "2025-01-20T20:29:46.000000"
    assert report.skips == {"OpenHands null observations ('No observation' placeholders)": 1}


def test_a_swe_agent_trajectory_is_one_trace_of_turns_and_commands(tmp_path, plugins):
    path = tmp_path / "pydicom__pydicom-1458.traj.json"
    path.write_text(json.dumps(_swe_agent_traj()))
    (trace,) = load(path)
    assert trace.id == "pydicom__pydicom-1458"
    assert trace.input == "Fix issue 1458." and trace.output == "diff --git a/x b/x"
    assert trace.metadata["model_stats"] == {"total_cost": 1.5, "tokens_sent": 1000, "api_calls": 2}
    assert [(o.type, o.name) for o in trace.observations] == [
        ("GENERATION", "agent turn"), ("TOOL", "open"), ("GENERATION", "agent turn"), ("TOOL", "submit")]
    first = trace.observations[0]
    assert len(first.input) == 3 and first.input[1]["is_demo"] == "True"  # the history up to the turn
    assert first.metadata["state"] == {"open_file": "n/a"}
    assert trace.observations[3].output == "diff --git a/x b/x" and trace.observations[3].parent_id == "step1"


@pytest.mark.slow
def test_the_cli_finds_an_installed_plugin_in_a_fresh_process(tmp_path):
    _dist_info(tmp_path / "site", ENTRY_POINTS)
    src = tmp_path / "run.traj.json"
    src.write_text(json.dumps(_swe_agent_traj()))
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(EXAMPLE)])}
    done = subprocess.run([sys.executable, "-m", "evalkit.cli", "traces", "import", str(src), "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "imported 1 trace" in done.stdout
    (trace,) = load(out)
    assert trace.metadata["source"] == "swe-agent" and len(trace.observations) == 4


def test_a_broken_or_clashing_plugin_is_left_out_with_a_warning(tmp_path, monkeypatch):
    _dist_info(tmp_path / "site", "[evalkit.trace_formats]\nbroken = no_such_module_xyz:FORMAT\n"
                                  "otel = clash_plugin_xyz:FORMAT\n")
    (tmp_path / "site" / "clash_plugin_xyz.py").write_text(
        "from evalkit.traces import TraceFormat\n"
        "FORMAT = TraceFormat('otel', lambda value: True, lambda values: iter(()))\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    formats = {"otel": FORMATS["otel"]}
    fake_otel = TraceFormat("otel", lambda v: False, lambda vs: iter(()))
    with pytest.warns(UserWarning) as caught:
        added = load_plugin_formats(formats)  # (an installed plug-in, like the example, may load too)
    assert not {"broken", "otel"} & set(added) and formats["otel"] is FORMATS["otel"]
    messages = " | ".join(str(w.message) for w in caught)
    assert "'broken'" in messages and "no_such_module_xyz" in messages
    assert "'otel'" in messages and "already taken" in messages
    assert formats["otel"] is FORMATS["otel"]
    with pytest.raises(ValueError, match="already taken"):
        register_format(fake_otel, formats)


def test_a_plugin_whose_entry_point_is_named_unlike_its_format_is_left_out_with_a_warning(tmp_path, monkeypatch):
    """--format offers entry-point names without loading them, so a format must be registered under its own."""
    site = tmp_path / "site"
    _dist_info(site, "[evalkit.trace_formats]\nmine = renamed_format:FORMAT\n")
    (site / "renamed_format.py").write_text(
        "from evalkit.traces import TraceFormat\n"
        "FORMAT = TraceFormat('other', lambda value: False, lambda values: iter(()))\n")
    monkeypatch.syspath_prepend(str(site))
    found: dict = {}
    with pytest.warns(UserWarning, match="'mine' .* left out: the entry point is named 'mine' but its format 'other'"):
        added = load_plugin_formats(found)
    assert "mine" not in added and "other" not in found


def test_a_format_registered_in_code_is_sniffed_after_evalkit_s_own(tmp_path, monkeypatch):
    monkeypatch.setattr("evalkit.traces.formats.FORMATS", dict(FORMATS))
    from evalkit.traces import formats

    def read(values):
        for sv in values:
            yield Trace(id=sv.value["run"], observations=[])

    register_format(TraceFormat("runs", lambda value: isinstance(value, dict) and "run" in value, read))
    assert list(formats.FORMATS)[-1] == "runs" and "runs" not in FORMATS
    src = tmp_path / "runs.jsonl"
    src.write_text('{"run": "r-1"}\n')
    assert [t.id for t in load(src)] == ["r-1"]
