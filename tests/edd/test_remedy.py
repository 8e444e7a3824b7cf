"""Change requests and the remedy command: grounded cases, every way a remedy can fail, kill -9 and resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.edd import change_request, run_loop, run_remedy
from tests.edd.conftest import FileAgent, result, write_agent

ROOT = Path(__file__).resolve().parents[2]


def _remedy(tmp_path, agent, mode="fix", timeout_s=30.0):
    argv = ["{python}", str(tmp_path / "remedy.py"), "{request}", "{response}", str(agent), mode]

    def remedy(request, request_file, response_file):
        return run_remedy(argv, request, request_file, response_file, cwd=tmp_path, timeout_s=timeout_s)
    return remedy


def test_a_request_hands_over_grounded_failing_cases_flipping_ones_first():
    res = result({"tone": (17, 3), "order-id": (18, 2)}, repeats=5, unstable=0)
    res = res.model_copy(update={"unstable": [["case-order-id-1", "order-id"]], "stable": False})
    ungrounded = result({"refund": (19, 1)}, refs=False)
    res = res.model_copy(update={"failing": res.failing + ungrounded.failing,
                                 "criteria": res.criteria + ungrounded.criteria})
    request, picked = change_request(res, swing=2, subject="shop-bot", phase="variance", remedy_target="impl")
    assert request is not None
    assert (request.request_id, request.swing, request.remedy_target) == ("shop-bot-swing-2", 2, "impl")
    assert request.failing_cases[0].case_id == "case-order-id-1"          # the flipping case comes first
    assert {c.criterion_id for c in request.failing_cases} == {"tone", "order-id"}
    assert all(c.refs and c.critique for c in request.failing_cases)
    assert picked.ungrounded == 1                                         # no ref: never handed over
    text = request.proposed_remedy
    assert "tone (HIGH; 17/20 passed; 3 failing case(s)): the agent must satisfy 'tone holds'" in text
    assert "Injected failure mode mode_tone" in text and "The judge saw: tone failed on case 0" in text
    assert "(1 failing outcome(s) carry no ref and are not handed over.)" in text


@pytest.mark.parametrize(("mode", "reason", "detail"), [
    ("crash", "remedy-crashed", "exited with 1"),
    ("hang", "remedy-timeout", "past its timeout of 1s"),
    ("garbage", "remedy-invalid-response", "response.json"),
    ("silent", "remedy-invalid-response", "wrote no response file"),
    ("other-id", "remedy-invalid-response", "answers another request"),
    ("reject", "remedy-rejected", "not reproducible"),
])
@pytest.mark.slow
def test_a_failing_or_rejecting_remedy_is_a_recorded_stop_not_a_crash(tmp_path, mode, reason, detail):
    agent = write_agent(tmp_path, failing=8, flipping=0)
    out = run_loop("shop-bot", tmp_path / "loop", FileAgent(agent), _remedy(tmp_path, agent, mode, timeout_s=1),
                   clock=lambda: 0)
    assert (out.stop_reason, out.phase, out.swings) == (reason, "stopped", 1)
    assert detail in (out.state.stopped.reason or "")
    ledger = [json.loads(line) for line in (tmp_path / "loop" / "edd-ledger.jsonl").read_text().splitlines()]
    assert [r["event"] for r in ledger] == ["started", "evaluated", "requested", "responded", "stopped"]
    if mode == "crash":
        assert "remedy: exploded" in ledger[3]["stderrTail"]


def test_failures_without_refs_are_never_asked_about(tmp_path):
    def evaluate(swing, phase):
        return result({"c": (15, 5)}, repeats=5, refs=False)
    out = run_loop("shop-bot", tmp_path / "loop", evaluate, lambda *a: pytest.fail("asked"), clock=lambda: 0)
    assert out.stop_reason == "nothing-to-ask" and "none with a ref" in out.state.stopped.reason


KILLED_LOOP = """
import sys
sys.path.insert(0, {root!r})
from pathlib import Path
from evalkit.edd import run_loop, run_remedy
from tests.edd.conftest import FileAgent
tmp = Path({tmp!r})
agent = tmp / "agent.json"
argv = [sys.executable, str(tmp / "remedy.py"), "{{request}}", "{{response}}", str(agent), "fix"]
run_loop("shop-bot", tmp / "loop", FileAgent(agent),
         lambda req, rf, sf: run_remedy(argv, req, rf, sf, cwd=tmp, timeout_s=30), clock=lambda: 0)
"""


def test_kill_9_between_a_request_and_its_response_resumes_without_repeating_a_swing(tmp_path):
    agent = write_agent(tmp_path, failing=8, flipping=3)
    script = KILLED_LOOP.format(root=str(ROOT), tmp=str(tmp_path))
    env = {**os.environ, "KILL_LOOP_AFTER_RESPONSE": "2"}   # the remedy of swing 2 kill -9s the loop
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=120)
    assert done.returncode == -9, done.stderr.decode()
    events = [json.loads(line) for line in (tmp_path / "loop" / "edd-ledger.jsonl").read_text().splitlines()]
    assert [(e["event"], e.get("swing", 0)) for e in events][-2:] == [("evaluated", 2), ("requested", 2)]
    assert (tmp_path / "loop" / "swing-002" / "response.json").is_file()      # written, never journaled

    evaluate = FileAgent(agent)
    out = run_loop("shop-bot", tmp_path / "loop", evaluate, _remedy(tmp_path, agent), clock=lambda: 0)
    assert (out.stop_reason, out.swings) == ("full-green", 4)
    assert evaluate.calls == [(3, "accuracy"), (4, "accuracy")]            # swings 1 and 2 are not evaluated again
    assert (tmp_path / "agent.json.calls").read_text().split() == ["1", "2", "3"]  # nor amended twice
    swings = [(e["event"], e.get("swing", 0)) for e in
              (json.loads(line) for line in (tmp_path / "loop" / "edd-ledger.jsonl").read_text().splitlines())]
    assert len(swings) == len(set(swings))
