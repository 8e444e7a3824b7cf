"""Trace ingestion: observations per second and peak memory for each importer.

Generates a native JSONL file, a Langfuse export (JSONL, one API trace per line) and an OTLP file
(JSONL, one export request per line, as the OpenTelemetry collector's file exporter writes),
about a million observations in all at full scale. Each importer is timed against a reference run
in the same process: plain ``json.loads`` of every line of the same file, the least any importer
must do. Peak memory is measured separately (tracemalloc slows the code it watches) at two file
sizes: streaming importers should show the same peak for both. The OTLP file is sorted by trace id
(one export request per trace, in id order), so the OpenTelemetry importer reads it one trace at a
time too (see ``evalkit.traces.otel``). ``otel-collector`` is the same spans shuffled into lines of 50
spans of many traces, as a collector's file exporter writes them: not sorted, so the importer sorts
them on disk (``evalkit.traces.otel_spill``; forced here at any size, as for files of 16 MB or more).

Run: ``python -m benchmarks.bench_ingest [--scale 1.0] [--formats evalkit langfuse otel otel-collector]
[--repeat 3]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from evalkit.traces import iter_traces, otel_spill

OBS_PER_TRACE = 10


def _ts(base_ms: int) -> str:
    s, ms = divmod(base_ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1_767_225_600 + s)) + f".{ms:03d}Z"


def _payload(rng: random.Random, i: int) -> dict:
    return {"query": f"order {rng.randrange(10**6)} status please", "step": i,
            "context": "lorem ipsum dolor sit amet " * rng.randrange(1, 6)}


def _native_trace(rng: random.Random, t: int) -> dict:
    obs = []
    for i in range(OBS_PER_TRACE):
        kind = "GENERATION" if i % 3 == 0 else "TOOL" if i % 3 == 1 else "SPAN"
        o = {"id": f"o{t}-{i}", "type": kind, "name": f"step_{i % 4}", "startTime": _ts(t * 100 + i * 5),
             "endTime": _ts(t * 100 + i * 5 + 4), "input": _payload(rng, i), "output": {"ok": True, "n": i}}
        if i:
            o["parentId"] = f"o{t}-0"
        if kind == "GENERATION":
            o |= {"model": "gpt-sim", "usage": {"input": 120 + i, "output": 40, "total": 160 + i}}
        obs.append(o)
    return {"id": f"t{t}", "name": "bench", "input": "hello", "observations": obs}


def _langfuse_trace(rng: random.Random, t: int) -> dict:
    native = _native_trace(rng, t)
    obs = [{"id": o["id"], "traceId": native["id"], "type": o["type"], "name": o["name"],
            "startTime": o["startTime"], "endTime": o["endTime"], "input": o["input"], "output": o["output"],
            "parentObservationId": o.get("parentId"), "model": o.get("model"),
            "usageDetails": o.get("usage"), "metadata": {}, "level": "DEFAULT"} for o in native["observations"]]
    return {"id": native["id"], "name": "bench", "timestamp": obs[0]["startTime"], "input": "hello",
            "metadata": {}, "observations": obs, "scores": []}


def _otlp_request(rng: random.Random, t: int) -> dict:
    trace_id = f"{t:032x}"
    spans = []
    for i in range(OBS_PER_TRACE):
        op = "chat" if i % 3 == 0 else "execute_tool" if i % 3 == 1 else "invoke_agent"
        attrs = [{"key": "gen_ai.operation.name", "value": {"stringValue": op}}]
        if op == "execute_tool":
            attrs += [{"key": "gen_ai.tool.name", "value": {"stringValue": f"tool_{i % 4}"}},
                      {"key": "gen_ai.tool.call.arguments", "value": {"stringValue": json.dumps(_payload(rng, i))}},
                      {"key": "gen_ai.tool.call.result", "value": {"stringValue": '{"ok": true}'}}]
        if op == "chat":
            attrs += [{"key": "gen_ai.request.model", "value": {"stringValue": "gpt-sim"}},
                      {"key": "gen_ai.usage.input_tokens", "value": {"intValue": str(100 + i)}},
                      {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "40"}}]
        start = (1_767_225_600_000 + t * 100 + i * 5) * 1_000_000
        spans.append({"traceId": trace_id, "spanId": f"{t * 16 + i:016x}",
                      "parentSpanId": "" if i == 0 else f"{t * 16:016x}", "name": f"{op} step_{i}",
                      "kind": 1, "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 4_000_000),
                      "attributes": attrs, "status": {}})
    return {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name",
                                                            "value": {"stringValue": "bench"}}]},
                               "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}]}]}


GENERATORS: dict[str, Callable[[random.Random, int], dict]] = {
    "evalkit": _native_trace, "langfuse": _langfuse_trace, "otel": _otlp_request,
}
FORMATS = [*GENERATORS, "otel-collector"]
"""What is measured: each generator's file, and the OTLP spans in collector order (sorted on disk)."""


COLLECTOR_BATCH = 50
"""Spans per line of the collector-order OTLP file."""


def write_file(path: Path, fmt: str, n_traces: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    if fmt == "otel-collector":
        _write_collector_file(path, rng, n_traces)
        return
    gen = GENERATORS[fmt]
    with path.open("w") as fh:
        for t in range(n_traces):
            fh.write(json.dumps(gen(rng, t), separators=(",", ":")) + "\n")


def _write_collector_file(path: Path, rng: random.Random, n_traces: int) -> None:
    """The OTLP file's spans shuffled into lines of ``COLLECTOR_BATCH`` spans of many traces, as a
    collector's file exporter writes them: not sorted by trace id."""
    spans = [span for t in range(n_traces)
             for span in _otlp_request(rng, t)["resourceSpans"][0]["scopeSpans"][0]["spans"]]
    rng.shuffle(spans)
    with path.open("w") as fh:
        for i in range(0, len(spans), COLLECTOR_BATCH):
            request = {"resourceSpans": [{"resource": {"attributes": [
                {"key": "service.name", "value": {"stringValue": "bench"}}]},
                "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans[i:i + COLLECTOR_BATCH]}]}]}
            fh.write(json.dumps(request, separators=(",", ":")) + "\n")


def _reference(path: Path) -> int:
    n = 0
    with path.open("rb") as fh:
        for line in fh:
            json.loads(line)
            n += 1
    return n


def _consume(path: Path, fmt: str) -> int:
    if fmt == "otel-collector":  # sorted on disk at any size, as files of SPILL_BYTES or more are
        spill_bytes, otel_spill.SPILL_BYTES = otel_spill.SPILL_BYTES, 0
        try:
            return sum(len(t.observations) for t in iter_traces(path, "otel"))
        finally:
            otel_spill.SPILL_BYTES = spill_bytes
    return sum(len(t.observations) for t in iter_traces(path, fmt))


def _once(fn: Callable[[], int]) -> tuple[float, int]:
    gc.collect()
    start = time.perf_counter()
    n = fn()
    return time.perf_counter() - start, n


def _paired(reference: Callable[[], int], importer: Callable[[], int],
            repeat: int) -> tuple[float, float, float, int]:
    """(best reference time, best importer time, median of the per-pair ratios, observations).

    The two run in turn, reference then importer, ``repeat`` times: on a shared machine whose speed
    drifts, each pair runs at about the same speed, so the median ratio of the pairs is steadier
    than the ratio of two best times taken minutes apart."""
    ref_times, times, ratios, n = [], [], [], 0
    for _ in range(repeat):
        ref_s, _ = _once(reference)
        secs, n = _once(importer)
        ref_times.append(ref_s)
        times.append(secs)
        ratios.append(secs / ref_s)
    return min(ref_times), min(times), statistics.median(ratios), n


def _peak_mib(fn: Callable[[], int]) -> float:
    gc.collect()
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="1.0 = about a million observations over the three files")
    parser.add_argument("--formats", nargs="+", choices=FORMATS, default=FORMATS,
                        help="which importers to measure (default: all)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="time each importer and its reference this many times, in turn; seconds are the best "
                             "run, the ratio the median of the pairs (default: 3)")
    args = parser.parse_args(argv)
    per_format = max(100, int(33_400 * args.scale))
    print(f"ingest benchmark: {per_format} traces x {OBS_PER_TRACE} observations per format")
    print(f"{'format':<10}{'obs':>10}{'seconds':>10}{'obs/s':>12}{'json.loads s':>14}{'ratio':>8}"
          f"{'peak MiB small':>16}{'peak MiB 4x':>13}")
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in args.formats:
            path = Path(tmp) / f"{fmt}.jsonl"
            write_file(path, fmt, per_format)
            ref_s, secs, ratio, n_obs = _paired(lambda p=path: _reference(p), lambda p=path, f=fmt: _consume(p, f),
                                                args.repeat)
            # every observation written is read back: a faster importer that loses some is no result
            assert n_obs == per_format * OBS_PER_TRACE, f"{fmt}: read {n_obs} of {per_format * OBS_PER_TRACE}"
            small, big = Path(tmp) / f"{fmt}-small.jsonl", Path(tmp) / f"{fmt}-big.jsonl"
            write_file(small, fmt, max(50, per_format // 20))
            write_file(big, fmt, max(200, per_format // 5))
            mem_small = _peak_mib(lambda p=small, f=fmt: _consume(p, f))
            mem_big = _peak_mib(lambda p=big, f=fmt: _consume(p, f))
            print(f"{fmt:<10}{n_obs:>10}{secs:>10.2f}{n_obs / secs:>12,.0f}{ref_s:>14.2f}"
                  f"{ratio:>8.1f}{mem_small:>16.1f}{mem_big:>13.1f}")
            for p in (path, small, big):
                p.unlink()
    print("seconds = the importer's best run; ratio = importer time / plain json.loads of the same lines (the "
          "reference), the median over runs of each in turn. "
          "Target: native >= 100k obs/s per core, OTLP >= 50k; streaming formats keep the same peak at 4x the file.")


if __name__ == "__main__":
    main()
