"""Code checks (``evalkit scorecard``) on a Dask cluster of two worker processes: the same scorecard and
verdict files as one process, even when a worker dies mid-run."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import cloudpickle
import cluster_tasks
import pytest

from evalkit.checks import NOT_RECORDED, judge_from_verdicts, score_traces
from evalkit.cli import main
from evalkit.contract_files import read_model, read_models
from evalkit.contracts.matrix import EvalMatrix
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.distributed import (
    CheckOptions,
    check_partition,
    run_partitions,
    run_partitions_here,
    scorecard_of,
    trace_partitions,
)
from evalkit.sample_subject.agent import simulate_traces
from evalkit.traces import write_jsonl

SAMPLE = Path(__file__).parents[2] / "data" / "sample"
MATRIX, VERDICTS = SAMPLE / "eval-matrix.yaml", SAMPLE / "criterion-verdicts.jsonl"

cloudpickle.register_pickle_by_value(cluster_tasks)  # sent by value: workers need not find the tests


@pytest.fixture(scope="module")
def traces():
    return simulate_traces(seed=11, count=90)



@pytest.mark.slow
def test_cli_workers_write_the_same_scorecard_and_verdicts_as_one_process(tmp_path, capsys):
    args = [str(MATRIX), str(SAMPLE / "traces.jsonl"), "--verdicts", str(VERDICTS), "--partition-size", "7"]
    assert main(["scorecard", *args, "--out", str(tmp_path / "one.json"),
                 "--verdicts-out", str(tmp_path / "one.jsonl")]) == 0
    one = capsys.readouterr()
    assert main(["scorecard", *args, "--out", str(tmp_path / "two.json"),
                 "--verdicts-out", str(tmp_path / "two.jsonl"), "--workers", "2"]) == 0
    two = capsys.readouterr()
    assert (tmp_path / "two.json").read_bytes() == (tmp_path / "one.json").read_bytes()
    assert (tmp_path / "two.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    assert two.out.replace("two.json", "one.json") == one.out  # the same 60-column card
    assert "local Dask cluster of 2 worker processes started" in two.err
    card = json.loads((tmp_path / "one.json").read_text())
    assert card["traceCount"] == 300
    failed = sum(c["counts"]["failed"] for comp in card["components"] for c in comp["criteria"])
    assert failed > 0  # the sample's traces fail some checks: the failing ids are merged in order too
    verdicts = [json.loads(line) for line in (tmp_path / "one.jsonl").read_text().splitlines()]
    assert [v["traceId"] for v in verdicts] == sorted(v["traceId"] for v in verdicts)  # input order
    decided = {c["criterionId"]: c["counts"]["passed"] + c["counts"]["failed"] + c["counts"]["uncertain"]
               for comp in card["components"] for c in comp["criteria"]}
    assert {cid: sum(v["criterionId"] == cid for v in verdicts) for cid in decided} == decided
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.json", "one.jsonl", "two.json", "two.jsonl"]


def test_partitions_give_the_scorecard_of_one_stream(traces):
    matrix = read_model(MATRIX, EvalMatrix)
    judge = judge_from_verdicts(read_models(VERDICTS, CriterionVerdict))
    options = CheckOptions(matrix)
    tallies = run_partitions_here(functools.partial(check_partition, options=options),
                                  trace_partitions(traces, 8), None, shared={"judge": judge})
    merged = scorecard_of(options, tallies, generated_at=NOT_RECORDED)
    assert merged == score_traces(matrix, traces, judge=judge, generated_at=NOT_RECORDED)
    none = score_traces(matrix, [], generated_at=NOT_RECORDED)
    assert scorecard_of(options, [], generated_at=NOT_RECORDED) == none


def test_a_killed_worker_partition_is_rerun_and_the_scorecard_is_unchanged(tmp_path, traces, client):
    options = CheckOptions(read_model(MATRIX, EvalMatrix), verdict_lines=True)
    judge = judge_from_verdicts(read_models(VERDICTS, CriterionVerdict))
    marker = str(tmp_path / "killed")
    task = functools.partial(cluster_tasks.kill_worker_once, task=check_partition, options=options,
                             marker=marker, victim=traces[44].id)
    out = tmp_path / "verdicts.jsonl"
    tallies = run_partitions(client, task, trace_partitions(traces, 10), out, shared={"judge": judge},
                             workers_write=True)  # the killed worker was writing its own part
    here = tmp_path / "here.jsonl"
    expected = run_partitions_here(functools.partial(check_partition, options=options),
                                   trace_partitions(traces, 10), here, shared={"judge": judge})
    assert out.read_bytes() == here.read_bytes() and out.stat().st_size > 0
    assert tallies == expected
    killed_pid = Path(marker).read_text()
    ran = [line.split() for line in Path(marker + ".ran").read_text().splitlines()]
    assert {first for first, _ in ran} == {traces[i].id for i in range(0, 90, 10)}  # all 9 partitions
    victim_runs = [pid for first, pid in ran if first == traces[40].id]
    assert victim_runs and killed_pid not in victim_runs  # rerun by another worker process
    assert scorecard_of(options, tallies, generated_at=NOT_RECORDED) == score_traces(
        options.matrix, traces, judge=judge, generated_at=NOT_RECORDED)


def test_a_matrix_that_cannot_be_routed_fails_before_a_cluster_starts(tmp_path, traces, capsys):
    src = tmp_path / "traces.jsonl"
    write_jsonl(traces[:5], src)
    bad = tmp_path / "matrix.yaml"
    bad.write_text(MATRIX.read_text().replace("primitive: string-equality", "primitive: no-such-check", 1))
    assert main(["scorecard", str(bad), str(src), "--workers", "2"]) == 1
    err = capsys.readouterr().err
    assert "criterion order-id-matches" in err and "no-such-check" in err and "Dask cluster" not in err
