"""compare_runs on verdict files: the 2x2 table, flips with both critiques, uncertain verdicts, pairing."""

from __future__ import annotations

import pytest

from evalkit.calibration import Confusion
from evalkit.compare import compare_runs, render_comparison
from evalkit.errors import InputError
from tests.compare.conftest import run_of, verdict


def test_table_flips_and_uncertain_counts_from_two_files(write_run):
    old = write_run("old.jsonl", run_of("ppppffpuuf"))
    new = write_run("new.jsonl", run_of("ppfpfpuupu"))
    comp = compare_runs(old, new)
    (c,) = comp.criteria
    # items 0-5 decided in both: pp, pp, pf, pp, ff, fp; 6: p/u (new only), 7: u/u, 8: u/p (old only), 9: f/u
    assert (c.table.both_pass, c.table.pass_to_fail, c.table.fail_to_pass, c.table.both_fail) == (3, 1, 1, 1)
    assert (c.uncertain_old_only, c.uncertain_new_only, c.uncertain_both) == (1, 2, 1)
    assert c.table.n == 6 and c.table.old_rate == pytest.approx(4 / 6)
    assert [(f.key, f.old_result, f.new_result) for f in c.flips] == [("t002", "pass", "fail"),
                                                                       ("t005", "fail", "pass")]
    assert c.flips[0].old_critique == "pass on t002" and c.flips[0].new_critique == "fail on t002"
    text = render_comparison(comp)
    assert "old: old.jsonl   new: new.jsonl" in text
    assert "t002: pass -> fail | old: pass on t002 | new: fail on t002" in text
    assert "4 (1/2/1)" in text  # uncertain: old only / new only / both


def test_unpaired_runs_are_refused_naming_the_items_unless_asked(write_run):
    old = write_run("old.jsonl", run_of("pppp"))
    new = write_run("new.jsonl", run_of("ppp") + [verdict("cites-order-id", "extra", "pass")])
    with pytest.raises(InputError, match=r"1 only in old.jsonl \(cites-order-id/t003\); 1 only in new.jsonl "
                                         r"\(cites-order-id/extra\).*unpaired=True"):
        compare_runs(old, new)
    comp = compare_runs(old, new, unpaired=True)
    assert comp.unpaired and comp.criteria[0].only_old == ("t003",) and comp.criteria[0].only_new == ("extra",)
    assert comp.criteria[0].table.n == 3
    assert "only in old.jsonl: t003" in render_comparison(comp)


def test_a_second_verdict_on_one_item_is_an_error_naming_the_record(write_run):
    old = write_run("old.jsonl", run_of("pf") + [verdict("cites-order-id", "t000", "fail")])
    with pytest.raises(InputError, match=r"old.jsonl: \[2\]: .*second verdict .*'t000' \(first is record 1\)"):
        compare_runs(old, write_run("new.jsonl", run_of("pf")))


def test_suite_runs_pair_on_case_when_the_repeat_numbers_differ(write_run):
    old = write_run("old.jsonl", [verdict("c", "case-a-r0", "pass"), verdict("c", "case-b-r0", "fail")])
    new = write_run("new.jsonl", [verdict("c", "case-a-r1", "fail"), verdict("c", "case-b-r1", "fail")])
    with pytest.raises(InputError, match="not paired"):
        compare_runs(old, new)
    (c,) = compare_runs(old, new, join_on="case").criteria
    assert c.table.pass_to_fail == 1 and c.table.both_fail == 1 and c.flips[0].key == "case-a"


def test_each_criterion_is_compared_on_its_own(write_run):
    old = write_run("old.jsonl", run_of("pppp", crit="a") + run_of("ffff", crit="b"))
    new = write_run("new.jsonl", run_of("ffff", crit="a") + run_of("ffff", crit="b"))
    a, b = compare_runs(old, new).criteria
    assert (a.criterion_id, a.table.pass_to_fail, a.mcnemar.p_drop) == ("a", 4, pytest.approx(1 / 16))
    assert (b.criterion_id, b.table.both_fail, b.mcnemar.p_two_sided) == ("b", 4, 1.0)


def test_corrected_difference_where_both_runs_have_a_calibrated_judge(write_run):
    old = write_run("old.jsonl", run_of("p" * 70 + "f" * 30))
    new = write_run("new.jsonl", run_of("p" * 50 + "f" * 50))
    judge = Confusion(tp=45, fn=5, fp=3, tn=47)  # TPR 0.9, TNR 0.94
    comp = compare_runs(old, new, old_calibration={"cites-order-id": judge},
                        new_calibration={"cites-order-id": judge})
    cd = comp.criteria[0].corrected
    assert cd.same_judge and cd.reason is None
    # Rogan-Gladen is linear: the corrected difference is the raw one over TPR + TNR - 1.
    assert cd.difference == pytest.approx(-0.2 / (0.9 + 0.94 - 1))
    assert cd.ci.lo < cd.difference < cd.ci.hi < 0
    chance = Confusion(tp=5, fn=5, fp=5, tn=5)
    cd2 = compare_runs(old, new, old_calibration={"cites-order-id": judge},
                       new_calibration={"cites-order-id": chance}).criteria[0].corrected
    assert cd2.difference is None and "no better than chance" in cd2.reason
    assert compare_runs(old, new).criteria[0].corrected is None  # uncalibrated: not reported


def test_a_cut_off_last_line_is_reported_not_fatal(write_run):
    old = write_run("old.jsonl", run_of("pp"))
    new = write_run("new.jsonl", run_of("pp"))
    with new.open("a") as f:
        f.write('{"criterionId": "cites-order-id", "traceId": "t0')
    comp = compare_runs(old, new)
    assert comp.criteria[0].table.n == 2 and "cut off" in comp.notes[0]
    assert "note: " in render_comparison(comp)
