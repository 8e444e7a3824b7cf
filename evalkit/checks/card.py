"""The scorecard as a terminal card, at most 60 columns wide, plain ASCII (safe in any terminal and log)."""

from __future__ import annotations

from evalkit.contracts.scorecard import CriterionScore, RateInterval, RegressionSet, Scorecard

WIDTH = 60
"""Card width in columns, borders included."""

_INNER = WIDTH - 4


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _row(text: str = "") -> str:
    return f"| {_fit(text, _INNER):<{_INNER}} |"


def _split(left: str, right: str) -> str:
    left = _fit(left, _INNER - len(right) - 1)
    return _row(f"{left:<{_INNER - len(right)}}{right}")


def _rate(r: RateInterval | None) -> str:
    if r is None:
        return "  --            "
    return f"{r.rate:5.3f} {r.lo:.2f}-{r.hi:.2f}"


def _flags(c: CriterionScore) -> str:
    n = c.counts
    parts = [f"{tag}{v}" for tag, v in (("F", n.failed), ("U", n.uncertain), ("E", n.errored), ("M", n.missing),
                                         ("S", n.skipped)) if v]
    return " ".join(parts)


REGRESSIONS_LISTED = 8
"""Regression cases the card names (failing again first, then undecided, then not run); the rest are counted."""
_SHOWN = {"fail": "FAIL", "incomplete": "?", "not-run": "-"}


def _regression_rows(reg: RegressionSet) -> list[str]:
    """The regression set: a head with the worst result, the counts, then each case not fixed."""
    worst = "FAIL" if reg.failed else "INCOMPLETE" if reg.incomplete or reg.not_run else "PASS"
    rows = [_split(f"REGRESSIONS {len(reg.cases)} case(s) from past failures", worst),
            _row(f" fixed {reg.passed}, failing again {reg.failed}, undecided {reg.incomplete}, "
                 f"not run {reg.not_run}")]
    order = {"fail": 0, "incomplete": 1, "not-run": 2}
    open_cases = sorted((c for c in reg.cases if c.result != "pass"), key=lambda c: order[c.result])
    for c in open_cases[:REGRESSIONS_LISTED]:
        which = c.failed_criteria if c.result == "fail" else c.undecided_criteria
        origin = f" from {c.origin_trace_id}" if c.origin_trace_id else ""
        rows.append(_row(f" {_SHOWN[c.result]:<4} {c.case_id}{origin} {' '.join(which)}".rstrip()))
    if len(open_cases) > REGRESSIONS_LISTED:
        rows.append(_row(f" and {len(open_cases) - REGRESSIONS_LISTED} more (scorecard.json regressions)"))
    return rows


def render_card(card: Scorecard) -> str:
    """The scorecard as lines of at most :data:`WIDTH` columns: run verdict, then each component with its
    criteria (severity, id, pass rate and Wilson interval, outcome flags, the corrected rate below when
    there is one, and the judge that decided it: provider, model, temperature, the first 8 hex digits of its
    prompt digest), then the regression set (cases derived from past failures: fixed, failing again, undecided,
    not run; those not fixed named), then the warnings. Flags: F failed, U uncertain, E errored, M missing,
    S skipped."""
    rule = "+" + "-" * (WIDTH - 2) + "+"
    lines = [rule, _split(f"SCORECARD {card.subject}", card.verdict.upper()),
             _row(f"matrix {card.matrix_version}, {card.trace_count} traces, {card.generated_at}"), rule]
    for comp in card.components:
        lines.append(_split(f"{comp.component_id} {comp.component_name}", comp.verdict.upper()))
        for c in comp.criteria:
            head = f" {c.severity:<4} {_fit(c.criterion_id, 19):<19} {_rate(c.pass_rate)}"
            lines.append(_row(f"{head} {_flags(c)}".rstrip()))
            if c.corrected is not None:
                lines.append(_row(f"      corrected (judge validated) {_rate(c.corrected)}"))
            for j in c.judges:
                digest = (j.prompt_digest or "no digest").removeprefix("sha256:")[:8]
                lines.append(_row(f"      judge {j.provider} {j.model} t={j.temperature:g} {digest}"))
        for reason in comp.reasons:
            lines.append(_row(f"  ! {reason}"))
    lines.append(rule)
    if card.regressions is not None:
        lines += _regression_rows(card.regressions)
        lines.append(rule)
    for warning in card.warnings:
        lines.append(_row(f"warn: {warning}"))
    if card.warnings:
        lines.append(rule)
    lines.append(_row("rate = pass/(pass+fail), Wilson CI; counts F U E M S"))
    lines.append(rule)
    return "\n".join(lines)
