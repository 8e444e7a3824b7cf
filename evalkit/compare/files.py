"""``evalkit compare OLD NEW``'s library half: two verdict files compared, cut to the criteria asked for, and
the comparison as the command's camelCase JSON."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from evalkit.compare.comparison import RunComparison, compare_runs
from evalkit.compare.runs import JoinOn, load_run
from evalkit.errors import InputError
from evalkit.io import camel_json


def compare_files(old: str | Path, new: str | Path, *, criteria: Iterable[str] = (), join_on: JoinOn = "trace",
                  unpaired: bool = False, seed: int = 0, iterations: int = 10_000) -> RunComparison:
    """Compare two runs' verdict files per criterion (see :func:`compare_runs`), named by their file names.

    Args:
        old: the baseline run's verdicts (criterion-verdict JSONL).
        new: the new run's verdicts.
        criteria: compare only these criteria (default: every criterion either run judged).
        join_on: pair on the trace id or on the dataset case.
        unpaired: allow items judged in only one run.
        seed: bootstrap seed.
        iterations: bootstrap resamples.

    Raises:
        InputError: a criterion neither run judged, both runs empty, or what :func:`load_run` refuses.
    """
    old_run = load_run(old, name=Path(old).name, join_on=join_on)
    new_run = load_run(new, name=Path(new).name, join_on=join_on)
    wanted = set(criteria)
    judged = {c for c, _ in old_run.by_key} | {c for c, _ in new_run.by_key}
    missing = sorted(wanted - judged)
    if missing:
        raise InputError(f"no verdict on criterion {', '.join(map(repr, missing))} in either run "
                         f"(they judge {', '.join(sorted(judged)) or 'nothing'})", path="--criterion")

    def keep(run: Any) -> list[Any]:
        return [v for (crit, _), v in run.by_key.items() if not wanted or crit in wanted]

    comparison = compare_runs(keep(old_run), keep(new_run), join_on=join_on, unpaired=unpaired, seed=seed,
                              iterations=iterations, old_name=Path(old).name, new_name=Path(new).name)
    comparison = replace(comparison, notes=old_run.notes + new_run.notes)  # the files' notes
    if not comparison.criteria:
        raise InputError("no verdicts to compare: both runs are empty", file=str(old))
    return comparison


def comparison_json(comparison: RunComparison) -> dict[str, Any]:
    """The comparison as camelCase JSON: the numbers ``render_comparison`` prints and every flip."""
    criteria = []
    for c in comparison.criteria:
        t, iv, cd = c.table, c.interval, c.corrected
        criteria.append({
            "criterionId": c.criterion_id, "n": t.n, "oldRate": t.old_rate, "newRate": t.new_rate,
            "difference": t.difference,
            "table": {"bothPass": t.both_pass, "passToFail": t.pass_to_fail, "failToPass": t.fail_to_pass,
                      "bothFail": t.both_fail},
            "interval": camel_json(iv),
            "mcnemar": {"pTwoSided": c.mcnemar.p_two_sided, "pDrop": c.mcnemar.p_drop},
            "uncertain": {"oldOnly": c.uncertain_old_only, "newOnly": c.uncertain_new_only,
                          "both": c.uncertain_both},
            "corrected": None if cd is None else camel_json(cd),
            "flips": [{"key": f.key, "old": f.old_result, "new": f.new_result, "oldCritique": f.old_critique,
                       "newCritique": f.new_critique} for f in c.flips],
            "onlyOld": list(c.only_old), "onlyNew": list(c.only_new),
        })
    return {"old": comparison.old_name, "new": comparison.new_name, "joinOn": comparison.join_on,
            "unpaired": comparison.unpaired, "criteria": criteria, "notes": list(comparison.notes)}
