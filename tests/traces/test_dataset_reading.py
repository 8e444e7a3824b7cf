"""A trace dataset folder reads like a trace file: ``iter_traces``/``load`` and ``evalkit sample``."""

from __future__ import annotations

import pytest

from evalkit.cli import main
from evalkit.errors import InputError
from evalkit.sample_subject.agent import simulate_traces
from evalkit.traces import ImportReport, iter_dataset_traces, iter_traces, load, write_dataset, write_jsonl


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ds") / "traces-ds"
    write_dataset(simulate_traces(seed=4, count=40), folder, "intent", batch_observations=150)
    return folder


def test_iter_traces_reads_a_dataset_folder_in_its_reading_order(dataset):
    report = ImportReport()
    traces = list(iter_traces(dataset, report=report))
    assert traces == list(iter_dataset_traces(dataset)) and len(traces) == 40
    assert load(dataset) == traces
    assert sorted(t.id for t in traces) == sorted(t.id for t in simulate_traces(seed=4, count=40))
    with pytest.raises(InputError, match="evalkit's own format, not 'otel'"):
        list(iter_traces(dataset, "otel"))


@pytest.mark.parametrize("strategy", ["random", "outlier"])
def test_sample_picks_the_same_traces_from_a_dataset_as_from_its_file(tmp_path, dataset, capsys, strategy):
    src = tmp_path / "traces.jsonl"
    write_jsonl(iter_dataset_traces(dataset), src)
    common = ["--n", "6", "--strategy", strategy, "--seed", "3"]
    assert main(["sample", str(dataset), *common, "--out", str(tmp_path / "a.jsonl")]) == 0
    from_dataset = capsys.readouterr().out
    assert main(["sample", str(src), *common, "--out", str(tmp_path / "b.jsonl")]) == 0
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert f"sampled 6 of 40 traces ({strategy}, seed 3)" in from_dataset
    from_file = capsys.readouterr().out
    assert from_file.replace("b.jsonl", "a.jsonl").replace(str(src), str(dataset)) == from_dataset


def test_sample_refuses_a_foreign_format_for_a_dataset(tmp_path, dataset, capsys):
    out = str(tmp_path / "a.jsonl")
    assert main(["sample", str(dataset), "--n", "2", "--format", "langfuse", "--out", out]) == 1
    assert "evalkit's own format, not 'langfuse'" in capsys.readouterr().err
