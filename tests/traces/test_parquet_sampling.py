"""Sampling a trace dataset folder picks the same traces, in the same order, as sampling them in memory."""

from __future__ import annotations

import pytest
from parquet_traces import varied_traces

from evalkit.analysis import sample_traces
from evalkit.contracts.verdict import BlockedBy, CriterionVerdict
from evalkit.errors import InputError
from evalkit.traces import write_dataset


def _verdicts(traces) -> list[CriterionVerdict]:
    out = []
    for i, trace in enumerate(traces[::3]):
        result = ("pass", "fail", "uncertain")[i % 3]
        blocked = BlockedBy(kind="normative", text="unclear") if result == "uncertain" else None
        out.append(CriterionVerdict(criterion_id="c1", trace_id=trace.id, result=result,
                                    confidence=0.5 + (i % 5) / 10, critique="because", blocked_by=blocked))
    return out


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    traces = varied_traces(90)
    folder = tmp_path_factory.mktemp("sampling") / "ds"
    write_dataset(traces, folder, "day", batch_observations=50)
    return traces, folder


@pytest.mark.parametrize("strategy, by", [("random", None), ("outlier", None), ("failure-driven", None),
                                          ("uncertainty", None), ("stratified", "intent"),
                                          ("stratified", "tools")])
def test_a_dataset_samples_like_the_same_traces_in_memory(dataset, strategy, by):
    traces, folder = dataset
    verdicts = _verdicts(traces)
    in_memory = sample_traces(traces, 12, strategy, seed=4, by=by, verdicts=verdicts)
    from_folder = sample_traces(folder, 12, strategy, seed=4, by=by, verdicts=verdicts)
    assert len(in_memory) > 3
    assert [t.id for t in from_folder] == [t.id for t in in_memory]
    assert from_folder == in_memory  # whole traces, read back from the files that hold them


def test_a_dataset_checks_its_arguments_like_a_list(dataset):
    _, folder = dataset
    with pytest.raises(InputError, match="needs a field to stratify by"):
        sample_traces(folder, 5, "stratified")
    with pytest.raises(InputError, match="no trace has metadata field 'colour'"):
        sample_traces(folder, 5, "stratified", by="colour")
    with pytest.raises(InputError, match="needs judge verdicts"):
        sample_traces(folder, 5, "uncertainty")
