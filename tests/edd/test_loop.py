"""The loop controller: the stop test and its order, variance before accuracy, the injected clock, the streak."""

from __future__ import annotations

import json
import sys

import pytest

from evalkit.contracts.edd import LoopBudget
from evalkit.edd import Ledger, improvement, next_phase, run_loop, run_remedy, stop_test
from evalkit.errors import InputError
from tests.edd.conftest import FileAgent, result, write_agent

GREEN = result({"c": (20, 0)}, repeats=5)
RED_STABLE = result({"c": (15, 5)}, repeats=5)
RED_FLIPPING = result({"c": (15, 5)}, repeats=5, unstable=2)


@pytest.mark.parametrize(("case", "res", "swing", "minutes", "streak", "want"), [
    ("green on the swing that hits every budget", GREEN, 6, 31, 2, "full-green"),
    ("green", GREEN, 1, 0, 0, "full-green"),
    ("max swings before wall clock and streak", RED_STABLE, 6, 31, 2, "max-swings"),
    ("wall clock before streak", RED_STABLE, 3, 30, 2, "max-wallclock"),
    ("streak", RED_STABLE, 3, 29, 2, "no-improvement-streak"),
    ("accurate but flipping is not green", result({"c": (20, 0)}, repeats=5, unstable=0).model_copy(
        update={"stable": False}), 2, 0, 0, None),
    ("within every bound", RED_FLIPPING, 5, 29.9, 1, None),
    ("green rates but a HIGH criterion never judged", result({"c": (20, 0)}, repeats=5, skipped={"c": 20}),
     1, 0, 0, "incomplete-evidence"),
    ("green rates but HIGH undecided on one repeat", result({"c": (19, 0)}, repeats=5, undecided={"c": 1}),
     1, 0, 0, "incomplete-evidence"),
    ("green rates but agent runs gave no trace", GREEN.model_copy(update={"missing_runs": 2}), 1, 0, 0,
     "incomplete-evidence"),
    ("a gap with failures to ask about goes on", result({"c": (15, 5), "d": (0, 0)}, repeats=5,
                                                        skipped={"d": 20}), 2, 0, 0, None),
    ("MED skipped does not hold green back", result({"c": (20, 0), "m": (0, 0)}, repeats=5, skipped={"m": 20},
                                                    severity={"m": "MED"}), 1, 0, 0, "full-green"),
])
def test_the_stop_test_checks_in_the_seeds_order(case, res, swing, minutes, streak, want):
    got = stop_test(res, swing=swing, elapsed_ms=int(minutes * 60000), streak=streak, budget=LoopBudget())
    assert got == want, case


def test_variance_comes_before_accuracy():
    assert next_phase(None) == "variance"
    assert next_phase(RED_FLIPPING) == "variance"
    assert next_phase(RED_STABLE) == "accuracy"


def test_what_counts_as_an_improvement():
    before = result({"c": (18, 2)})
    assert improvement(before, result({"c": (19, 1)}))[0] is False         # inside the previous interval
    ok, why = improvement(before, result({"c": (20, 0)}))
    assert ok and "c 0.900 -> 1.000" in why
    both = result({"c": (20, 0), "d": (10, 10)})
    assert improvement(result({"c": (18, 2), "d": (19, 1)}), both) == (
        False, "regressed: d 0.950 -> 0.500 (below 0.764)")
    steadier = improvement(result({"c": (15, 5)}, repeats=5, unstable=3), result({"c": (15, 5)}, repeats=5))
    assert steadier == (True, "steadier: 3 -> 0 flipping (case, criterion) pairs")


def _remedy(tmp_path, agent, mode="fix", timeout_s=30.0):
    argv = [sys.executable, str(tmp_path / "remedy.py"), "{request}", "{response}", str(agent), mode]

    def remedy(request, request_file, response_file):
        return run_remedy(argv, request, request_file, response_file, cwd=tmp_path, timeout_s=timeout_s)
    return remedy


def test_the_loop_fixes_variance_first_then_accuracy_and_stops_green(tmp_path):
    agent = write_agent(tmp_path, failing=8, flipping=3)
    evaluate = FileAgent(agent)
    out = run_loop("shop-bot", tmp_path / "loop", evaluate, _remedy(tmp_path, agent), clock=lambda: 0)
    assert (out.stop_reason, out.phase, out.swings) == ("full-green", "done", 4)
    assert evaluate.calls == [(1, "variance"), (2, "variance"), (3, "accuracy"), (4, "accuracy")]
    improved = [(r.swing, r.improved, r.streak) for r in out.state.evaluations]
    assert improved == [(1, None, 0), (2, True, 0), (3, True, 0), (4, True, 0)]
    request = json.loads((tmp_path / "loop" / "swing-001" / "change-request.json").read_text())
    assert request["swing"] == 1 and request["status"] == "requested" and request["remedyTarget"] == "agentspec"
    assert "3 (case, criterion) pair(s) changed outcome between 5 repeats" in request["proposedRemedy"]
    assert all(len(c["refs"]) >= 1 for c in request["failingCases"])
    events = [json.loads(line)["event"] for line in (tmp_path / "loop" / "edd-ledger.jsonl").read_text().splitlines()]
    assert events == ["started"] + ["evaluated", "requested", "responded"] * 3 + ["evaluated", "stopped"]


def test_the_wall_clock_is_injected(tmp_path):
    agent = write_agent(tmp_path, failing=8, flipping=0)
    ticks = iter(range(0, 10**9, 11 * 60000))                   # every reading is 11 minutes later
    out = run_loop("shop-bot", tmp_path / "loop", FileAgent(agent), _remedy(tmp_path, agent),
                   clock=lambda: next(ticks))
    assert (out.stop_reason, out.swings) == ("max-wallclock", 2)  # swing 2 evaluated 44 minutes after the start


def test_amendments_that_do_not_help_stop_on_the_streak(tmp_path):
    agent = write_agent(tmp_path, failing=8, flipping=0)
    out = run_loop("shop-bot", tmp_path / "loop", FileAgent(agent), _remedy(tmp_path, agent, "noop"),
                   clock=lambda: 0)
    assert (out.stop_reason, out.phase, out.swings) == ("no-improvement-streak", "stopped", 3)
    assert [r.streak for r in out.state.evaluations] == [0, 1, 2]
    assert out.state.evaluations[1].improvement_note == "no criterion moved beyond its previous interval"


def test_max_swings_stops_without_asking_for_an_amendment_it_would_not_evaluate(tmp_path):
    agent = write_agent(tmp_path, failing=20, flipping=0)
    out = run_loop("shop-bot", tmp_path / "loop", FileAgent(agent), _remedy(tmp_path, agent),
                   budget=LoopBudget(max_swings=3, no_improvement_streak_limit=5), clock=lambda: 0)
    assert (out.stop_reason, out.swings) == ("max-swings", 3)
    assert sorted(out.state.requests) == [1, 2]


def test_a_finished_loop_is_not_run_again_and_a_ledger_is_bound_to_its_subject_and_budget(tmp_path):
    agent = write_agent(tmp_path, failing=0, flipping=0)
    evaluate = FileAgent(agent)
    first = run_loop("shop-bot", tmp_path / "loop", evaluate, _remedy(tmp_path, agent), clock=lambda: 0)
    assert (first.stop_reason, first.swings) == ("full-green", 1)
    again = run_loop("shop-bot", tmp_path / "loop", evaluate, _remedy(tmp_path, agent), clock=lambda: 0)
    assert again.stop_reason == "full-green" and len(evaluate.calls) == 1
    with pytest.raises(InputError, match="belongs to subject 'shop-bot'"):
        run_loop("other", tmp_path / "loop", evaluate, _remedy(tmp_path, agent))
    with pytest.raises(InputError, match="started with budget"):
        run_loop("shop-bot", tmp_path / "loop", evaluate, _remedy(tmp_path, agent), budget=LoopBudget(max_swings=2))


def test_an_out_of_order_ledger_is_an_error_naming_the_record(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.path.write_text('{"event": "started", "subject": "s", "budget": {}, "startedAtMs": 0}\n'
                           '{"event": "responded", "swing": 1}\n')
    with pytest.raises(InputError, match="record 2 .responded, swing 1.: a response without its request"):
        ledger.replay()


def test_a_budget_stop_records_the_convergence_delta_and_a_gap_stop_names_the_criteria(tmp_path):
    agent = write_agent(tmp_path, failing=12, flipping=0)
    out = run_loop("shop-bot", tmp_path / "loop", FileAgent(agent), _remedy(tmp_path, agent),
                   budget=LoopBudget(max_swings=2, no_improvement_streak_limit=5), clock=lambda: 0)
    assert out.stop_reason == "max-swings"
    assert out.state.stopped.reason == ("convergence delta over 2 swing(s): failing (case, criterion) pairs "
                                        "12 -> 8, unsteady pairs 0 -> 0; pass rates answer-correct 0.400 -> "
                                        "0.600 (+0.200)")

    def unjudged(swing, phase):
        return result({"answer-correct": (20, 0), "escalation": (0, 0)}, repeats=5, skipped={"escalation": 20})

    out = run_loop("shop-bot", tmp_path / "gap", unjudged, _remedy(tmp_path, agent), clock=lambda: 0)
    assert (out.stop_reason, out.phase, out.swings) == ("incomplete-evidence", "stopped", 1)
    assert "HIGH escalation 20 skipped of 20 outcomes" in out.state.stopped.reason



def test_history_names_the_unsteady_pairs_and_what_was_not_decided(tmp_path):
    from evalkit.edd import render_status

    def shaky(swing, phase):
        res = result({"answer-correct": (19, 0), "escalation": (0, 0)}, repeats=5, undecided={"answer-correct": 1},
                     skipped={"escalation": 20})
        return res.model_copy(update={"stable": False, "unstable": [["case-1", "answer-correct"]],
                                      "unsteady": ["case-1 answer-correct: 4 pass, 1 uncertain of 5 repeats"]})

    out = run_loop("shop-bot", tmp_path / "loop", shaky, _remedy(tmp_path, write_agent(tmp_path, 0, 0)),
                   clock=lambda: 0)
    text = render_status(out.state, history=True)
    assert "    unsteady case-1 answer-correct: 4 pass, 1 uncertain of 5 repeats" in text
    assert "    not decided: HIGH escalation 20 skipped of 20 outcomes" in text
    assert "stopped: incomplete-evidence after swing 1" in text
