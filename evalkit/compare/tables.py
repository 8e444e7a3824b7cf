"""A run comparison as table rows and chart rows, for a notebook section or a report.

The same numbers ``evalkit compare`` prints (:mod:`evalkit.compare.render`), shaped for polars and altair:
one row per criterion, one row per flipped item with both critiques side by side, and the difference
in pass rate with its paired interval as a chart row.
"""

from __future__ import annotations

import math
from typing import Any

from evalkit.compare.comparison import RunComparison


def comparison_rows(comparison: RunComparison) -> list[dict[str, Any]]:
    """Per criterion: paired items, both rates, new-old with its paired bootstrap interval, flips, McNemar's p."""
    rows = []
    for c in comparison.criteria:
        t, ci = c.table, c.interval.ci
        rows.append({"criterion": c.criterion_id, "paired": t.n, comparison.old_name: t.old_rate,
                     comparison.new_name: t.new_rate, "new-old": t.difference,
                     "lo": None if ci is None else ci.lo, "hi": None if ci is None else ci.hi,
                     "pass->fail": t.pass_to_fail, "fail->pass": t.fail_to_pass,
                     "McNemar p": c.mcnemar.p_two_sided, "uncertain": c.uncertain,
                     f"only in {comparison.old_name}": len(c.only_old),
                     f"only in {comparison.new_name}": len(c.only_new)})
    return rows


def difference_rows(comparison: RunComparison) -> list[dict[str, Any]]:
    """Chart rows ``{label, value, lo, hi, kind}`` of new-old per criterion (criteria without pairs left out)."""
    return [{"label": c.criterion_id, "value": c.table.difference, "lo": c.interval.ci.lo, "hi": c.interval.ci.hi,
             "kind": "significant" if c.mcnemar.p_two_sided < 0.05 else "not significant"}
            for c in comparison.criteria if c.table.difference is not None and c.interval.ci is not None]


def difference_domain(rows: list[dict[str, Any]], *, step: float = 0.05) -> tuple[float, float]:
    """A symmetric axis around 0 that holds every interval of :func:`difference_rows`, in ``step`` units."""
    reach = max((max(abs(r["lo"]), abs(r["hi"])) for r in rows), default=step)
    edge = min(1.0, round(math.ceil(reach / step - 1e-9) * step, 10))
    return -edge, edge


def flip_rows(comparison: RunComparison) -> list[dict[str, Any]]:
    """Every flipped item: criterion, key, the two results and the two critiques side by side."""
    return [{"criterion": c.criterion_id, "item": f.key, comparison.old_name: f.old_result,
             comparison.new_name: f.new_result, f"{comparison.old_name} critique": f.old_critique,
             f"{comparison.new_name} critique": f.new_critique}
            for c in comparison.criteria for f in c.flips]
