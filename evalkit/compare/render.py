"""What ``evalkit compare`` and ``evalkit gate`` print: a text table, and Markdown for a CI log or PR comment."""

from __future__ import annotations

from evalkit.compare.comparison import RunComparison
from evalkit.compare.gate import GateResult

MAX_FLIPS_SHOWN = 20
"""Flipped items listed per criterion in the text output before '... and N more'."""

CRITIQUE_CHARS = 60
"""Critique characters shown per side in the flip list."""


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1%}"


def _signed(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.1%}"


def _short(text: str | None) -> str:
    if text is None:
        return "(no critique)"
    text = " ".join(text.split())
    return text if len(text) <= CRITIQUE_CHARS else text[: CRITIQUE_CHARS - 3] + "..."


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def render_comparison(comparison: RunComparison) -> str:
    """The comparison as plain text: one row per criterion, then the flipped items with both critiques."""
    c0 = comparison
    lines = [f"old: {c0.old_name}   new: {c0.new_name}   paired on (criterion, {c0.join_on})", ""]
    rows = [["criterion", "n", "old", "new", "new-old", "interval", "P->F", "F->P", "McNemar p", "uncertain",
             "corrected new-old"]]
    for c in c0.criteria:
        iv, cd = c.interval, c.corrected
        corrected = "-" if cd is None else (
            f"n/a ({cd.reason})" if cd.ci is None else
            f"{_signed(cd.difference)} [{_signed(cd.ci.lo)}, {_signed(cd.ci.hi)}]")
        rows.append([c.criterion_id, str(c.table.n), _pct(c.table.old_rate), _pct(c.table.new_rate),
                     _signed(c.table.difference),
                     "n/a" if iv.ci is None else f"[{_signed(iv.ci.lo)}, {_signed(iv.ci.hi)}]",
                     str(c.table.pass_to_fail), str(c.table.fail_to_pass), f"{c.mcnemar.p_two_sided:.3g}",
                     f"{c.uncertain} ({c.uncertain_old_only}/{c.uncertain_new_only}/{c.uncertain_both})",
                     corrected])
    lines += _table(rows)
    level = c0.criteria[0].interval.level if c0.criteria else 0.95
    lines += ["", f"interval: {level:.0%} paired bootstrap of new-old; McNemar: exact, two-sided; "
              "uncertain (old only/new only/both) left out of the table"]
    for c in c0.criteria:
        if c.only_old or c.only_new:
            lines.append(f"{c.criterion_id}: {len(c.only_old)} only in {c0.old_name}, "
                         f"{len(c.only_new)} only in {c0.new_name} (not compared)")
            for side, keys in ((c0.old_name, c.only_old), (c0.new_name, c.only_new)):
                if keys:
                    lines.append(f"  only in {side}: {', '.join(keys)}")
    for c in c0.criteria:
        if not c.flips:
            continue
        lines += ["", f"flips in {c.criterion_id} ({len(c.flips)}):"]
        for f in c.flips[:MAX_FLIPS_SHOWN]:
            lines.append(f"  {f.key}: {f.old_result} -> {f.new_result} | old: {_short(f.old_critique)} "
                         f"| new: {_short(f.new_critique)}")
        if len(c.flips) > MAX_FLIPS_SHOWN:
            lines.append(f"  ... and {len(c.flips) - MAX_FLIPS_SHOWN} more")
    lines += [f"note: {n}" for n in c0.notes]
    return "\n".join(lines) + "\n"


def render_gate_markdown(result: GateResult) -> str:
    """The gate's verdict as Markdown for a CI job's log or a pull-request comment."""
    comp = result.comparison
    head = {"pass": "PASSED", "fail": "FAILED", "incomplete": "INCOMPLETE"}[result.outcome]
    failed = [c for c in result.criteria if c.failed]
    lines = [f"## evalkit gate: {head}", "",
             f"`{comp.new_name}` against baseline `{comp.old_name}`, paired on (criterion, {comp.join_on}). "
             f"A criterion fails when its pass rate dropped by more than {result.max_drop:.1%} with "
             f"one-sided McNemar p < {result.alpha:g} and the {1 - result.alpha:.0%} upper bound of "
             f"new-old below -{result.max_drop:.1%}. A criterion with fewer than {result.min_decided} items "
             "decided in both runs is incomplete: the gate could not have failed it.", ""]
    if failed:
        lines += [f"**{len(failed)} of {len(result.criteria)} criteria failed:** "
                  + ", ".join(f"`{c.comparison.criterion_id}`" for c in failed), ""]
    incomplete = [c for c in result.criteria if c.outcome == "incomplete"]
    if incomplete:
        lines += [f"**{len(incomplete)} of {len(result.criteria)} criteria incomplete** (not a pass): "
                  + ", ".join(f"`{c.comparison.criterion_id}`" for c in incomplete), ""]
    lines += ["| criterion | n | baseline | run | change | upper bound | P→F | F→P | McNemar p (drop) "
              "| uncertain | gate |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for g in result.criteria:
        c = g.comparison
        mark = {"fail": "❌ fail", "incomplete": "⚠️ incomplete", "pass": "✅ pass"}[g.outcome]
        lines.append(f"| `{c.criterion_id}` | {c.table.n} | {_pct(c.table.old_rate)} | {_pct(c.table.new_rate)} "
                     f"| {_signed(c.table.difference)} | {_signed(g.upper)} | {c.table.pass_to_fail} "
                     f"| {c.table.fail_to_pass} | {c.mcnemar.p_drop:.3g} | {c.uncertain} | {mark}: {g.reason} |")
    extra = [f"- `{c.comparison.criterion_id}`: {len(c.comparison.only_old)} only in baseline, "
             f"{len(c.comparison.only_new)} only in run (not compared)"
             for c in result.criteria if c.comparison.only_old or c.comparison.only_new]
    if extra:
        lines += ["", "Unpaired items:", *extra]
    lines += ["", f"Exit status {result.exit_status}."]
    return "\n".join(lines) + "\n"
