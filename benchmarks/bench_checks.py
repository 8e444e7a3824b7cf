"""The deterministic track: the seven code-check primitives over many small traces, and the tally.

Synthetic support-agent traces (an agent, a plan, one or two order lookups, sometimes failing and
retried, a reply) are generated in batches and validated into ``Trace`` models; each batch then runs
through the router (all seven primitives, one criterion each) and into the scorecard tally. Only the
checks and the tally are timed; generating and validating the traces is reported apart. Memory stays
flat because nothing but a batch is held: peak RSS is reported, and the Python heap peak of one batch
(tracemalloc, on a separate untimed batch since tracing slows everything down).

Run: ``python -m benchmarks.bench_checks [--traces 100000] [--batch 2000]``.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import time
import tracemalloc
from typing import Any

from evalkit.checks import build_scorecard, render_card, route, tally_outcomes
from evalkit.checks.router import decide
from evalkit.contracts.matrix import EvalMatrix
from evalkit.contracts.trace import Trace

ORDER = r"ORD-\d{4}-\d{6}"
CHECKS: list[tuple[str, str, dict[str, Any]]] = [
    ("presence", "HIGH", {"obs": "respond", "path": "output.answer"}),
    ("string-equality", "HIGH", {"actual": {"obs": "order_lookup", "path": "input.order_id"},
                                 "expected": {"obs": "$trace", "path": "input", "pattern": ORDER}}),
    ("format-validity", "MED", {"obs": "order_lookup", "path": "output.placed_at", "format": "iso-datetime"}),
    ("schema-conformance", "MED", {"obs": "respond", "path": "output", "schema": {
        "type": "object", "required": ["answer"], "properties": {"answer": {"type": "string", "minLength": 1}}}}),
    ("ref-integrity", "HIGH", {"source": {"obs": "$trace", "path": "input"},
                               "target": {"obs": "respond", "path": "output.answer"}, "pattern": ORDER}),
    ("recovery-after-failure", "MED", {}),
    ("tool-output-failure", "LOW", {}),
]


def bench_matrix() -> EvalMatrix:
    """One component, one deterministic criterion per primitive."""
    criteria = [{"criterionId": primitive, "dimension": "data-correctness", "statement": primitive,
                 "checkMethod": "deterministic-script", "passCondition": primitive, "severity": severity,
                 "existingCoverage": "none", "evidenceSource": f"Intended behavior: the {primitive} benchmark.",
                 "check": {"primitive": primitive, "params": params}}
                for primitive, severity, params in CHECKS]
    return EvalMatrix.model_validate({"subject": "bench", "version": "v1", "generatedAt": "2026-01-01T00:00:00Z",
                                      "designPrinciples": [], "components": [
                                          {"componentId": "C1", "componentName": "agent", "componentType": "agent",
                                           "criteria": criteria}]})


def small_trace(i: int, rng: random.Random) -> dict[str, Any]:
    """A small support trace as a JSON object; about 5% wrong ids and 5% failed lookups (half retried)."""
    order = f"ORD-2026-{rng.randrange(10**6):06d}"
    looked = order if rng.random() > 0.05 else f"ORD-2026-{rng.randrange(10**6):06d}"
    tid = f"b{i}"
    obs: list[dict[str, Any]] = [
        {"id": f"{tid}-1", "type": "AGENT", "name": "support-agent", "input": f"Where is {order}?"},
        {"id": f"{tid}-2", "type": "GENERATION", "name": "plan", "parentId": f"{tid}-1",
         "output": {"tool_calls": ["order_lookup"]}},
    ]
    failed = rng.random() < 0.05
    if failed:
        obs.append({"id": f"{tid}-3", "type": "TOOL", "name": "order_lookup", "parentId": f"{tid}-1",
                    "input": {"order_id": looked}, "output": {"error": "timeout"}, "level": "ERROR"})
    if not failed or rng.random() < 0.5:
        obs.append({"id": f"{tid}-4", "type": "TOOL", "name": "order_lookup", "parentId": f"{tid}-1",
                    "input": {"order_id": looked}, "output": {"order_id": looked, "status": "shipped",
                                                              "placed_at": "2026-03-02T09:00:00Z"}})
    obs.append({"id": f"{tid}-5", "type": "GENERATION", "name": "respond", "parentId": f"{tid}-1",
                "output": {"answer": f"Order {looked} has shipped."}})
    return {"id": tid, "input": f"Where is {order}?", "observations": obs}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    matrix = bench_matrix()
    routed = route(matrix)
    rng = random.Random(args.seed)

    tracemalloc.start()  # heap of one batch, generated and checked, untimed
    batch = [Trace.model_validate(small_trace(i, rng)) for i in range(args.batch)]
    list(tally_outcomes(routed, (decide(rc, t, None) for t in batch for rc in routed)).counts)
    heap_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del batch

    build_s = check_s = check_cpu = 0.0
    tally = tally_outcomes(routed, ())
    done = 0
    while done < args.traces:
        n = min(args.batch, args.traces - done)
        start = time.perf_counter()
        batch = [Trace.model_validate(small_trace(done + i, rng)) for i in range(n)]
        build_s += time.perf_counter() - start
        start, cpu = time.perf_counter(), time.process_time()
        tally_outcomes(routed, (decide(rc, t, None) for t in batch for rc in routed), into=tally)
        check_s += time.perf_counter() - start
        check_cpu += time.process_time() - cpu
        done += n
    card = build_scorecard(routed, tally, subject="bench", matrix_version="v1", generated_at="bench",
                           trace_count=done)
    # every trace was checked by every primitive and counted once on the card
    assert card.trace_count == done == args.traces, (card.trace_count, done, args.traces)
    for component in card.components:
        for score in component.criteria:
            assert sum(score.counts.model_dump().values()) == done, (score.criterion_id, score.counts)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(render_card(card))
    print(f"traces: {done:,} x {len(routed)} primitives = {done * len(routed):,} checks")
    print(f"checks + tally: {check_cpu:.2f} s CPU = {done / check_cpu:,.0f} traces/s per core "
          f"({done * len(routed) / check_cpu:,.0f} checks/s); wall {check_s:.2f} s = {done / check_s:,.0f} traces/s")
    print(f"load average while running: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
          "(a shared machine inflates both figures)")
    print(f"generating + validating traces (not in the rate): {build_s:.2f} s = {done / build_s:,.0f} traces/s")
    print(f"memory: peak RSS {rss_mb:,.0f} MB for the whole run; Python heap peak of one batch of "
          f"{args.batch:,} traces {heap_peak / 2**20:,.1f} MB")


if __name__ == "__main__":
    main()
