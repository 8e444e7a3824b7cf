"""Past one machine's memory and one core: statistics of a partitioned Parquet dataset, and flow
graphs on a two-worker Dask cluster.

1. Stats: a trace dataset of 10 million observations (500,000 traces of 20) is written as evalkit's
   partitioned Parquet layout, one folder per day, by vectorised polars code in chunks (building
   10 million pydantic observations would take longer than the measurement). A small dataset from
   the same generator is first checked against the real trace path (read back as traces,
   ``to_frame``, ``trace_stats``), so the generated columns are what the importer writes. Then
   ``evalkit traces stats DIR --json`` runs in a child process and its peak resident memory (from
   ``wait4``) and time are printed. The reference, the same statistics from the whole frame read into
   memory (the in-memory ``trace_stats``), runs at a tenth of the size (it needs about 0.65 GB a million
   observations), where its output must equal the streamed one and the ratios are printed.
2. Flow: ``evalkit flow build`` of 2,000 long-context agent traces with ``--workers 2`` against one
   process, both as child processes, the two outputs asserted byte-identical, the speedup printed
   with the cluster's start-up and without it (the time the command says its cluster took to start),
   with the CPU seconds of each run (workers included) and the load average: on a machine shared with
   other work, the wall-clock speedup says as much about the neighbours as about evalkit. So two plain
   processes (no Dask, each building every other partition) run at once as well: the most any two
   processes got from the cores at the time, the ceiling the cluster is measured against; with
   ``--flow-repeat N`` the three run in turn N times and the fastest of each is kept. Where other
   benchmarks share the cores, run them one at a time (``flock LOCKFILE python -m benchmarks...``).

Run: ``python -m benchmarks.bench_scale [--scale 1.0] [--flow-traces 2000] [--flow-repeat 1] [--skip-flow]
[--skip-stats]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from evalkit.traces import iter_dataset_traces, to_frame, trace_stats, write_jsonl
from evalkit.traces.parquet import DAY, partition_file, write_partition_file

OBS_PER_TRACE = 20
FULL_OBSERVATIONS = 10_000_000
CHUNK_OBSERVATIONS = 1_000_000
DAYS = 10
MEMORY_BOUND_MB = 1024
TYPES = ("GENERATION", "TOOL", "SPAN", "TOOL", "AGENT")


def _text(*parts: str | pl.Expr) -> pl.Expr:
    return pl.concat_str([pl.lit(p) if isinstance(p, str) else p.cast(pl.String) for p in parts])


def _chunk(first_trace: int, traces: int) -> pl.DataFrame:
    """``traces`` traces of ``OBS_PER_TRACE`` observations, in the dataset's columns."""
    first, last = first_trace * OBS_PER_TRACE, (first_trace + traces) * OBS_PER_TRACE
    rows = pl.DataFrame({"row": pl.int_range(first, last, eager=True, dtype=pl.Int64)})
    t, i = pl.col("row") // OBS_PER_TRACE, pl.col("row") % OBS_PER_TRACE
    kind = pl.lit(pl.Series(TYPES)).get(i % len(TYPES))
    noise = (pl.col("row") * 2_654_435_761) % 1_000_003  # a fixed scramble: varied but reproducible values
    day = t % DAYS + 1
    start = (pl.datetime(2026, 1, 1, time_zone="UTC") + pl.duration(days=day - 1, seconds=t % 80_000 + i * 2,
                                                                    microseconds=noise % 1_000_000))
    end = start + pl.duration(milliseconds=noise % 4_000 + 1)
    is_gen = kind == "GENERATION"
    tokens_in, tokens_out = noise % 900 + 10, noise % 300 + 1
    usage = _text('{"input":', tokens_in, ',"output":', tokens_out, "}")
    obs_input = _text('{"q":"question ', i, " of trace ", t, '"}')
    obs_output = _text('{"answer":"result ', noise, '"}')
    stamp = "%Y-%m-%dT%H:%M:%S%.6f+00:00"
    return rows.select(
        _text("trace-", t).alias("trace_id"), pl.lit("support").alias("trace_name"),
        pl.lit(None, pl.String).alias("trace_input"), pl.lit('{"answer":"done"}').alias("trace_output"),
        _text('{"tier":', t % 3, "}").alias("trace_metadata"), i.alias("obs_index"),
        _text("o", i).alias("obs_id"), kind.alias("obs_type"),
        pl.lit(pl.Series(["chat", "search", "lookup", "refund"])).get(noise % 4).alias("obs_name"),
        pl.when(i > 0).then(pl.lit("o0")).alias("obs_parentId"),
        start.dt.strftime(stamp).alias("obs_startTime"), end.dt.strftime(stamp).alias("obs_endTime"),
        pl.when(is_gen).then(pl.lit(pl.Series(["m-small", "m-large"])).get(noise % 2)).alias("obs_model"),
        pl.when(noise % 97 == 0).then(pl.lit("ERROR")).when(noise % 5 == 0).then(pl.lit("DEFAULT"))
        .alias("obs_level"),
        pl.lit(None, pl.String).alias("obs_statusMessage"), obs_input.alias("obs_input"),
        obs_output.alias("obs_output"), pl.when(is_gen).then(usage).alias("obs_usage"),
        pl.lit(None, pl.String).alias("obs_metadata"),
        pl.when(i > 0).then(1).otherwise(0).cast(pl.Int32).alias("depth"), start.alias("start_time"),
        end.alias("end_time"), ((end - start).dt.total_microseconds() / 1000).alias("latency_ms"),
        pl.when(is_gen).then(tokens_in.cast(pl.Float64)).alias("input_tokens"),
        pl.when(is_gen).then(tokens_out.cast(pl.Float64)).alias("output_tokens"),
        pl.when(is_gen).then((tokens_in + tokens_out).cast(pl.Float64)).alias("total_tokens"),
        obs_input.str.len_chars().cast(pl.Int64).alias("input_chars"),
        obs_output.str.len_chars().cast(pl.Int64).alias("output_chars"), day.alias("_day"),
    )


def write_generated_dataset(folder: Path, observations: int) -> int:
    """Write about ``observations`` observations as a dataset partitioned by day; returns the traces."""
    n_traces = max(DAYS, observations // OBS_PER_TRACE)
    per_chunk = max(1, CHUNK_OBSERVATIONS // OBS_PER_TRACE)
    for batch, first in enumerate(range(0, n_traces, per_chunk)):
        chunk = _chunk(first, min(per_chunk, n_traces - first))
        for (day,), rows in chunk.group_by("_day", maintain_order=True):
            write_partition_file(rows, partition_file(folder, DAY, f"2026-01-{day:02d}", batch))
    return n_traces


def _generate(folder: Path, observations: int) -> None:
    """Generate in a child process: a child measured later starts as a copy of this process (fork),
    and its peak memory would include whatever generating left here."""
    _child([sys.executable, "-m", "benchmarks.bench_scale", "--generate", str(folder), str(observations)])


@dataclass(frozen=True)
class ChildRun:
    """A child process's wall seconds, CPU seconds (its own and its reaped children's), peak MB, output,
    and the load average (1 minute) when it ended."""

    seconds: float
    cpu_seconds: float
    peak_mb: float
    out: str
    err: str = ""
    load: float = 0.0


def _child(argv: list[str]) -> ChildRun:
    """Run a child process to the end and measure it (``wait4`` gives its peak memory and CPU time)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        text, errors = out.read().decode(), err.read().decode()
    if proc.returncode:
        raise SystemExit(f"{' '.join(argv)} failed: {errors}")
    return ChildRun(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, text, errors,
                    os.getloadavg()[0])


_EAGER = """
import sys
from evalkit.io.canonical import canonical_dumps
from evalkit.traces import stats_json, to_frame, trace_stats
frame = to_frame(sys.argv[1]).collect()  # the same table, every observation in memory at once
# written as `evalkit traces stats --json` writes it, so the two outputs compare statistic by statistic
sys.stdout.write(canonical_dumps(stats_json(trace_stats(frame, n_traces=frame["trace_id"].n_unique()))))
"""


def _lazy_and_reference(folder: Path, observations: int, reference: bool) -> ChildRun:
    lazy = _child([sys.executable, "-m", "evalkit.cli", "traces", "stats", str(folder), "--json"])
    assert json.loads(lazy.out)["observations"] == observations
    print(f"{observations:>12,}{'lazy: evalkit traces stats DIR':>36}{lazy.seconds:>9.1f}"
          f"{lazy.peak_mb:>10.0f}")
    if reference:
        eager = _child([sys.executable, "-c", _EAGER, str(folder)])
        assert json.loads(lazy.out) == json.loads(eager.out), "streamed statistics differ from in-memory ones"
        print(f"{observations:>12,}{'reference: whole frame in memory':>36}{eager.seconds:>9.1f}"
              f"{eager.peak_mb:>10.0f}")
        print(f"{'':>12}{'ratio reference / lazy (outputs equal)':>36}{eager.seconds / lazy.seconds:>8.1f}x"
              f"{eager.peak_mb / lazy.peak_mb:>9.1f}x")
    shutil.rmtree(folder)
    return lazy


def bench_stats(scale: float, work: Path) -> None:
    check = work / "check"
    write_generated_dataset(check, 20_000)
    from_traces = list(iter_dataset_traces(check))
    assert trace_stats(check) == trace_stats(to_frame(from_traces), n_traces=len(from_traces)), \
        "generated columns differ from what the importer derives"
    full = int(FULL_OBSERVATIONS * scale) // OBS_PER_TRACE * OBS_PER_TRACE
    print(f"{'observations':>12}{'':>36}{'seconds':>9}{'peak MB':>10}")
    # The reference holds every row in memory (about 0.65 GB a million observations): it runs at a
    # tenth of the size, where the two outputs are compared; the full size is streamed only.
    _generate(work / "tenth", full // 10)
    _lazy_and_reference(work / "tenth", full // 10, reference=True)
    start = time.perf_counter()
    _generate(work / "full", full)
    print(f"{'':>12}(generated {full:,} observations in {time.perf_counter() - start:.0f}s)")
    peak = _lazy_and_reference(work / "full", full, reference=False).peak_mb
    verdict = "OK" if peak < MEMORY_BOUND_MB else "OVER"
    print(f"target: peak < {MEMORY_BOUND_MB} MB at {FULL_OBSERVATIONS:,} observations: {peak:.0f} MB at "
          f"{full:,} ({verdict})")


_HALF = """
import sys
from evalkit.distributed import FlowOptions, build_flow_work, run_partitions_here, source_partitions
half = int(sys.argv[2])
ranges = list(source_partitions([sys.argv[1]], workers_read_files=True))[half::2]  # the cluster's partitions
run_partitions_here(lambda work: build_flow_work(work, FlowOptions(frozenset({"delegate_research"}))), ranges,
                    sys.argv[3])
"""


def _two_plain_processes(src: Path, work: Path) -> tuple[float, float]:
    """Wall and CPU seconds of two plain processes (no Dask) building every other partition each, at
    once: what the two cores give to any two processes right now, the reference for the cluster."""
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", _HALF, str(src), str(half),
                               str(work / f"half{half}.jsonl")]) for half in (0, 1)]
    cpu = 0.0
    for proc in procs:
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status):
            raise SystemExit("a plain half-run failed")
        cpu += usage.ru_utime + usage.ru_stime
    return time.perf_counter() - start, cpu


_STARTED = re.compile(r"local Dask cluster of \d+ worker process(?:es)? started in ([0-9.]+)s")


def bench_flow_workers(n_traces: int, work: Path, repeat: int = 1) -> None:
    from benchmarks.bench_flow import long_context_trace

    src = work / "traces.jsonl"
    write_jsonl((long_context_trace(30 + i % 31, seed=i).model_copy(update={"id": f"t{i:05d}"})
                 for i in range(n_traces)), src)
    base = [sys.executable, "-m", "evalkit.cli", "flow", "build", str(src), "--dispatch", "delegate_research"]
    before = os.getloadavg()[0]
    ones, twos, plains = [], [], []
    # The three in turn, ``repeat`` times, the fastest of each kept: a burst of the neighbours' work
    # slows one run, not one kind of run.
    for _ in range(repeat):
        ones.append(_child([*base, "--out", str(work / "one.jsonl")]))
        twos.append(_child([*base, "--out", str(work / "two.jsonl"), "--workers", "2"]))
        assert (work / "one.jsonl").read_bytes() == (work / "two.jsonl").read_bytes(), "outputs differ"
        plains.append((*_two_plain_processes(src, work), os.getloadavg()[0]))
        halves = sum((work / f"half{h}.jsonl").stat().st_size for h in (0, 1))
        assert halves == (work / "one.jsonl").stat().st_size, "the plain halves built other graphs"
    one, two = min(ones, key=lambda run: run.seconds), min(twos, key=lambda run: run.seconds)
    plain_seconds, plain_cpu, plain_load = min(plains)
    started = _STARTED.search(two.err)
    assert started, f"the cluster run did not say when its cluster was up: {two.err}"
    start_up = float(started.group(1))
    if repeat > 1:
        walls = {"one process": [r.seconds for r in ones], "--workers 2": [r.seconds for r in twos],
                 "two plain processes": [p[0] for p in plains]}
        print(f"fastest of {repeat} runs of each (wall s: "
              + "; ".join(f"{kind} {', '.join(f'{x:.1f}' for x in xs)}" for kind, xs in walls.items()) + ")")
    print(f"{n_traces} traces (30-60 observations each), {src.stat().st_size / 1e6:.0f} MB of JSONL, "
          f"{(work / 'one.jsonl').stat().st_size / 1e6:.0f} MB of graphs; outputs byte-identical")
    print(f"{'':<36}{'wall s':>8}{'CPU s':>8}{'load':>6}")
    print(f"{'one process':<36}{one.seconds:>8.1f}{one.cpu_seconds:>8.1f}{one.load:>6.1f}")
    print(f"{'--workers 2, with cluster start-up':<36}{two.seconds:>8.1f}{two.cpu_seconds:>8.1f}"
          f"{two.load:>6.1f}")
    print(f"{f'--workers 2, without (- {start_up:.1f}s)':<36}{two.seconds - start_up:>8.1f}")
    print(f"{'two plain processes, no Dask':<36}{plain_seconds:>8.1f}{plain_cpu:>8.1f}{plain_load:>6.1f}")
    # The CPU seconds (the workers' included) show what the cluster costs whatever else runs; the
    # wall-clock speedup depends on the other processes sharing the cores (the load average).
    print(f"speedup {one.seconds / two.seconds:.2f}x with the cluster's start-up, "
          f"{one.seconds / (two.seconds - start_up):.2f}x without it, on {os.cpu_count()} cores (load "
          f"average {before:.1f} before, {two.load:.1f} after); the cluster costs "
          f"{two.cpu_seconds - one.cpu_seconds:.1f} CPU seconds more")
    print(f"two plain processes (each half the partitions, nothing shared) give "
          f"{one.seconds / plain_seconds:.2f}x now: the most any two processes got from these cores")
    # What two idle cores would allow at most: the cluster run's CPU seconds spread evenly over both
    # (start-up and merge are not spread in truth). A ceiling, not a measurement.
    ceiling = one.cpu_seconds / (two.cpu_seconds / 2)
    print(f"ceiling with 2 workers on 2 idle cores, from CPU seconds: {ceiling:.2f}x")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="fraction of the 10 million observations to generate (0.01 for a quick run)")
    parser.add_argument("--flow-traces", type=int, default=2000, help="traces for the --workers 2 run")
    parser.add_argument("--flow-repeat", type=int, default=1,
                        help="run the flow measurements this many times each, in turn, and keep the fastest")
    parser.add_argument("--skip-stats", action="store_true")
    parser.add_argument("--skip-flow", action="store_true")
    parser.add_argument("--generate", nargs=2, metavar=("DIR", "OBSERVATIONS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.generate:
        write_generated_dataset(Path(args.generate[0]), int(args.generate[1]))
        return
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-scale-") as tmp:
        if not args.skip_stats:
            bench_stats(args.scale, Path(tmp))
        if not args.skip_flow:
            bench_flow_workers(max(10, int(args.flow_traces * min(1.0, args.scale * 10))), Path(tmp),
                               args.flow_repeat)


if __name__ == "__main__":
    main()
