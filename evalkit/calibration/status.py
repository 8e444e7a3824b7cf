"""When a judge counts as validated: the thresholds, said once, for the CLI, the notebook and the ledger."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only annotations name it, and the metrics import pydantic: the CLI reads GATES from here
    from evalkit.calibration.metrics import Confusion

MIN_RATE = 0.9
"""TPR and TNR a validated judge reaches on test (validate-evaluator: "target > 0.9 each")."""

MIN_LABELS = 60
"""Test labels needed to validate (validate-evaluator: fewer than 60 gives wide intervals)."""


GATES = ("point", "lower-bound")
"""How TPR and TNR meet MIN_RATE: the point estimates, or the lower ends of their Wilson intervals
(awslabs' agent-evaluation gates on the lower bound: a judge measured on few labels cannot pass on luck)."""


def judge_shortfalls(conf: Confusion, gate: str = "point") -> list[str]:
    """Why a judge with this test confusion is not validated (empty when it is).

    Args:
        conf: the judge against human labels on the test split.
        gate: ``point`` (TPR and TNR >= MIN_RATE) or ``lower-bound`` (their interval's lower ends >= MIN_RATE).
    """
    if gate not in GATES:
        raise ValueError(f"gate: one of {', '.join(GATES)} (got {gate!r})")
    out = []
    if conf.total < MIN_LABELS:
        out.append(f"only {conf.total} usable test labels (need at least {MIN_LABELS})")
    for name, rate, ci in (("TPR", conf.tpr, conf.tpr_ci), ("TNR", conf.tnr, conf.tnr_ci)):
        if rate is None or ci is None:
            out.append(f"{name} undefined (no human {'passes' if name == 'TPR' else 'fails'} in test)")
        elif gate == "point" and rate < MIN_RATE:
            out.append(f"{name} {rate:.3f} < {MIN_RATE}")
        elif gate == "lower-bound" and ci.lo < MIN_RATE:
            out.append(f"{name} lower bound {ci.lo:.3f} < {MIN_RATE} ({name} {rate:.3f}, {ci.level:.0%} interval)")
    return out


def judge_status(conf: Confusion, gate: str = "point") -> str:
    """``validated`` when the judge has no shortfall on this test confusion, else ``unvalidated``."""
    return "unvalidated" if judge_shortfalls(conf, gate) else "validated"
