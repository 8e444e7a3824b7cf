"""The loop's ledger follows the one append-only policy (evalkit.io.append_only): a final record cut off by an
interrupted write is left out and reported, and dropped by the next append; anything else that is not a
record (a byte-order mark, a corrupted record, garbage at the end) is refused, naming the ledger's line."""

from __future__ import annotations

import pytest

from evalkit.contracts.edd import LoopBudget
from evalkit.edd import Ledger, render_status, run_loop
from evalkit.edd.ledger import LedgerRecord
from evalkit.errors import InputError
from tests.edd.conftest import result

GREEN = result({"c": (20, 0)}, repeats=5)
CUT = b'{"event":"evaluated","swing":1,"result":{"repeats":5,"verd'


def _no_remedy(*_args):
    raise AssertionError("a green swing asks for no change")


def _started(folder) -> tuple[Ledger, bytes]:
    ledger = Ledger(folder)
    ledger.append(LedgerRecord(event="started", subject="shop-bot", budget=LoopBudget(), started_at_ms=0))
    return ledger, ledger.path.read_bytes()


def test_a_cut_off_final_record_is_left_out_reported_and_dropped_by_the_next_append(tmp_path):
    ledger, intact = _started(tmp_path)
    ledger.path.write_bytes(intact + CUT)
    state = ledger.replay()
    assert state.started is not None and state.evaluations == [] and state.cut_off
    assert "the ledger ends in a cut-off record (an interrupted write); it was left out" in render_status(state)
    # the loop resumes from the records that landed: swing 1 is evaluated again, and its record replaces the cut one
    outcome = run_loop("shop-bot", tmp_path, lambda swing, phase: GREEN, _no_remedy, clock=lambda: 1000)
    assert outcome.stop_reason == "full-green"
    assert "cut-off record" in render_status(outcome.state)  # `edd run` says what it dropped
    data = ledger.path.read_bytes()
    assert data.startswith(intact) and CUT not in data and data.endswith(b"\n")
    again = ledger.replay()
    assert not again.cut_off and [r.swing for r in again.evaluations] == [1] and again.stopped is not None


def test_an_append_reports_the_cut_off_line_it_drops(tmp_path):
    ledger, intact = _started(tmp_path)
    ledger.path.write_bytes(intact + CUT)
    appended = ledger.append(LedgerRecord(event="stopped", swing=0, stop="max-swings", phase="stopped"))
    assert appended.appended == 1 and appended.dropped is not None and appended.dropped.line == 2


@pytest.mark.parametrize(("bad", "line"), [
    ("bom", 1), ("corrupted in the middle", 2), ("garbage at the end", 3), ("complete but invalid at the end", 3)])
def test_anything_but_a_cut_off_final_record_is_refused_with_its_line(tmp_path, bad, line):
    ledger, intact = _started(tmp_path)
    stopped = LedgerRecord(event="stopped", swing=0, stop="max-swings", phase="stopped")
    ledger.append(stopped)
    two = ledger.path.read_bytes()
    first, second = two.splitlines(keepends=True)
    data = {"bom": b"\xef\xbb\xbf" + two,
            "corrupted in the middle": first + b'{"event":"evaluated",,}\n' + second,
            "garbage at the end": two + b"Traceback (most recent call last):",
            "complete but invalid at the end": two + b'{"event":"exploded"}'}[bad]
    ledger.path.write_bytes(data)
    with pytest.raises(InputError) as caught:
        ledger.replay()
    assert caught.value.render().startswith(f"{ledger.path}:{line}:")
    with pytest.raises(InputError):  # and nothing is ever appended after it
        run_loop("shop-bot", tmp_path, lambda swing, phase: GREEN, _no_remedy, clock=lambda: 1000)
    assert ledger.path.read_bytes() == data
