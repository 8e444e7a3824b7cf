"""Traces are stored with each repeated conversation prefix once, and read back exactly."""

import json
import shutil
from pathlib import Path

import pytest

from evalkit.contracts.trace import Observation, Trace
from evalkit.errors import InputError
from evalkit.traces import load, write_jsonl

CLAUDE = Path(__file__).parent / "fixtures" / "claude_code"


def _chat(turns: int, reply_chars: int = 400) -> Trace:
    """A chat agent's trace: each call is sent the whole conversation so far, as importers give it."""
    history, observations = [{"role": "system", "content": "You are a helpful agent."}], []
    for n in range(turns):
        history.append({"role": "user", "content": f"question {n}"})
        reply = {"role": "assistant", "content": f"answer {n} " + "x" * reply_chars}
        observations.append(Observation(id=f"g{n}", type="GENERATION", input=list(history), output=reply))
        history.append(reply)
    return Trace(id="chat", observations=observations)


def test_a_trace_read_back_equals_the_one_written_and_writes_the_same_bytes_again(tmp_path):
    shutil.copytree(CLAUDE, tmp_path / "project")
    (trace,) = load(next((tmp_path / "project").glob("*.jsonl")))
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_jsonl([trace], first)
    (back,) = load(first)
    assert back == trace and back.to_json_obj() == trace.to_json_obj()
    write_jsonl([back], second)
    assert first.read_bytes() == second.read_bytes()
    stored = json.loads(first.read_text())
    assert any("inputRepeats" in o for o in stored["observations"])


def test_storage_grows_with_the_conversation_not_its_square(tmp_path):
    sizes = {}
    for turns in (50, 100):
        path = tmp_path / f"{turns}.jsonl"
        write_jsonl([_chat(turns)], path)
        sizes[turns] = path.stat().st_size
        as_is = len(json.dumps(_chat(turns).to_json_obj()))
        assert sizes[turns] < as_is / 10
    assert sizes[100] < 2.2 * sizes[50]


def test_an_item_is_repeated_only_when_its_json_is_the_same(tmp_path):
    earlier = Observation(id="g1", type="GENERATION", input=[{"n": 1}, {"n": 2}, {"n": 3}])
    later = Observation(id="g2", type="GENERATION", input=[{"n": 1}, {"n": 2.0}, {"n": 3}, {"n": 4}])
    path = tmp_path / "t.jsonl"
    write_jsonl([Trace(id="t", observations=[earlier, later])], path)
    assert "inputRepeats" not in json.loads(path.read_text())["observations"][1]  # 2.0 is not 2: one item
    (back,) = load(path)
    assert json.dumps(back.observations[1].input) == '[{"n": 1}, {"n": 2.0}, {"n": 3}, {"n": 4}]'


@pytest.mark.parametrize(("repeats", "message"), [
    ({"observation": "g9", "items": 1}, "inputRepeats.observation: no observation 'g9' before this one"),
    ({"observation": "g1", "items": 5}, "inputRepeats.items: 5 items repeated from observation 'g1', whose "
                                          "input holds 2 items"),
])
def test_a_reference_to_no_earlier_input_is_an_error_naming_the_field(tmp_path, repeats, message):
    line = {"id": "t", "observations": [
        {"id": "g1", "type": "GENERATION", "input": [1, 2]},
        {"id": "g2", "type": "GENERATION", "input": [3], "inputRepeats": repeats}]}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(InputError) as err:
        load(path)
    assert message in err.value.render() and err.value.render().startswith(f"{path}:1:")
