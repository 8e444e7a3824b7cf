"""Files that are not traces get a plain explanation, not a traceback or a list of formats to try."""

import json

import pytest

from evalkit.errors import InputError
from evalkit.traces import load
from evalkit.traces.formats import FORMATS


def test_a_pair_without_a_prompt_is_named_as_pairwise_and_says_what_is_missing(tmp_path):
    path = tmp_path / "result.json"
    path.write_text(json.dumps([{"output_1": "Roses...", "output_2": "Violets...", "label": 1}]))
    with pytest.raises(InputError, match="pairwise judge results") as caught:
        load(path)
    assert "needs a prompt field" in caught.value.message
    assert "evalkit judge audit --pairwise FILE" in caught.value.message  # where such a file is read
    assert caught.value.file == str(path)


def test_unknown_data_keeps_the_generic_hint(tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"input": "x", "output_1": "y"}))  # one output, no preference
    with pytest.raises(InputError, match="pass --format to say which"):
        load(path)


@pytest.fixture
def no_plugins(monkeypatch):
    """evalkit's own formats only, whether or not the example plug-in is installed (a copy: deleting from
    the registry and putting back would change its order for later tests)."""
    own = {name: fmt for name, fmt in FORMATS.items() if name not in ("openhands", "swe-agent")}
    monkeypatch.setattr("evalkit.traces.formats.FORMATS", own)


def test_an_agent_log_a_plugin_reads_points_to_the_plugin(tmp_path, no_plugins):
    path = tmp_path / "session.json"
    path.write_text(json.dumps([{"id": 0, "timestamp": "2025-01-20T20:29:13", "source": "environment",
                                 "observation": "agent_state_changed", "content": "", "extras": {}}]))
    with pytest.raises(InputError, match="OpenHands event stream.*pip install -e examples/plugins"):
        load(path)


def test_a_swe_agent_trajectory_is_not_read_as_chat_from_its_history(tmp_path, no_plugins):
    """Its `history` holds {role, ...} messages, but reading only those would drop every command and
    observation: the error points to the plug-in that reads them, instead of a partial import."""
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps({"environment": "swe_main", "trajectory": [{"action": "ls", "observation": "a.py"}],
                                "history": [{"role": "system", "content": "You are a programmer."},
                                            {"role": "user", "content": "Fix it."},
                                            {"role": "assistant", "content": "ls"}]}))
    with pytest.raises(InputError, match="SWE-agent trajectory.*pip install -e examples/plugins"):
        load(path)
