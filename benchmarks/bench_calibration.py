"""Judge calibration: speed against judgy, and how often each interval method covers the truth.

Speed: ``corrected_pass_rate(method="bootstrap")`` against ``judgy.estimate_success_rate`` on the
same inputs, both with 20,000 resamples, as a ratio measured in this run (target: 40x or more).

Coverage: simulated scenarios with a known true pass rate. Each draws a test-set size (40-200), a
true pass rate (0.5-0.95), the judge's TPR and TNR (0.7-0.95 each) and an unlabeled-set size
(100-10,000, log-uniform); then human test labels, the judge's test predictions and its predictions
on the unlabeled traces. An interval covers when it contains the true rate (the rate of the process
that produced the traces, not the share in the drawn sample). Scenarios whose test set lacks a class
or has TPR + TNR <= 1 yield no interval for any method; they are counted apart.

Run: ``python -m benchmarks.bench_calibration [--scenarios 2000] [--seed 0]``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from evalkit.calibration import METHODS, corrected_pass_rate

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "recipe_chatbot_hw3"
NOMINAL = 0.95


def _best_of(fn: Callable[[], object], repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _simulate(rng: np.random.Generator, m: int, theta: float, tpr: float, tnr: float,
              n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    labels = (rng.random(m) < theta).astype(np.int8)
    preds = np.where(labels == 1, rng.random(m) < tpr, rng.random(m) >= tnr).astype(np.int8)
    p_judge = theta * tpr + (1 - theta) * (1 - tnr)
    return labels, preds, (rng.random(n) < p_judge).astype(np.int8)


def speed(judgy_repeats: int = 3) -> list[tuple[str, float, float, tuple, tuple]]:
    """``(case, judgy seconds, evalkit seconds, judgy result, evalkit result)`` per input set.

    Times are the best of several runs; results are ``(theta, lower, upper)``.
    """
    import judgy

    cases = {"simulated: 100 test pairs, 2400 unlabeled": _simulate(np.random.default_rng(7), 100, 0.8,
                                                                     0.9, 0.85, 2400)}
    real = REALDATA / "judgy_test_data.json"
    if real.exists():  # recipe-chatbot hw3: 46 test pairs and 2400 unlabeled verdicts, 85.67% passing
        data = json.loads(real.read_text())
        cases["recipe-chatbot hw3 (real): 46 test pairs, 2400 unlabeled"] = (
            np.array(data["test_labels"]), np.array(data["test_preds"]),
            np.array([1] * 2056 + [0] * 344))
    rows = []
    for name, (labels, preds, unlabeled) in cases.items():
        np.random.seed(0)
        t_judgy = _best_of(lambda a=labels, b=preds, c=unlabeled: judgy.estimate_success_rate(a, b, c),
                           judgy_repeats)
        t_ours = _best_of(lambda a=labels, b=preds, c=unlabeled: corrected_pass_rate(
            a, b, c, method="bootstrap"), 20)
        np.random.seed(0)
        theirs = judgy.estimate_success_rate(labels, preds, unlabeled)
        r = corrected_pass_rate(labels, preds, unlabeled, method="bootstrap")
        rows.append((name, t_judgy, t_ours, theirs, (r.theta, r.ci.lo, r.ci.hi)))
    return rows


@dataclass
class _Tally:
    scenarios: int = 0
    covered: int = 0
    below: int = 0
    above: int = 0
    widths: list[float] = field(default_factory=list)

    def add(self, lower: float, upper: float, truth: float) -> None:
        self.scenarios += 1
        self.covered += lower <= truth <= upper
        self.below += truth < lower
        self.above += truth > upper
        self.widths.append(upper - lower)

    @property
    def coverage(self) -> float:
        return self.covered / self.scenarios if self.scenarios else math.nan


def coverage(scenarios: int, seed: int = 0) -> tuple[dict[str, _Tally], dict[tuple[str, str], _Tally], int]:
    """Tallies per method, per (method, bucket), and the number of scenarios with no interval."""
    rng = np.random.default_rng(seed)
    overall = {m: _Tally() for m in METHODS}
    buckets: dict[tuple[str, str], _Tally] = {}
    invalid = 0
    for i in range(scenarios):
        m = int(rng.integers(40, 201))
        theta = float(rng.uniform(0.5, 0.95))
        tpr, tnr = (float(x) for x in rng.uniform(0.7, 0.95, size=2))
        n = int(round(10 ** rng.uniform(2, 4)))
        labels, preds, unlabeled = _simulate(rng, m, theta, tpr, tnr, n)
        results = {meth: corrected_pass_rate(labels, preds, unlabeled, method=meth, seed=i) for meth in METHODS}
        if not all(r.valid for r in results.values()):
            invalid += 1
            continue
        for meth, r in results.items():
            overall[meth].add(r.ci.lo, r.ci.hi, theta)
            for bucket in (f"unlabeled {'< 1000' if n < 1000 else '>= 1000'}",
                           f"test {'< 100' if m < 100 else '>= 100'}",
                           f"pass rate {'< 0.8' if theta < 0.8 else '>= 0.8'}"):
                buckets.setdefault((meth, bucket), _Tally()).add(r.ci.lo, r.ci.hi, theta)
    return overall, buckets, invalid


def _print_coverage(overall: dict[str, _Tally], buckets: dict[tuple[str, str], _Tally], invalid: int,
                    scenarios: int) -> None:
    valid = next(iter(overall.values())).scenarios
    se = math.sqrt(NOMINAL * (1 - NOMINAL) / valid) if valid else math.nan
    print(f"{scenarios} scenarios: {valid} with an interval, {invalid} without (test set missing a class or "
          f"TPR + TNR <= 1); Monte Carlo SE of a coverage near 95%: {se:.1%}")
    print(f"  {'method':<16}{'coverage':>10}{'vs 95%':>9}{'truth<lo':>10}{'truth>hi':>10}{'mean width':>12}")
    for meth, t in overall.items():
        print(f"  {meth:<16}{t.coverage:>10.1%}{(t.coverage - NOMINAL) * 100:>+8.1f}p"
              f"{t.below:>10}{t.above:>10}{float(np.mean(t.widths)):>12.3f}")
    names = sorted({b for _, b in buckets})
    print("\n  coverage by scenario kind:")
    print(f"  {'method':<16}" + "".join(f"{b:>19}" for b in names))
    for meth in overall:
        cells = []
        for b in names:
            t = buckets.get((meth, b))
            cells.append(f"{t.coverage:>11.1%} ({t.scenarios:>4})" if t else f"{'-':>19}")
        print(f"  {meth:<16}" + "".join(f"{c:>19}" for c in cells))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_calibration", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=2000, help="coverage scenarios (default: 2000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the coverage study (default: 0)")
    parser.add_argument("--skip-speed", action="store_true", help="run the coverage study only")
    args = parser.parse_args(argv)

    if not args.skip_speed:
        print("speed: corrected_pass_rate(method='bootstrap') vs judgy.estimate_success_rate, 20000 resamples")
        for name, t_judgy, t_ours, theirs, ours in speed():
            print(f"  {name}: judgy {t_judgy * 1000:.0f} ms, evalkit {t_ours * 1000:.1f} ms, "
                  f"{t_judgy / t_ours:.0f}x faster")
            print(f"    judgy   {theirs[0]:.4f} [{theirs[1]:.4f}, {theirs[2]:.4f}]\n"
                  f"    evalkit {ours[0]:.4f} [{ours[1]:.4f}, {ours[2]:.4f}]")
    start = time.perf_counter()
    overall, buckets, invalid = coverage(args.scenarios, args.seed)
    print(f"\ncoverage of the 95% intervals ({time.perf_counter() - start:.0f} s):")
    _print_coverage(overall, buckets, invalid, args.scenarios)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
