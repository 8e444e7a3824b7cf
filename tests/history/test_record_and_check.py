"""The run history on crafted run folders: what a run records, one point per rerun, and the regression check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.contracts.summary import ModeHeadline
from evalkit.errors import InputError
from evalkit.history import check_history, read_history, record_notebook_run, render_history_check
from tests.recorded_runs import rate, write_run_folder, write_verdicts

GOOD = "p" * 80 + "f" * 20
"""100 traces, 80 passing."""


def _record(tmp_path: Path, n: int, verdicts: dict[str, str], *, judge: str = "sim prompt sha256:aaaa",
            grounded: float = 0.8) -> None:
    run = write_run_folder(tmp_path / f"run{n}", run_at=f"2026-01-0{n}T00:00:00Z",
                           criteria=[rate("grounded", grounded, grounded - 0.08, grounded + 0.07, judge=judge),
                                     rate("escalation", 0.9, 0.83, 0.95)],
                           modes=[ModeHeadline(mode="dropped", rate=0.1, lo=0.05, hi=0.18, count=10, reviewed=100)],
                           gate="fail")
    record_notebook_run(run, tmp_path / "history",
                        verdicts_file=write_verdicts(tmp_path / f"v{n}.jsonl", verdicts))


def test_a_run_records_its_headline_and_verdicts_and_a_rerun_is_one_point(tmp_path):
    verdicts = {"grounded": GOOD, "escalation": GOOD}
    _record(tmp_path, 1, verdicts)
    _record(tmp_path, 1, verdicts)  # the same run again: same inputs, time and numbers
    _record(tmp_path, 2, verdicts)
    records = read_history(tmp_path / "history")
    assert [r.run_at for r in records] == ["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"]
    first = records[0]
    assert first.series == "support-agent" and first.source == "run" and first.run == "../run1"
    assert [c.criterion for c in first.headline.criteria] == ["grounded", "escalation"]
    assert first.headline.gate == "fail" and first.headline.failure_modes[0].mode == "dropped"
    # the same verdicts are kept once, by content, cut to what a paired check reads
    assert records[0].verdicts == records[1].verdicts
    kept = (tmp_path / "history" / records[0].verdicts).read_text(encoding="utf-8").splitlines()
    assert len(kept) == 200 and json.loads(kept[0])["critique"] is None
    trend = json.loads((tmp_path / "run2" / "trend.json").read_text(encoding="utf-8"))
    assert [r["run_at"] for r in trend["records"]] == ["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"]


def test_a_planted_drop_in_the_last_of_five_runs_fails_the_check_naming_its_criterion(tmp_path):
    for n in range(1, 5):
        _record(tmp_path, n, {"grounded": GOOD, "escalation": GOOD})
    dropped = "p" * 50 + "f" * 50  # 30 of the 80 passes now fail
    _record(tmp_path, 5, {"grounded": dropped, "escalation": GOOD}, grounded=0.5)
    check = check_history(tmp_path / "history")
    assert check.outcome == "fail" and check.exit_status == 1
    (series,) = check.series
    assert series.failed_criteria == ["grounded"] and series.latest_number == 5
    md = render_history_check(check)
    assert md.startswith("# evalkit history check: FAILED\n")
    assert "| `support-agent` (run) | run 5 (2026-01-05T00:00:00Z) | run 4 (2026-01-04T00:00:00Z) | fail | `grounded` |" in md
    assert "| `grounded` | 100 | 80.0% | 50.0% | -30.0% |" in md and "| `escalation` | 100 | 80.0% | 80.0% |" in md
    assert md.rstrip().endswith("Exit status 1.")


def test_noise_between_two_runs_passes_the_check(tmp_path):
    _record(tmp_path, 1, {"grounded": GOOD})
    _record(tmp_path, 2, {"grounded": "f" + "p" * 79 + "p" + "f" * 19})  # one flip each way
    check = check_history(tmp_path / "history")
    assert check.outcome == "pass" and check.exit_status == 0


def test_a_first_run_or_runs_without_verdicts_are_incomplete_never_a_pass(tmp_path):
    _record(tmp_path, 1, {"grounded": GOOD})
    first = check_history(tmp_path / "history")
    assert first.outcome == "incomplete" and first.exit_status == 3
    assert "its first recorded run" in render_history_check(first)
    run = write_run_folder(tmp_path / "run2", run_at="2026-01-02T00:00:00Z", criteria=[rate("grounded", 0.8, 0.7, 0.9)])
    record_notebook_run(run, tmp_path / "history")  # a subject without verdicts
    check = check_history(tmp_path / "history")
    assert check.outcome == "incomplete" and "kept no per-item verdicts" in check.series[0].reason


def test_a_judge_change_is_named_beside_the_check(tmp_path):
    _record(tmp_path, 1, {"grounded": GOOD})
    _record(tmp_path, 2, {"grounded": GOOD}, judge="sim prompt sha256:bbbb")
    check = check_history(tmp_path / "history")
    assert check.series[0].judge_changes == ["grounded"]
    assert "The judge changed between the two runs for `grounded`" in render_history_check(check)


def test_check_of_an_empty_folder_or_unknown_series_says_what_to_do(tmp_path):
    with pytest.raises(InputError, match="no run history here"):
        check_history(tmp_path)
    _record(tmp_path, 1, {"grounded": GOOD})
    with pytest.raises(InputError, match=r"no run of 'other' in the history \(series: support-agent\)"):
        check_history(tmp_path / "history", series="other")


def test_history_cli_shows_and_checks_writing_markdown(tmp_path, capsys):
    for n in (1, 2):
        _record(tmp_path, n, {"grounded": GOOD if n == 1 else "p" * 50 + "f" * 50},
                grounded=0.8 if n == 1 else 0.5)
    assert main(["history", "show", str(tmp_path / "history")]) == 0
    shown = capsys.readouterr().out
    assert "support-agent (run): 2 run(s)" in shown and "50.0% [42.0%, 57.0%]" in shown
    md = tmp_path / "ci" / "history.md"
    md.parent.mkdir()
    assert main(["history", "check", str(tmp_path / "history"), "--markdown", str(md)]) == 1
    assert "`grounded`" in md.read_text(encoding="utf-8") and md.read_text(encoding="utf-8") == capsys.readouterr().out


def test_a_criterions_corrected_rate_wins_over_the_observed_one_whichever_notebook_came_first():
    from evalkit.contracts.summary import Headline
    from evalkit.history import merge_headlines

    observed = rate("grounded", 0.83, 0.78, 0.87, corrected=False)
    corrected = rate("grounded", 0.95, 0.9, 1.0)
    merged = merge_headlines([Headline(criteria=[observed], gate="fail"), Headline(criteria=[corrected])])
    assert merged.criteria == [corrected] and merged.gate == "fail"
    assert merge_headlines([Headline(criteria=[corrected]), Headline(criteria=[observed])]).criteria == [corrected]
