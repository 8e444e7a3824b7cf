"""The gate on crafted runs: a real drop beyond the margin fails (exit 1); noise and small drops pass."""

from __future__ import annotations

import json

import pytest

from evalkit.compare import gate, render_gate_markdown
from evalkit.errors import InputError
from tests.compare.conftest import run_of


def _runs(write_run, both_pass: int, p2f: int, f2p: int, both_fail: int, crit: str = "cites-order-id"):
    old = "p" * both_pass + "p" * p2f + "f" * f2p + "f" * both_fail
    new = "p" * both_pass + "f" * p2f + "p" * f2p + "f" * both_fail
    return write_run(f"{crit}-new.jsonl", run_of(new, crit)), write_run(f"{crit}-old.jsonl", run_of(old, crit))


def test_a_significant_drop_beyond_the_margin_fails_with_exit_status_1(write_run):
    run, base = _runs(write_run, 70, 10, 0, 20)
    result = gate(run, base)
    assert not result.passed and result.exit_status == 1
    (g,) = result.criteria
    assert g.failed and g.upper < -0.02 and g.comparison.mcnemar.p_drop == pytest.approx(1 / 1024)
    md = render_gate_markdown(result)
    assert md.startswith("## evalkit gate: FAILED\n")
    assert "**1 of 1 criteria failed:** `cites-order-id`" in md
    assert "| `cites-order-id` | 100 | 80.0% | 70.0% | -10.0% |" in md and "❌ fail: dropped 10.0%" in md
    assert md.rstrip().endswith("Exit status 1.")


def test_a_large_point_drop_on_few_flips_is_not_significant_and_passes(write_run):
    run, base = _runs(write_run, 15, 3, 0, 2)  # 15% drop, but 3 flips: one-sided p = 1/8
    result = gate(run, base)
    assert result.passed and result.exit_status == 0
    assert "not significant (McNemar p=0.125)" in result.criteria[0].reason


def test_a_significant_drop_within_the_margin_passes_but_not_with_a_zero_margin(write_run):
    run, base = _runs(write_run, 1500, 20, 0, 480)  # 1% drop on 2000 items, p ~ 1e-6
    within = gate(run, base, max_drop=0.02)
    assert within.passed and "significant but not beyond the margin" in within.criteria[0].reason
    assert gate(run, base, max_drop=0.0).exit_status == 1


def test_an_improvement_passes_and_only_the_dropping_criterion_fails(write_run):
    up_new, up_old = _runs(write_run, 50, 0, 30, 20, crit="a")
    down_new, down_old = _runs(write_run, 50, 30, 0, 20, crit="b")
    new = write_run("new.jsonl", _load(up_new) + _load(down_new))
    old = write_run("old.jsonl", _load(up_old) + _load(down_old))
    result = gate(new, old)
    assert [(g.comparison.criterion_id, g.failed) for g in result.criteria] == [("a", False), ("b", True)]
    assert result.criteria[0].reason == "no drop"
    assert "**1 of 2 criteria failed:** `b`" in render_gate_markdown(result)


def _load(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_bad_margin_or_level_is_refused(write_run):
    run, base = _runs(write_run, 5, 0, 0, 5)
    with pytest.raises(InputError, match="max_drop"):
        gate(run, base, max_drop=-0.1)
    with pytest.raises(InputError, match="alpha"):
        gate(run, base, alpha=0.5)


def test_unpaired_items_are_refused_or_listed_in_the_summary(write_run):
    run = write_run("run.jsonl", run_of("pppf"))
    base = write_run("base.jsonl", run_of("ppppp"))
    with pytest.raises(InputError, match=r"1 only in base.jsonl \(cites-order-id/t004\)"):
        gate(run, base)
    md = render_gate_markdown(gate(run, base, unpaired=True))
    assert "- `cites-order-id`: 1 only in baseline, 0 only in run (not compared)" in md


def test_a_run_that_decided_nothing_is_incomplete_never_a_pass(write_run):
    """A judge that broke (all uncertain) gates nothing: exit 3, and the Markdown says so."""
    base = write_run("base.jsonl", run_of("p" * 40 + "f" * 10))
    broken = write_run("run.jsonl", run_of("u" * 50))
    result = gate(broken, base)
    assert (result.outcome, result.exit_status, result.passed) == ("incomplete", 3, False)
    (g,) = result.criteria
    assert g.reason == ("incomplete: 0 item(s) decided in both runs (50 uncertain); the gate needs at least 5 "
                        "to be able to fail")
    md = render_gate_markdown(result)
    assert md.startswith("## evalkit gate: INCOMPLETE\n") and "⚠️ incomplete" in md
    assert md.rstrip().endswith("Exit status 3.")


def test_the_least_decided_is_where_the_gate_can_fail_at_all_and_a_failure_outranks_it(write_run):
    from evalkit.compare.gate import min_decided

    assert [min_decided(a) for a in (0.05, 0.01, 0.1, 0.03125)] == [5, 7, 4, 6]
    four_flips = _runs(write_run, 0, 4, 0, 0)        # 4 of 4 dropped: p = 1/16, cannot reach 0.05
    assert gate(*four_flips).outcome == "incomplete"
    five_flips = _runs(write_run, 0, 5, 0, 0)
    assert gate(*five_flips).outcome == "fail"      # 5 is the least on which it can fail, and it does
    assert gate(*_runs(write_run, 5, 0, 0, 0)).outcome == "pass"
    with pytest.raises(InputError, match="least_decided"):
        gate(*five_flips, least_decided=4)
    assert gate(*five_flips, least_decided=6).outcome == "incomplete"
    up_new, up_old = _runs(write_run, 50, 30, 0, 20, crit="a")
    thin_new, thin_old = _runs(write_run, 2, 0, 0, 0, crit="b")
    new = write_run("new.jsonl", _load(up_new) + _load(thin_new))
    old = write_run("old.jsonl", _load(up_old) + _load(thin_old))
    assert gate(new, old).outcome == "fail"         # fail > incomplete > pass


def test_an_empty_run_with_unpaired_is_incomplete(write_run):
    base = write_run("base.jsonl", run_of("ppppppppff"))
    empty = write_run("empty.jsonl", [])
    result = gate(empty, base, unpaired=True)
    assert result.exit_status == 3 and result.criteria[0].comparison.only_old
