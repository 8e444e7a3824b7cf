"""When a judge counts as validated: the thresholds, said once, for the CLI, the notebook and the ledger."""

from __future__ import annotations

from evalkit.calibration.metrics import Confusion

MIN_RATE = 0.9
"""TPR and TNR a validated judge reaches on test (validate-evaluator: "target > 0.9 each")."""

MIN_LABELS = 60
"""Test labels needed to validate (validate-evaluator: fewer than 60 gives wide intervals)."""


def judge_shortfalls(conf: Confusion) -> list[str]:
    """Why a judge with this test confusion is not validated (empty when it is)."""
    out = []
    if conf.total < MIN_LABELS:
        out.append(f"only {conf.total} usable test labels (need at least {MIN_LABELS})")
    for name, rate in (("TPR", conf.tpr), ("TNR", conf.tnr)):
        if rate is None:
            out.append(f"{name} undefined (no human {'passes' if name == 'TPR' else 'fails'} in test)")
        elif rate < MIN_RATE:
            out.append(f"{name} {rate:.3f} < {MIN_RATE}")
    return out


def judge_status(conf: Confusion) -> str:
    """``validated`` when the judge has no shortfall on this test confusion, else ``unvalidated``."""
    return "unvalidated" if judge_shortfalls(conf) else "validated"
