"""Judge calls (``evalkit judge run``) on a Dask cluster of two worker processes: the same verdicts and
run-record files as one process, even when a worker dies mid-partition; the one-process-only options
refused; credentials checked before any cluster starts."""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import cloudpickle
import judge_tasks
import pytest

from evalkit.cli import main
from evalkit.distributed import JudgeJob, judge_on_cluster, judge_work_folder, trace_partitions
from evalkit.judge import build_prompts, read_judge_specs, run_judge, verifier
from evalkit.traces import write_jsonl
from tests.judge.servers import JudgeServer
from tests.judge.traces import leasing_trace

SAMPLE = Path(__file__).parents[2] / "data" / "sample"

cloudpickle.register_pickle_by_value(judge_tasks)  # sent by value: workers need not find the tests

SPECS = """\
id: all_responses_substantiated
criterion: Every factual statement the assistant makes is backed by a tool output or the system prompt.
pass: Every factual claim can be traced to a tool output, the system prompt or the user's words.
fail: At least one reply states a fee, date or policy that nothing in the trace supports.
---
id: answers_the_question
criterion: The assistant answers the question the user asked.
pass: The final reply answers the user's question.
fail: The final reply does not answer the user's question.
"""

EXPECT = ("pass", "fail", "pass", "uncertain")


def _traces(count: int):
    """Trace ids out of input order (t07, t14, ...): the outputs are sorted by trace, the partitions not."""
    ids = [f"t{(i * 7) % count:02d}" for i in range(count)]
    return [leasing_trace(tid, reply=f"The pet fee is 300 dollars per pet. item={tid} expect={EXPECT[i % 4]}")
            for i, tid in enumerate(ids)]



@pytest.fixture
def files(tmp_path):
    traces = tmp_path / "traces.jsonl"
    write_jsonl(_traces(30), traces)
    specs = tmp_path / "specs.yaml"
    specs.write_text(SPECS, encoding="utf-8")
    return traces, specs


def _run(*args: str) -> int:
    return main(["judge", "run", "--no-progress", *args])


@pytest.mark.slow
def test_cli_two_workers_write_the_one_process_files_and_share_the_cache(tmp_path, files, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    traces, specs = files
    server = JudgeServer(latency=0.01).start()
    try:
        common = ["--spec", str(specs), "--traces", str(traces), "--provider", "openai", "--model", "m",
                  "--base-url", server.url + "/v1", "--concurrency", "3"]
        assert _run(*common, "--out", str(tmp_path / "one.jsonl")) == 0
        assert len(server.requests) == 60
        cache = str(tmp_path / "cache.sqlite")
        assert _run(*common, "--out", str(tmp_path / "two.jsonl"), "--cache", cache, "--workers", "2",
                    "--partition-size", "4") == 0
        assert len(server.requests) == 120  # every item asked once more (an empty cache), none twice
        out = capsys.readouterr().out
        assert "2 criteria x 30 traces via openai m on Dask: 60 items: 60 verdicts, 60 calls, 0 cached" in out
        assert _run(*common, "--out", str(tmp_path / "three.jsonl"), "--cache", cache, "--workers", "2",
                    "--partition-size", "7") == 0
        assert len(server.requests) == 120  # the workers' shared cache answered every item
    finally:
        server.stop()
    for name in ("two", "three"):
        for suffix in (".jsonl", ".runs.jsonl"):
            assert (tmp_path / f"{name}{suffix}").read_bytes() != b""
    assert (tmp_path / "two.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    assert (tmp_path / "two.runs.jsonl").read_bytes() == (tmp_path / "one.runs.jsonl").read_bytes()
    assert (tmp_path / "three.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    runs = [json.loads(line) for line in (tmp_path / "three.runs.jsonl").read_text().splitlines()]
    assert len(runs) == 60 and all(r["cached"] for r in runs)
    verdicts = [json.loads(line) for line in (tmp_path / "one.jsonl").read_text().splitlines()]
    keys = [(v["criterionId"], v["traceId"]) for v in verdicts]
    assert keys == sorted(keys) and len(set(keys)) == 60  # by criterion, then trace: not the input order
    # The loopback server's replies cite no refs, so verify makes every verdict uncertain (in both runs).
    assert {v["result"] for v in verdicts} == {"uncertain"}
    assert not judge_work_folder(tmp_path / "two.jsonl").exists()  # the work folder goes with the run


def test_cli_sample_replay_on_two_workers_is_the_committed_demo_output(tmp_path, capsys):
    """`make demo`'s judge run (few-shot examples, labels, a replay cassette) on a cluster."""
    out = tmp_path / "criterion-verdicts.jsonl"
    assert _run("--spec", str(SAMPLE / "judge-specs.yaml"), "--traces", str(SAMPLE / "traces.jsonl"),
                "--labels", str(SAMPLE / "human-labels.jsonl"), "--provider", "replay",
                "--cassette", str(SAMPLE / "judge-cassette.jsonl"), "--out", str(out),
                "--workers", "2", "--partition-size", "45") == 0
    assert out.read_bytes() == (SAMPLE / "criterion-verdicts.jsonl").read_bytes()
    assert (tmp_path / "criterion-verdicts.runs.jsonl").read_bytes() == \
        (SAMPLE / "criterion-verdicts.runs.jsonl").read_bytes()
    assert "local Dask cluster of 2 worker processes started" in capsys.readouterr().err


@pytest.mark.slow
def test_an_item_the_cassette_lacks_reads_the_same_in_the_runs_file_of_both_runs(tmp_path, monkeypatch):
    """The error row names the cassette as it was given, on local workers as in one process."""
    monkeypatch.chdir(tmp_path)
    lines = (SAMPLE / "judge-cassette.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    Path("cassette.jsonl").write_text("".join(lines[:-20]), encoding="utf-8")
    common = ["--spec", str(SAMPLE / "judge-specs.yaml"), "--traces", str(SAMPLE / "traces.jsonl"), "--labels",
              str(SAMPLE / "human-labels.jsonl"), "--provider", "replay", "--cassette", "cassette.jsonl"]
    assert _run(*common, "--out", "one.jsonl") == 1
    assert _run(*common, "--out", "two.jsonl", "--workers", "2", "--partition-size", "100") == 1
    one = Path("one.runs.jsonl").read_text()
    assert "cassette.jsonl: no reply recorded" in one and str(tmp_path) not in one
    assert Path("two.runs.jsonl").read_text() == one


@pytest.mark.slow
def test_cli_on_a_running_scheduler_writes_the_same_files(tmp_path, client, capsys):
    """--scheduler: the client reads the traces and gets the rows back; partition journals are the workers'
    own, for the length of a task. With repeats: the majority verdicts and the repeats sidecar too."""
    out = tmp_path / "v.jsonl"
    assert _run("--spec", str(SAMPLE / "judge-specs.yaml"), "--traces", str(SAMPLE / "traces.jsonl"),
                "--labels", str(SAMPLE / "human-labels.jsonl"), "--provider", "replay",
                "--cassette", str(SAMPLE / "judge-cassette.jsonl"), "--out", str(out), "--limit", "120", "--repeats", "2",
                "--scheduler", client.scheduler.address, "--partition-size", "25") == 0
    assert "2 criteria x 120 traces via replay" in capsys.readouterr().out
    one = tmp_path / "one.jsonl"
    assert _run("--spec", str(SAMPLE / "judge-specs.yaml"), "--traces", str(SAMPLE / "traces.jsonl"),
                "--labels", str(SAMPLE / "human-labels.jsonl"), "--provider", "replay",
                "--cassette", str(SAMPLE / "judge-cassette.jsonl"), "--out", str(one), "--limit", "120", "--repeats", "2") == 0
    assert out.read_bytes() == one.read_bytes() and len(one.read_text().splitlines()) == 240
    for sidecar in ("runs", "repeats"):
        assert out.with_name(f"v.{sidecar}.jsonl").read_bytes() == one.with_name(f"one.{sidecar}.jsonl").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "one.journal.jsonl", "one.jsonl", "one.repeats.jsonl", "one.runs.jsonl",  # no .lock left behind
        "v.jsonl", "v.repeats.jsonl", "v.runs.jsonl"]


@pytest.mark.slow
def test_a_worker_killed_mid_partition_is_resumed_from_its_journal_and_the_output_is_unchanged(
        tmp_path, files, client):
    traces_path, specs_path = files
    traces = _traces(30)
    specs = read_judge_specs(str(specs_path))
    log_one, log_two, marker = (str(tmp_path / n) for n in ("one.log", "two.log", "killed"))
    prompts = [p for spec in specs for p in build_prompts(spec, traces)]
    run_judge(prompts, judge_tasks.LoggingJudge(log_one), out=tmp_path / "one" / "v.jsonl", concurrency=1,
              verify=verifier({t.id: t for t in traces}), progress=False)

    victim_partition = traces[10:20]
    victim = victim_partition[7].id  # the 8th of 20 items in its partition (2 criteria x 10 traces)
    out = tmp_path / "two" / "v.jsonl"
    job = JudgeJob(tuple(specs), functools.partial(judge_tasks.logging_judge, log=log_two, delay=0.05,
                                                   victim=victim, marker=marker),
                   concurrency=1, journals=str(judge_work_folder(out)))
    summary, count = judge_on_cluster(client, job, trace_partitions(traces, 10), out, workers_write=True)
    assert (count, summary.items, summary.verdicts) == (30, 60, 60)
    results = Counter(json.loads(line)["result"] for line in out.read_text().splitlines())
    assert results == {"pass": 30, "fail": 16, "uncertain": 14}  # the refs cited resolve: nothing downgraded
    assert out.read_bytes() == (tmp_path / "one" / "v.jsonl").read_bytes()
    assert out.with_name("v.runs.jsonl").read_bytes() == (tmp_path / "one" / "v.runs.jsonl").read_bytes()

    killed_pid = Path(marker).read_text()
    answers = [line.split() for line in Path(log_two).read_text().splitlines()]
    by_killed = Counter(item for item, pid in answers if pid == killed_pid)
    by_others = Counter(item for item, pid in answers if pid != killed_pid)
    victims = {t.id for t in victim_partition}
    before = {t.id for t in victim_partition[:7]}
    assert set(by_killed) >= before  # it had answered the partition's first items before it died
    assert all(by_others[t.id] == 2 for t in traces if t.id not in victims and not by_killed[t.id])
    # Asked again after the kill: items the dead worker had not yet put in the partition's journal (and
    # the rest of the partition); the items it had journaled are resumed, not asked twice.
    resumed = {item for item in by_killed if item in victims and by_others[item] == 1}
    assert resumed and summary.resumed == len(resumed)
    assert summary.calls == 60 - summary.resumed  # every item called once by the attempt that finished it
    assert not judge_work_folder(out).exists()


@pytest.mark.parametrize(("flag", "value"), [("--journal", "j.jsonl"), ("--max-cost", "1"), ("--record", "c.jsonl")])
def test_one_process_options_are_refused_on_a_cluster_before_it_starts(tmp_path, files, capsys, flag, value):
    traces, specs = files
    start = time.monotonic()
    code = _run("--spec", str(specs), "--traces", str(traces), "--provider", "replay", "--cassette",
                str(SAMPLE / "judge-cassette.jsonl"), "--out", str(tmp_path / "v.jsonl"), "--workers", "2",
                flag, str(tmp_path / value) if value.endswith(".jsonl") else value)
    err = capsys.readouterr().err
    assert code == 1
    assert f"{flag} is not available with --workers/--scheduler" in err and len(err.strip().splitlines()) == 1
    assert "Dask cluster" not in err and time.monotonic() - start < 2  # no cluster was started
    assert sorted(p.name for p in tmp_path.iterdir()) == ["specs.yaml", "traces.jsonl"]


def test_missing_credentials_stop_the_run_before_the_cluster_starts(tmp_path, files, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    traces, specs = files
    code = _run("--spec", str(specs), "--traces", str(traces), "--provider", "openai", "--model", "m",
                "--out", str(tmp_path / "v.jsonl"), "--workers", "2")
    err = capsys.readouterr().err
    assert code == 2 and "OPENAI_API_KEY" in err and "Dask cluster" not in err
    assert not (tmp_path / "v.jsonl").exists()


@pytest.mark.slow
def test_a_killed_cluster_run_rerun_gives_one_verdict_per_item_without_asking_again(tmp_path, files, monkeypatch,
                                                                                     capsys):
    """The whole run (client and workers) killed mid-way; the rerun resumes each partition from its journal
    (or the cache) and writes the verdicts a one-process run writes."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    traces, specs = files
    out = tmp_path / "v.jsonl"
    server = JudgeServer(latency=0.05).start()
    try:
        common = ["--spec", str(specs), "--traces", str(traces), "--provider", "openai", "--model", "m",
                  "--base-url", server.url + "/v1", "--concurrency", "1", "--cache", str(tmp_path / "c.sqlite")]
        args = [*common, "--out", str(out), "--workers", "2", "--partition-size", "3"]
        proc = subprocess.Popen([sys.executable, "-m", "evalkit.cli", "judge", "run", "--no-progress", *args],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        work = judge_work_folder(out)
        deadline = time.monotonic() + 120

        def journaled() -> int:
            return sum(len(p.read_text().splitlines()) - 1 for p in work.glob("part-*.journal.jsonl"))

        while journaled() < 4:  # killed once the workers have journaled a few items
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "nothing was journaled"
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)  # the client and its workers at once
        proc.wait(timeout=30)
        asked_before = len(server.requests)
        assert not out.exists() and asked_before < 60
        capsys.readouterr()

        # One process would ask again what the journals hold: refused, nothing asked, the journals kept.
        assert _run(*common, "--out", str(out)) == 1
        err = capsys.readouterr().err
        assert f"left its partition journals in {work}: rerun it with --workers" in err
        assert len(server.requests) == asked_before and journaled() >= 4

        assert _run(*args) == 0
        line = capsys.readouterr().out.splitlines()[0]
        asked_again = len(server.requests) - asked_before
        assert _run(*common, "--out", str(tmp_path / "one.jsonl")) == 0  # cached: the same replies
    finally:
        server.stop()
    verdicts = [json.loads(v) for v in out.read_text().splitlines()]
    assert sorted((v["criterionId"], v["traceId"]) for v in verdicts) == \
        sorted({(v["criterionId"], v["traceId"]) for v in verdicts}) and len(verdicts) == 60
    assert out.read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    resumed = int(re.search(r"(\d+) resumed", line)[1]) + int(re.search(r"(\d+) cached", line)[1])
    assert resumed >= 4 and asked_again == 60 - resumed  # what was answered before the kill is not asked again
    assert not work.exists()


_WRITER = """
import sys
from evalkit.judge import JudgeCache
from evalkit.judge.cache import CachedReply, cache_key
cache = JudgeCache(sys.argv[1])
for batch in range(40):
    for i in range(100):
        cache.put(cache_key("fake", "m", 0.0, f"{sys.argv[2]}-{batch}-{i}", 0), CachedReply("{}", 1, 1, None, "x"))
    cache.commit()
cache.close()
"""


@pytest.mark.slow
def test_workers_writing_one_cache_at_once_lose_nothing(tmp_path):
    from evalkit.judge import JudgeCache

    path = str(tmp_path / "cache.sqlite")
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, path, name], stderr=subprocess.PIPE)
               for name in ("a", "b", "c")]
    errors = [proc.communicate(timeout=120)[1].decode() for proc in writers]
    assert [proc.returncode for proc in writers] == [0, 0, 0], errors
    cache = JudgeCache(path)
    assert len(cache) == 3 * 40 * 100
    cache.close()
