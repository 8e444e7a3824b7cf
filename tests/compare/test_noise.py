"""Judge noise from repeated verdicts: flip rate, unstable share, and the widened corrected interval."""

from __future__ import annotations

import json

import pytest

from evalkit.calibration import corrected_pass_rate
from evalkit.compare import judge_noise, repeats_from_files, repeats_from_runs, widen_for_noise
from tests.compare.conftest import run_of


def test_flip_rate_and_unstable_share_from_three_verdict_files(write_run):
    # items: t000 ppp (stable), t001 ppf, t002 pff, t003 ffu (uncertain abstains: ff stable), t004 uuu
    files = [write_run("r0.jsonl", run_of("pppfu")), write_run("r1.jsonl", run_of("ppffu")),
             write_run("r2.jsonl", run_of("pffuu"))]
    (noise,) = judge_noise(repeats_from_files(files)).values()
    assert noise.items == 5 and noise.repeated_items == 4 and noise.abstentions == 4
    assert noise.unstable_items == 2 and noise.unstable_share == 0.5
    # pairwise disagreement: ppp 0, ppf 2*2*1/6, pff 2/3, ff 0 -> mean 1/3
    assert noise.flip_rate == pytest.approx(1 / 3)
    assert noise.repeat_pass_rates == pytest.approx((3 / 4, 2 / 4, 1 / 3))  # the uncertain repeats abstain
    mean = (3 / 4 + 2 / 4 + 1 / 3) / 3
    assert noise.rate_sd == pytest.approx((((3 / 4 - mean) ** 2 + (2 / 4 - mean) ** 2 + (1 / 3 - mean) ** 2) / 2) ** 0.5)


def test_repeats_from_a_judge_run_sidecar(tmp_path):
    rows = [{"criterionId": "c", "traceId": t, "repeat": r, "provider": "fake", "model": "m", "temperature": 0,
             "promptDigest": "sha256:x", "result": res, "inputTokens": None, "outputTokens": None,
             "attempts": 1, "cached": False, "costUsd": None, "structuredOutput": None,
             **({"error": "timeout"} if res is None else {})}
            for t, results in (("a", ["pass", "fail"]), ("b", ["pass", None])) for r, res in enumerate(results)]
    path = tmp_path / "v.runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    noise = judge_noise(repeats_from_runs(path))["c"]
    assert (noise.repeated_items, noise.unstable_items, noise.abstentions, noise.flip_rate) == (1, 1, 1, 1.0)


def test_the_corrected_interval_widens_with_judge_noise_and_not_without():
    rate = corrected_pass_rate([1] * 50 + [0] * 50, [1] * 45 + [0] * 5 + [0] * 47 + [1] * 3, [1] * 70 + [0] * 30)
    noisy = judge_noise([("c", f"t{i}", r, "pass" if (i + r) % 4 else "fail") for i in range(40) for r in range(3)]
                        + [("c", "x", 0, "pass"), ("c", "x", 1, "pass"), ("c", "x", 2, "fail")])["c"]
    assert noisy.rate_sd > 0
    widened = widen_for_noise(rate, noisy)
    assert widened is not None and widened.level == rate.level
    lo, hi = widened.lo, widened.hi
    assert lo < rate.ci.lo and hi > rate.ci.hi
    extra = 1.959963984540054 * noisy.rate_sd / (rate.tpr + rate.tnr - 1)
    assert rate.theta - lo == pytest.approx(((rate.theta - rate.ci.lo) ** 2 + extra ** 2) ** 0.5)
    steady = judge_noise([("c", f"t{i}", r, "pass") for i in range(5) for r in range(3)])["c"]
    assert steady.rate_sd == 0 and widen_for_noise(rate, steady) == rate.ci
    single = judge_noise([("c", "t", 0, "pass")])["c"]
    assert single.rate_sd is None and widen_for_noise(rate, single) is None
