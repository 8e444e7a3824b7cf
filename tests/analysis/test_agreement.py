"""analysis.agreement: Cohen's kappa between two annotators' error-analysis labels, pass/fail and per mode."""

from __future__ import annotations

import pytest
from analysis_builders import note

from evalkit.analysis import Taxonomy, agreement_on, annotator_agreement
from evalkit.errors import InputError
from evalkit.stats import cohens_kappa


def test_agreement_on_names_the_question_and_reports_the_shared_statistic():
    pairs = [("y", "y")] * 20 + [("n", "n")] * 15 + [("y", "n")] * 5 + [("n", "y")] * 10
    k = agreement_on(pairs, about="hallucination")
    kappa = cohens_kappa([a for a, _ in pairs], [b for _, b in pairs])
    assert (k.about, k.traces, k.observed, k.expected, k.kappa) == (
        "hallucination", kappa.n, kappa.observed_agreement, kappa.chance_agreement, kappa.kappa)
    assert agreement_on([("pass", "pass")] * 5).kappa is None  # one category only: undefined
    assert agreement_on([]).kappa is None


def test_agreement_uses_shared_traces_latest_labels_and_leaves_out_defers():
    ana = [note("t1", "fail", ("x",)), note("t2", "pass"), note("t3", "fail", ("y",)), note("t4", "pass"),
           note("t5", "defer"), note("only-ana", "pass")]
    ben = [note("t1", "fail", ("x",), annotator="ben"), note("t2", "fail", ("y",), annotator="ben"),
           note("t3", "fail", ("y",), annotator="ben"), note("t4", "fail", ("x",), annotator="ben"),
           note("t5", "pass", annotator="ben"), note("t4", "pass", annotator="ben", minute=3)]  # ben relabels t4
    result = annotator_agreement(ana + ben, "ana", "ben")
    assert (result.shared_traces, result.deferred) == (5, 1)
    assert result.label.traces == 4
    # labels (ana, ben): (f,f) (p,f) (f,f) (p,p): po 0.75, pe (2*3 + 2*1)/16 = 0.5, kappa 0.5
    assert result.label.kappa == pytest.approx(0.5)
    modes = {k.about: k for k in result.modes}
    assert set(modes) == {"x", "y"}
    assert modes["x"].kappa == pytest.approx(1.0)


def test_agreement_reports_every_taxonomy_mode_and_names_bad_annotators():
    taxonomy = Taxonomy.model_validate({"subject": "s", "version": 0, "modes": [
        {"id": "x", "name": "X", "definition": "x"}, {"id": "never", "name": "N", "definition": "n"}]})
    labels = [note("t1", "fail", ("x",)), note("t1", "fail", ("x",), annotator="ben")]
    assert [k.about for k in annotator_agreement(labels, "ana", "ben", taxonomy).modes] == ["x", "never"]
    with pytest.raises(InputError, match="no annotations by 'zoe'"):
        annotator_agreement(labels, "ana", "zoe")
    with pytest.raises(InputError, match="two different annotators"):
        annotator_agreement(labels, "ana", "ana")
