"""Judge runner: calls against a loopback server, cache replay speed, and memory that does not grow.

Speed: 1,000 prompts through the ``openai`` provider against the fake server of ``tests/judge/servers.py``
(its own process, 127.0.0.1, 50 ms per answer) at concurrency 64. The ideal wall time is
N x latency / concurrency = 0.78 s; the ratio measured / ideal is printed (target: 1.1 or less), with the
client's CPU per call and the server's. Both transports of the provider are measured: ``http`` (the same
requests, byte for byte, over evalkit's lean HTTP/1.1 pool: the target applies to it) and ``sdk`` (the
official ``openai`` client, the default; its 2 to 4 ms of CPU per call cap it near 1,000 / (N x CPU) calls
a second on one core). The timed run is a whole ``run_judge`` on a fresh provider: it opens its
connections (each slot's as its first call leaves), writes its journal and its outputs, and closes its
connections, as a real run does; only building the prompts is left out.

What the ratio is made of: 1,000 calls over 64 slots means some slot makes 16 calls one after another,
so even a free client and an exact server give 16 x 50 ms = 0.8 s, a ratio of 1.024; the rest is the
client's and the server's time between a reply leaving the server and the next request arriving there
(16 times over), plus starting and finishing the run. The server counts its 50 ms from a request's
arrival, as a real server's latency includes reading the request. The ratio includes the server: answers
that fall due together are written one after another, and on a loaded machine either process may wait
for a core. So the load average is printed with every figure, and the client's CPU per call (process
time, which load hardly changes) beside it; ``--runs N`` measures N times.

Cache replay: 100,000 prompts whose replies are all in the cache, from the stream of prompts to the
sorted verdicts file and runs sidecar (target: 50,000 verdicts/s). Prompts are generated lazily with a
precomputed digest, so prompt building (``build_prompt``) is not part of the figure. The machine is
shared: verdicts per CPU-second are printed beside verdicts per wall-second, with the load average.

Memory: the cache replay run in a fresh process at 10,000 and 100,000 prompts; the peak of Python's
heap (tracemalloc) and the process's peak RSS are printed for each (target: independent of the number
of prompts).

End to end: ``evalkit judge run`` as a user runs it (a new process: start-up, reading 2,000 traces,
building their prompts, the model check, the calls, the outputs) against the fake server at 200 ms a
call and concurrency 64. Printed: the wall time against the ideal (2,000 x 0.2 s / 64 = 6.25 s), the
command's start-up (``judge run --help``), the fixed cost left (wall - ideal - start-up), and the command's
CPU time, which a loaded machine changes far less than the wall time.

Run: ``python -m benchmarks.bench_judge [--items 1000] [--replay 100000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

from evalkit.contracts.judge import JudgePin
from evalkit.io.canonical import compact_sorted_json
from evalkit.judge.cache import CachedReply, JudgeCache, key_maker
from evalkit.judge.output import JUDGE_OUTPUT_SCHEMA
from evalkit.judge.prompt import JudgePrompt, prompt_digest
from evalkit.judge.providers import ScriptedProvider, make_provider
from evalkit.judge.runner import run_judge

ROOT = Path(__file__).resolve().parents[1]
LATENCY = 0.05
CONCURRENCY = 64
_REPLY = {"critique": "The reply cites the refund policy snippet it relies on.", "refs": [], "assumptions": [],
          "result": "pass", "confidence": 0.9, "blockedBy": None}


def _server() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "tests.judge.servers", "--latency", str(LATENCY)], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    port = proc.stdout.readline().strip()  # type: ignore[union-attr]
    return proc, f"http://127.0.0.1:{port}/v1"


def _prompts(n: int) -> Iterator[JudgePrompt]:
    for i in range(n):
        messages = ({"role": "system", "content": "You judge whether the reply is grounded in policy."},
                    {"role": "user", "content": f"Judge this trace. item=t{i:07d}"})
        yield JudgePrompt("grounded-policy", f"t{i:07d}", messages, JUDGE_OUTPUT_SCHEMA,
                          prompt_digest(messages, JUDGE_OUTPUT_SCHEMA), None, None)


def _replay_prompts(n: int) -> Iterator[JudgePrompt]:
    messages = ({"role": "user", "content": "Judge this trace."},)
    for i in range(n):
        yield JudgePrompt("grounded-policy", f"t{i:07d}", messages, JUDGE_OUTPUT_SCHEMA, f"sha256:{i:064x}",
                          None, None)


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of another process (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def speed(items: int, transport: str = "http") -> dict[str, float]:
    """Wall time of ``items`` calls at 50 ms latency and concurrency 64, and its ratio to the ideal."""
    os.environ.setdefault("OPENAI_API_KEY", "sk-loopback")
    proc, url = _server()
    pin = JudgePin(provider="openai", model="gpt-4o-mini", transport=transport)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            provider = make_provider(pin, base_url=url, max_connections=CONCURRENCY)
            run_judge(_prompts(CONCURRENCY), provider, out=Path(tmp) / "warm.jsonl", concurrency=CONCURRENCY,
                      progress=False)  # imports and the server's first answers, as a long run has them
            provider = make_provider(pin, base_url=url, max_connections=CONCURRENCY)
            prompts = list(_prompts(items))  # built beforehand: this measures judging, not prompt building
            server_cpu = _cpu_seconds(proc.pid)
            start, cpu = time.perf_counter(), time.process_time()
            summary = run_judge(prompts, provider, out=Path(tmp) / "v.jsonl", concurrency=CONCURRENCY,
                                progress=False)
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            server_cpu = _cpu_seconds(proc.pid) - server_cpu
    finally:
        proc.kill()
        proc.wait()
    assert summary.verdicts == items and summary.errors == 0, summary.describe()
    ideal = items * LATENCY / CONCURRENCY
    return {"wall": wall, "ideal": ideal, "ratio": wall / ideal, "cpu_ms_per_call": cpu / items * 1000,
            "server_cpu_ms_per_call": server_cpu / items * 1000}


class _SlowScripted(ScriptedProvider):
    """The scripted judge answering after the same 50 ms: the runner's own overhead, without HTTP or SDK."""

    async def complete(self, messages, schema):  # type: ignore[no-untyped-def]
        await asyncio.sleep(LATENCY)
        return await super().complete(messages, schema)


def runner_overhead(items: int) -> dict[str, float]:
    """Like :func:`speed`, with a provider that sleeps 50 ms instead of making an HTTP call."""
    reply = compact_sorted_json(_REPLY)
    prompts = list(_prompts(items))
    with tempfile.TemporaryDirectory() as tmp:
        start, cpu = time.perf_counter(), time.process_time()
        summary = run_judge(prompts, _SlowScripted(lambda m, s, i: reply), out=Path(tmp) / "v.jsonl",
                            concurrency=CONCURRENCY, progress=False)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert summary.verdicts == items, summary.describe()
    ideal = items * LATENCY / CONCURRENCY
    return {"wall": wall, "ideal": ideal, "ratio": wall / ideal, "cpu_ms_per_call": cpu / items * 1000}


def _fill(cache: JudgeCache, n: int) -> None:
    key = key_maker("fake", "scripted", 0.0)
    reply = CachedReply(compact_sorted_json(_REPLY), 812, 95, 0.000179, "json_schema")
    for i in range(n):
        cache.put(key(f"sha256:{i:064x}", 0), reply)
        if i % 10_000 == 0:
            cache.commit()
    cache.commit()


def replay(n: int, folder: Path, *, trace: bool = False) -> dict[str, float]:
    """Verdicts per second replaying ``n`` cached replies; with ``trace``, the Python heap's peak too."""
    cache = JudgeCache(folder / "cache.sqlite")
    _fill(cache, n)
    if trace:
        tracemalloc.start()
    start, cpu = time.perf_counter(), time.process_time()
    summary = run_judge(_replay_prompts(n), ScriptedProvider([]), out=folder / "v.jsonl", cache=cache,
                        progress=False)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = tracemalloc.get_traced_memory()[1] if trace else 0
    assert summary.cache_hits == n and summary.calls == 0, summary.describe()
    return {"wall": wall, "per_s": n / wall, "per_cpu_s": n / cpu, "heap_peak_mb": peak / 2**20,
            "rss_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def memory(sizes: tuple[int, ...]) -> dict[int, str]:
    """Each size's replay in a fresh process: ``heap peak MB, RSS peak MB``."""
    out = {}
    for n in sizes:
        done = subprocess.run([sys.executable, "-m", "benchmarks.bench_judge", "--memory-child", str(n)], cwd=ROOT,
                              capture_output=True, text=True, check=True)
        out[n] = done.stdout.strip().splitlines()[-1]
    return out


E2E_LATENCY = 0.2
E2E_SPEC = """id: pet-fee-grounded
criterion: Every fee the assistant states is backed by a tool output.
pass: Every fee stated appears in a tool output of the trace.
fail: A fee is stated that no tool output contains.
input:
  trace: [input, output]
"""


def end_to_end(items: int, transport: str = "http") -> dict[str, float]:
    """``evalkit judge run`` in its own process on ``items`` traces, 200 ms a call, concurrency 64."""
    sys.path.insert(0, str(ROOT))
    from evalkit.traces import write_jsonl
    from tests.judge.traces import leasing_trace

    proc = subprocess.Popen([sys.executable, "-m", "tests.judge.servers", "--latency", str(E2E_LATENCY)], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{proc.stdout.readline().strip()}/v1"  # type: ignore[union-attr]
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench"}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            write_jsonl([leasing_trace(f"t{i:05d}", reply=f"The pet fee is 300 dollars. item=t{i:05d}")
                         for i in range(items)], folder / "traces.jsonl")
            (folder / "spec.yaml").write_text(E2E_SPEC, encoding="utf-8")
            command = [sys.executable, "-m", "evalkit.cli", "judge", "run", "--spec", str(folder / "spec.yaml"),
                       "--traces", str(folder / "traces.jsonl"), "--out", str(folder / "v.jsonl"), "--provider",
                       "openai", "--model", "m", "--base-url", url, "--concurrency", str(CONCURRENCY),
                       "--transport", transport, "--no-progress"]
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "evalkit.cli", "judge", "run", "--help"], env=env, check=True,
                           stdout=subprocess.DEVNULL)
            startup = time.perf_counter() - started
            started, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            assert done.returncode == 0, done.stderr + done.stdout
    finally:
        proc.terminate()
        proc.wait()
    ideal = items * E2E_LATENCY / CONCURRENCY
    return {"wall": wall, "ideal": ideal, "ratio": ideal / wall, "startup": startup,
            "fixed": wall - ideal - startup, "cpu": cpu}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--replay", type=int, default=100_000)
    parser.add_argument("--only", choices=("speed", "replay", "e2e"), default=None, help="run one part")
    parser.add_argument("--e2e-items", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=1, help="measure the http transport's speed this many times")
    parser.add_argument("--memory-child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        with tempfile.TemporaryDirectory() as tmp:
            r = replay(args.memory_child, Path(tmp), trace=True)
        print(f"heap peak {r['heap_peak_mb']:.1f} MB, RSS peak {r['rss_peak_mb']:.0f} MB")
        return
    if args.only in (None, "speed"):
        http = [("http", " (target <= 1.1)")] * max(1, args.runs)
        for transport, target in (*http, ("sdk", " (the official SDK: no target)")):
            load = os.getloadavg()[0]
            s = speed(args.items, transport)
            print(f"judge calls (openai provider, transport {transport}, loopback HTTP): {args.items} items, "
                  f"{LATENCY * 1000:.0f} ms latency, concurrency {CONCURRENCY}: {s['wall']:.3f}s vs ideal "
                  f"{s['ideal']:.3f}s -> ratio {s['ratio']:.3f}{target}; CPU per call: client "
                  f"{s['cpu_ms_per_call']:.2f} ms, server {s['server_cpu_ms_per_call']:.2f} ms; "
                  f"load average {load:.1f}")
        load = os.getloadavg()[0]
        o = runner_overhead(args.items)
        print(f"judge calls (runner only, scripted 50 ms judge): {o['wall']:.3f}s vs ideal {o['ideal']:.3f}s "
              f"-> ratio {o['ratio']:.3f}; CPU per call {o['cpu_ms_per_call']:.2f} ms; load average {load:.1f}")
    if args.only in (None, "e2e"):
        for transport in ("http", "sdk"):
            load = os.getloadavg()[0]
            e = end_to_end(args.e2e_items, transport)
            print(f"judge run end to end (a new process, transport {transport}): {args.e2e_items} traces, "
                  f"{E2E_LATENCY * 1000:.0f} ms latency, concurrency {CONCURRENCY}: {e['wall']:.2f}s vs ideal "
                  f"{e['ideal']:.2f}s -> {e['ratio']:.2f} of ideal; start-up {e['startup']:.2f}s, fixed cost "
                  f"beyond it {e['fixed']:.2f}s; the command's CPU {e['cpu']:.2f}s; load average {load:.1f}")
    if args.only in (None, "replay"):
        with tempfile.TemporaryDirectory() as tmp:
            r = replay(args.replay, Path(tmp))
        load = os.getloadavg()[0]
        print(f"cache replay: {args.replay} verdicts in {r['wall']:.2f}s = {r['per_s']:,.0f} verdicts/s "
              f"({r['per_cpu_s']:,.0f} per CPU-second; load average {load:.1f} on {os.cpu_count()} CPUs) "
              f"(target >= 50,000)")
        for n, line in memory((args.replay // 10, args.replay)).items():
            print(f"memory, cache replay of {n} prompts: {line}")

if __name__ == "__main__":
    main(sys.argv[1:])
