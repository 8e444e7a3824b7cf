"""TPR/TNR with Wilson intervals, the label-verdict join, and what it excludes."""

from __future__ import annotations

import pytest

from evalkit.calibration import confusion
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError


def _label(trace: str, label: str, **kw) -> HumanLabel:
    return HumanLabel(trace_id=trace, label=label, **kw)


def _verdict(trace: str, result: str, criterion: str = "c1") -> CriterionVerdict:
    extra = {"blocked_by": {"kind": "scope", "text": "no order id"}} if result == "uncertain" else {}
    return CriterionVerdict(criterion_id=criterion, trace_id=trace, result=result, confidence=0.9,
                            critique="...", **extra)


def test_confusion_joins_on_trace_and_counts_exclusions():
    labels = [_label("a", "pass"), _label("b", "pass"), _label("c", "fail"), _label("d", "fail"),
              _label("e", "defer"), _label("f", "pass"), _label("g", "fail"), _label("h", "pass")]
    verdicts = [_verdict("a", "pass"), _verdict("b", "fail"), _verdict("c", "fail"), _verdict("d", "pass"),
                _verdict("e", "pass"), _verdict("f", "uncertain"), _verdict("g", "uncertain"),
                _verdict("z", "pass")]
    conf = confusion(labels, verdicts)
    assert (conf.tp, conf.fn, conf.fp, conf.tn) == (1, 1, 1, 1)
    assert conf.tpr == 0.5 and conf.tnr == 0.5
    assert (conf.deferred, conf.unjudged) == (1, 1)
    assert (conf.uncertain_on_pass, conf.uncertain_on_fail) == (1, 1)
    assert conf.abstention_rate == pytest.approx(2 / 6)
    obj = conf.to_json_obj()
    assert obj["tprCi"]["level"] == 0.95 and obj["uncertain"] == 2


def test_summary_reports_tpr_tnr_and_abstention_but_no_accuracy():
    labels = [_label(f"p{i}", "pass") for i in range(9)] + [_label("f0", "fail")]
    verdicts = [_verdict(f"p{i}", "pass") for i in range(9)] + [_verdict("f0", "pass")]
    text = confusion(labels, verdicts).summary()
    assert "TPR 1.000" in text and "TNR 0.000" in text and "uncertain 0" in text
    assert "accura" not in text.lower()


def test_missing_class_gives_undefined_rate():
    conf = confusion([_label("a", "pass")], [_verdict("a", "pass")])
    assert conf.tnr is None and conf.tnr_ci is None
    assert "TNR n/a" in conf.summary()


def test_several_criteria_need_a_choice_and_labels_follow_it():
    labels = [_label("a", "pass", criterion_id="c1"), _label("a", "fail", criterion_id="c2"),
              _label("b", "fail")]
    verdicts = [_verdict("a", "pass", "c1"), _verdict("a", "pass", "c2"), _verdict("b", "fail", "c2")]
    with pytest.raises(InputError, match=r"several criteria \(c1, c2\)"):
        confusion(labels, verdicts)
    conf = confusion(labels, verdicts, criterion_id="c2")
    assert (conf.tp, conf.fp, conf.tn) == (0, 1, 1)


def test_two_labels_for_one_trace_are_an_error():
    with pytest.raises(InputError, match="trace 'a' has more than one label"):
        confusion([_label("a", "pass"), _label("a", "fail")], [_verdict("a", "pass")])
