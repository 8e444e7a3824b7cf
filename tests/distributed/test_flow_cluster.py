"""Flow graphs on a Dask cluster of two worker processes: the same bytes as one process, even when a
worker dies mid-run."""

from __future__ import annotations

import functools
import time
from pathlib import Path

import cloudpickle
import cluster_tasks
import pytest

from evalkit.cli import main
from evalkit.contract_files import read_model
from evalkit.contracts.flow import ExpectedFlow
from evalkit.distributed import (
    FlowOptions,
    build_flow_partition,
    run_partitions,
    source_partitions,
    trace_partitions,
)
from evalkit.sample_subject.agent import simulate_traces
from evalkit.traces import iter_dataset_traces, write_dataset, write_jsonl

EXPECTED_FLOW = Path(__file__).parents[2] / "data" / "sample" / "expected-flow.json"

cloudpickle.register_pickle_by_value(cluster_tasks)  # sent by value: workers need not find the tests


@pytest.fixture(scope="module")
def traces():
    return simulate_traces(seed=11, count=120)



def _one_process(traces, options: FlowOptions) -> str:
    return "".join(build_flow_partition(p, options).text for p in trace_partitions(traces, 10))


def test_cli_workers_write_the_same_bytes_as_one_process(tmp_path, traces, capsys):
    src = tmp_path / "traces.jsonl"
    write_jsonl(traces, src)
    common = ["--expected", str(EXPECTED_FLOW), "--partition-size", "7"]
    assert main(["flow", "build", str(src), "--out", str(tmp_path / "one.jsonl"), *common]) == 0
    one = capsys.readouterr().out
    two_out = str(tmp_path / "two.jsonl")
    assert main(["flow", "build", str(src), "--out", two_out, "--workers", "2", *common]) == 0
    two = capsys.readouterr().out
    assert (tmp_path / "two.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    assert (tmp_path / "two.diff.jsonl").read_bytes() == (tmp_path / "one.diff.jsonl").read_bytes()
    assert two.replace("two.", "one.") == one  # the same counts and expected-flow summary
    assert "built 120 flow graphs" in one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.diff.jsonl", "one.jsonl", "traces.jsonl",
                                                          "two.diff.jsonl", "two.jsonl"]  # no parts left


@pytest.mark.slow
def test_a_dataset_folder_builds_like_its_traces(tmp_path, traces, capsys):
    write_dataset(traces, tmp_path / "ds", "intent", batch_observations=200)
    src = tmp_path / "traces.jsonl"
    write_jsonl(iter_dataset_traces(tmp_path / "ds"), src)  # the dataset's reading order
    assert main(["flow", "build", str(tmp_path / "ds"), "--out", str(tmp_path / "a.jsonl"),
                 "--workers", "2"]) == 0
    assert main(["flow", "build", str(src), "--out", str(tmp_path / "b.jsonl")]) == 0
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert "built 120 flow graphs" in capsys.readouterr().out


def test_a_killed_worker_partition_is_rerun_and_the_output_is_unchanged(tmp_path, traces, client):
    options = FlowOptions(semantics="received", expected=read_model(EXPECTED_FLOW, ExpectedFlow))
    marker = str(tmp_path / "killed")
    victim = traces[55].id
    task = functools.partial(cluster_tasks.kill_worker_once, options=options, marker=marker, victim=victim)
    out = tmp_path / "flows.jsonl"
    summaries = run_partitions(client, task, trace_partitions(traces, 10), out)
    assert out.read_text() == _one_process(traces, options)
    killed_pid = Path(marker).read_text()
    ran = [line.split() for line in Path(marker + ".ran").read_text().splitlines()]
    assert {first for first, _ in ran} == {traces[i].id for i in range(0, 120, 10)}  # all 12 partitions
    victim_runs = [pid for first, pid in ran if first == traces[50].id]
    assert victim_runs and killed_pid not in victim_runs  # rebuilt by another worker process
    assert sum(s.graphs for s in summaries) == 120 and len(summaries) == 12
    assert [d.trace_id for s in summaries for d in s.diffs] == [t.id for t in traces]


def test_a_task_that_raises_once_is_retried(tmp_path, traces, client):
    options = FlowOptions()
    task = functools.partial(cluster_tasks.fail_once, options=options, marker=str(tmp_path / "raised"))
    run_partitions(client, task, trace_partitions(traces[:30], 10), tmp_path / "flows.jsonl")
    assert (tmp_path / "raised").exists()
    assert (tmp_path / "flows.jsonl").read_text() == _one_process(traces[:30], options)


@pytest.mark.slow
@pytest.mark.parametrize("workers_write", [False, True])
def test_a_task_that_always_raises_stops_the_run_and_writes_nothing(tmp_path, traces, client, workers_write):
    def broken(partition):
        if partition[0].id == traces[30].id:
            raise ValueError(f"cannot build {partition[0].id}")
        return build_flow_partition(partition, FlowOptions())

    with pytest.raises(ValueError, match="cannot build"):
        run_partitions(client, broken, trace_partitions(traces[:60], 10), tmp_path / "flows.jsonl",
                       workers_write=workers_write)
    deadline = time.monotonic() + 60  # let the partitions already running end: none may write
    while any(client.run(lambda dask_worker: len(dask_worker.state.executing)).values()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_workers_and_scheduler_are_checked_before_any_work(tmp_path, traces, capsys, monkeypatch):
    monkeypatch.setattr("evalkit.distributed.cluster.SCHEDULER_TIMEOUT", "2s")
    src = tmp_path / "traces.jsonl"
    write_jsonl(traces[:3], src)
    assert main(["flow", "build", str(src), "--out", str(tmp_path / "f.jsonl"), "--workers", "0"]) == 1
    assert "--workers must be at least 1" in capsys.readouterr().err
    assert main(["flow", "build", str(src), "--out", str(tmp_path / "f.jsonl"),
                 "--scheduler", "tcp://127.0.0.1:9"]) == 1
    assert "no Dask scheduler answers at tcp://127.0.0.1:9" in capsys.readouterr().err
    assert not (tmp_path / "f.jsonl").exists()


@pytest.mark.slow
def test_a_bad_trace_read_by_a_worker_fails_as_in_one_process(tmp_path, traces, capsys):
    src = tmp_path / "traces.jsonl"
    write_jsonl(traces[:40], src)
    rows = src.read_text().splitlines()
    rows[31] = rows[31].replace('"type":"TOOL"', '"type":"NOPE"', 1)
    src.write_text("\n".join(rows) + "\n")
    assert main(["flow", "build", str(src), "--out", str(tmp_path / "one.jsonl")]) == 1
    one = capsys.readouterr().err
    assert main(["flow", "build", str(src), "--out", str(tmp_path / "two.jsonl"), "--workers", "2"]) == 1
    two = capsys.readouterr().err
    assert f"{src}:32: observations" in one
    assert one.strip().splitlines()[-1] == two.strip().splitlines()[-1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["traces.jsonl"]


@pytest.mark.slow
def test_results_arriving_out_of_order_are_written_in_partition_order(tmp_path, traces, client):
    """Parts join the output as soon as those before them are in: the first partition, held until all
    the others are done, must still come first, and nothing is left of the parts."""
    options = FlowOptions(semantics="received")
    task = functools.partial(cluster_tasks.first_partition_last, options=options, first=traces[0].id,
                             others_done=str(tmp_path / "others"), expected=11)
    for workers_write in (False, True):
        out = tmp_path / f"flows-{workers_write}.jsonl"
        (tmp_path / "others").unlink(missing_ok=True)
        summaries = run_partitions(client, task, trace_partitions(traces, 10), out,
                                   workers_write=workers_write)
        assert len((tmp_path / "others").read_text().splitlines()) == 11  # all done before the first
        assert out.read_text() == _one_process(traces, options)
        assert [s.graphs for s in summaries] == [10] * 12
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flows-False.jsonl", "flows-True.jsonl", "others"]


@pytest.mark.slow
def test_long_traces_make_small_partitions_and_the_same_bytes(tmp_path, traces, capsys, monkeypatch):
    """Runs of lines are also cut by bytes (long traces, small partitions: a short idle tail at the end);
    the output does not change with the cut."""
    src = tmp_path / "traces.jsonl"
    write_jsonl(traces, src)
    monkeypatch.setattr("evalkit.distributed.partitions.PARTITION_BYTES", src.stat().st_size // 9)
    assert main(["flow", "build", str(src), "--out", str(tmp_path / "one.jsonl")]) == 0
    ranges = list(source_partitions([str(src)], workers_read_files=True))
    assert 9 <= len(ranges) <= 10  # not the 2 runs of 100 lines
    assert main(["flow", "build", str(src), "--out", str(tmp_path / "two.jsonl"), "--workers", "2"]) == 0
    assert (tmp_path / "two.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    assert "built 120 flow graphs" in capsys.readouterr().out


def test_local_workers_start_with_what_the_client_imported(client):
    """Forked, not fresh interpreters: a worker has the client's modules without importing them (about
    1.5 CPU seconds each otherwise, on the cores the work needs)."""
    import sys

    assert "cluster_tasks" in sys.modules  # imported by this test module, never by Dask or evalkit
    assert set(client.run(lambda: "cluster_tasks" in sys.modules).values()) == {True}


_FORKED_FROM_A_LIGHT_START = """
import sys
from evalkit.distributed.cluster import dask_client
assert "evalkit.flow.graph" not in sys.modules and "evalkit.traces.otel" not in sys.modules  # a light start
with dask_client(workers=1) as client:
    print(sorted(set(client.run(lambda: all(m in sys.modules for m in ("evalkit.flow.graph", "evalkit.traces.otel",
                                                                       "evalkit.checks.run"))).values())))
"""


@pytest.mark.slow
def test_workers_forked_from_a_light_start_still_have_the_per_trace_packages_loaded():
    """The facades load their names on first use, so a command starts light; the workers are forked only
    once every name of the packages per-trace work reads is loaded, or each would load them itself."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _FORKED_FROM_A_LIGHT_START], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[True]"


_ENV_AFTER_THE_FORK_SERVER = """
import os
from evalkit.distributed.cluster import dask_client
with dask_client(workers=1) as client:   # starts the fork server with this environment
    pass
os.environ["EVALKIT_SEEN"] = "set after the fork server started"
with dask_client(workers=1) as client:
    print(sorted(set(client.run(lambda: os.environ.get("EVALKIT_SEEN", "missing")).values())))
"""


@pytest.mark.slow
def test_workers_of_a_second_cluster_see_the_environment_of_now_not_of_the_fork_server():
    """Workers are forked from a server started with the first cluster of a process: without the nanny's
    environment, a key set since (a test's monkeypatched credential, a notebook's) would not reach them."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _ENV_AFTER_THE_FORK_SERVER], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "['set after the fork server started']"
