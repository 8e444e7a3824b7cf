"""On the sample: the review's failing traces become regression cases, and the next eval run shows them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.checks import eval_subject
from evalkit.sample_subject.edd_demo import prepare
from evalkit.suite import derive_into_suite, read_dataset

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


@pytest.mark.slow
def test_the_samples_failing_reviewed_traces_become_regressions_the_eval_run_shows(tmp_path):
    subject = prepare(SAMPLE, tmp_path / "sample")                 # every criterion decided offline
    rows = [json.loads(line) for line in (SAMPLE / "annotations.jsonl").read_text().splitlines()]
    export = tmp_path / "review-export.json"                       # what the page's Export button saves
    export.write_text(json.dumps({"format": "evalkit-review-export", "version": 1, "annotator": "ana",
                                  "annotations": [r for r in rows if r["annotator"] == "ana"]}))
    failing = {r["traceId"] for r in rows if r["annotator"] == "ana" and r["label"] == "fail"}
    done = derive_into_suite(subject, review=export, only=["fail"])
    derived = done.derived.cases
    assert {c.origin_trace_id for c in derived} == failing            # every failing reviewed trace, once
    assert all(c.expected and c.expected.failure_modes and c.expected.critique for c in derived)
    assert len(done.merged.added) + len(done.merged.near_duplicates) == len(derived)
    regressions = [c for c in read_dataset(tmp_path / "sample" / "dataset.json").cases if c.source == "derived"]
    ran = [c.id for c in regressions[:3]]
    run = eval_subject(subject, tmp_path / "eval", case_ids=ran, concurrency=3)
    reg = run.scorecard.regressions
    assert reg is not None and len(reg.cases) == len(regressions)
    by_id = {c.case_id: c for c in reg.cases}
    assert all(by_id[i].result in ("pass", "fail") and by_id[i].traces == 1 for i in ran)
    assert reg.not_run == len(regressions) - 3
    assert "REGRESSIONS" in (tmp_path / "eval" / "card.txt").read_text()
