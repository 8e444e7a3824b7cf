"""When a judge counts as validated: the thresholds, said once, for the CLI, the notebook and the ledger."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only annotations name it, and the metrics import pydantic: the CLI reads GATES from here
    from evalkit.calibration.metrics import Confusion

MIN_RATE = 0.9
"""TPR and TNR a validated judge reaches on test (validate-evaluator: "target > 0.9 each")."""

MIN_LABELS = 60
"""Test labels needed to validate (validate-evaluator: fewer than 60 gives wide intervals)."""

MIN_PER_CLASS = 20
"""Human passes and human fails, each, needed on test (write-judge-prompt's prerequisite: ">= 20 Pass +
>= 20 Fail"): 59 passes and 1 fail measure TNR on one trace, whatever the total."""


GATES = ("point", "lower-bound")
"""How TPR and TNR meet MIN_RATE: the point estimates, or the lower ends of their Wilson intervals
(awslabs' agent-evaluation gates on the lower bound: a judge measured on few labels cannot pass on luck)."""


def judge_shortfalls(conf: Confusion, gate: str = "point") -> list[str]:
    """Why a judge with this test confusion is not validated (empty when it is): too few usable test labels
    in all, too few of either class (with how many more of which are needed), or TPR/TNR below the bar.

    Args:
        conf: the judge against human labels on the test split.
        gate: ``point`` (TPR and TNR >= MIN_RATE) or ``lower-bound`` (their interval's lower ends >= MIN_RATE).
    """
    if gate not in GATES:
        raise ValueError(f"gate: one of {', '.join(GATES)} (got {gate!r})")
    out = []
    if conf.total < MIN_LABELS:
        out.append(f"only {conf.total} usable test labels (need at least {MIN_LABELS})")
    for label, plural, have in (("pass", "passes", conf.positives), ("fail", "fails", conf.negatives)):
        if have < MIN_PER_CLASS:
            out.append(f"only {have} human {plural} on test (need at least {MIN_PER_CLASS} of each class: "
                       f"{MIN_PER_CLASS - have} more test label(s) of {label}, judged pass or fail)")
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
