"""Correcting a pass rate known only as a number and a count, as published results and other tools give it."""

from __future__ import annotations

import argparse
import json

import pytest

from evalkit.calibration import calibrate_criteria, correct_observed_rate, corrected_pass_rate, observed_rate
from evalkit.cli.calibrate import add_calibrate_parser
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError
from evalkit.io.canonical import canonical_line

# The shape of a published homework result: 46 test pairs (tp 31, fn 3, fp 2, tn 10) and an observed
# pass rate of 0.8567 on 2400 unlabeled traces; Rogan-Gladen gives (0.8567 + 0.8333 - 1) / (0.9118 + 0.8333 - 1).
HUMAN = [1] * 34 + [0] * 12
JUDGE = [1] * 31 + [0] * 3 + [1] * 2 + [0] * 10
P_OBS, N = 0.8566666666666667, 2400


def test_observed_rate_corrects_like_the_published_result():
    rate = correct_observed_rate(HUMAN, JUDGE, P_OBS, N, method="bootstrap")
    assert rate.theta == pytest.approx(0.92605, abs=1e-4)
    assert rate.ci.lo == pytest.approx(0.817, abs=0.01) and rate.ci.hi == 1.0
    assert rate.n_unlabeled == N and rate.p_obs == P_OBS


def test_a_rate_and_count_equal_the_predictions_they_summarise():
    preds = [1] * 1800 + [0] * 600
    full = corrected_pass_rate(HUMAN, JUDGE, preds)
    given = correct_observed_rate(HUMAN, JUDGE, 0.75, 2400)
    assert (given.theta, given.ci.lo, given.ci.hi) == (full.theta, full.ci.lo, full.ci.hi)


@pytest.mark.parametrize(("rate", "count", "field"), [(1.2, 10, "observed"), (0.5, 0, "n"), (0.5, 2.5, "n"),
                                                      (True, 10, "observed")])
def test_an_impossible_rate_or_count_is_refused(rate, count, field):
    with pytest.raises(InputError) as err:
        correct_observed_rate(HUMAN, JUDGE, rate, count)
    assert err.value.path == field


def test_a_rate_without_its_count_is_refused():
    assert observed_rate(None, None) is None
    with pytest.raises(InputError, match="go together"):
        observed_rate(0.8, None)


def _labels_and_verdicts(criteria=("c1",)):
    labels, verdicts = [], []
    for c in criteria:
        for i, (h, j) in enumerate(zip(HUMAN, JUDGE, strict=True)):
            labels.append(HumanLabel(trace_id=f"t{i}", label="pass" if h else "fail", split="test", criterion_id=c))
            verdicts.append(CriterionVerdict(criterion_id=c, trace_id=f"t{i}", result="pass" if j else "fail",
                                             confidence=None, critique=None))
    return labels, verdicts


def test_the_status_comes_with_the_measurement_and_says_why():
    labels, verdicts = _labels_and_verdicts()
    (result,) = calibrate_criteria(labels, verdicts, observed=(P_OBS, N)).results.values()
    assert result.status == "unvalidated"
    assert result.shortfalls == ["only 46 usable test labels (need at least 60)",
                                 "only 12 human fails on test (need at least 20 of each class: 8 more test label(s) of fail, judged pass or fail)", "TNR 0.833 < 0.9"]
    assert result.observed_from == "given"


def test_an_observed_rate_needs_its_criterion_when_there_are_several():
    labels, verdicts = _labels_and_verdicts(("a", "b"))
    with pytest.raises(InputError, match="set the criterion"):
        calibrate_criteria(labels, verdicts, observed=(P_OBS, N))
    assert list(calibrate_criteria(labels, verdicts, criterion="b", observed=(P_OBS, N)).results) == ["b"]


def test_a_criterion_typo_lists_the_known_criteria():
    labels, verdicts = _labels_and_verdicts(("dietary-adherence", "portion-size"))
    with pytest.raises(InputError, match="the labels and verdicts name: dietary-adherence, portion-size"):
        calibrate_criteria(labels, verdicts, criterion="dietary-adherance")


def _cli(tmp_path, argv):
    labels, verdicts = _labels_and_verdicts()
    lpath, vpath = tmp_path / "labels.jsonl", tmp_path / "verdicts.jsonl"
    lpath.write_text("".join(canonical_line(x.to_json_obj()) for x in labels))
    vpath.write_text("".join(canonical_line(x.to_json_obj()) for x in verdicts))
    parser = argparse.ArgumentParser(prog="evalkit")
    add_calibrate_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["calibrate", "--labels", str(lpath), "--verdicts", str(vpath), *argv])
    return args.func(args)


def test_calibrate_prints_the_published_numbers_from_observed_and_n(tmp_path, capsys):
    assert _cli(tmp_path, ["--observed", str(P_OBS), "--n", "2400", "--method", "bootstrap"]) == 0
    out = capsys.readouterr().out
    assert "observed    0.857 pass rate on 2400 traces (given)" in out
    assert "corrected   0.926  95% CI [0.8" in out
    assert "status      unvalidated (only 46 usable test labels (need at least 60); only 12 human fails on test (need at least 20 of each class: 8 more test label(s) of fail, judged pass or fail); TNR 0.833 < 0.9)" in out
    _cli(tmp_path, ["--observed", str(P_OBS), "--n", "2400", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["validation"]["status"] == "unvalidated" and report["unlabeled"]["observedFrom"] == "given"


def test_calibrate_refuses_observed_without_n(tmp_path):
    with pytest.raises(InputError, match="--observed and --n go together"):
        _cli(tmp_path, ["--observed", "0.8"])
