"""The trajectory checks on the bundled sample's traces: traces per second per core, against a floor.

The sample's 300 support-agent traces (``data/sample/traces.jsonl``) are read once; the six trajectory checks
(one criterion each, configured as the sample's matrix would use them) then run over them ``--rounds`` times
through the router and into the scorecard tally, and the CPU time of that is the figure. Reading and
validating the traces is not timed (as in ``bench_checks``). The issue that brought these checks asks for at
least 5,000 traces per second per core; the last line says whether this run reached it.

Run: ``python -m benchmarks.bench_trajectory [--rounds 100]``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from evalkit.checks import build_scorecard, route, tally_outcomes
from evalkit.checks.router import decide
from evalkit.contracts.matrix import EvalMatrix
from evalkit.traces import load

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample" / "traces.jsonl"
FLOOR = 5_000
"""Traces per second per core the trajectory checks must reach together (issue 33)."""

CHECKS: list[tuple[str, dict[str, Any]]] = [
    ("tool-called", {"tool": "order_lookup", "args": {"matches": {"order_id": r"^ORD-\d{4}-\d{6}$"}}}),
    ("tool-not-called", {"tool": "issue_refund", "args": {"subset": {"amount": 0}}}),
    ("trajectory-match", {"mode": "graded", "expected": ["kb_search", "order_lookup", "issue_refund"],
                          "threshold": 0.5}),
    ("argument-correct", {"tool": "issue_refund", "schema": {
        "type": "object", "required": ["order_id", "amount"], "properties": {"amount": {"type": "number"}}}}),
    ("step-budget", {"maxModelCalls": 4, "maxToolCalls": 6, "maxSeconds": 30, "maxTokens": 4000}),
    ("no-loop", {"maxRepeats": 2}),
]


def bench_matrix() -> EvalMatrix:
    """One component, one deterministic criterion per trajectory check."""
    criteria = [{"criterionId": primitive, "dimension": "operation-correctness", "statement": primitive,
                 "checkMethod": "deterministic-script", "passCondition": primitive, "severity": "HIGH",
                 "existingCoverage": "none", "evidenceSource": f"Intended behavior: the {primitive} benchmark.",
                 "check": {"primitive": primitive, "params": params}} for primitive, params in CHECKS]
    return EvalMatrix.model_validate({"subject": "bench", "version": "v1", "generatedAt": "2026-01-01T00:00:00Z",
                                      "designPrinciples": [], "components": [
                                          {"componentId": "C1", "componentName": "agent", "componentType": "agent",
                                           "criteria": criteria}]})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=100, help="passes over the sample's traces (default 100)")
    parser.add_argument("--traces", type=Path, default=SAMPLE, help="the traces (default: the bundled sample's)")
    args = parser.parse_args(argv)
    traces = load(args.traces)
    routed = route(bench_matrix())
    tally = tally_outcomes(routed, ())
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(args.rounds):
        tally_outcomes(routed, (decide(rc, t, None) for t in traces for rc in routed), into=tally)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    done = len(traces) * args.rounds
    card = build_scorecard(routed, tally, subject="bench", matrix_version="v1", generated_at="bench",
                           trace_count=done)
    for component in card.components:  # every trace was decided by every check, and counted once
        for score in component.criteria:
            counts = score.counts
            assert sum(counts.model_dump().values()) == done, (score.criterion_id, counts)
            assert counts.errored == 0, (score.criterion_id, counts)
    rate = done / cpu
    print("criterion            pass   fail  uncertain (per round)")
    for score in card.components[0].criteria:
        c = score.counts
        print(f"{score.criterion_id:<19} {c.passed // args.rounds:>5} {c.failed // args.rounds:>6} "
              f"{c.uncertain // args.rounds:>10}")
    print(f"traces: {len(traces):,} x {args.rounds} rounds = {done:,}, x {len(routed)} checks = {done * len(routed):,}")
    print(f"trajectory checks + tally: {cpu:.2f} s CPU = {rate:,.0f} traces/s per core "
          f"({done * len(routed) / cpu:,.0f} checks/s); wall {wall:.2f} s")
    print(f"load average while running: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"floor {FLOOR:,} traces/s per core: {'reached' if rate >= FLOOR else 'NOT reached'} "
          f"({rate / FLOOR:.1f}x)")


if __name__ == "__main__":
    main()
