"""``evalkit history check``: is the latest run of each series worse than the one before, beyond noise?

The two runs' kept verdicts are paired item by item and put through the regression gate of
:mod:`evalkit.compare` (McNemar's exact test and the paired bootstrap; see its rule), so the history
check and ``evalkit gate`` decide alike. A series whose latest run cannot be compared (its first run, or
a run without per-item verdicts) is ``incomplete``, never a pass: a check that could not have failed has
not passed. A judge that changed between the two runs is named beside the verdict, since the drop may
then be the judge's rather than the agent's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evalkit.compare import DEFAULT_ALPHA, DEFAULT_MAX_DROP, GateResult, gate, render_gate_markdown
from evalkit.contracts.history import HistoryRecord
from evalkit.errors import InputError
from evalkit.history.store import read_history

EXIT_STATUS = {"pass": 0, "fail": 1, "incomplete": 3}
"""As ``evalkit gate``: 1 when a series got worse, 3 when one could not be checked, 0 otherwise."""


@dataclass(frozen=True)
class SeriesCheck:
    """The latest run of one series against the run before it."""

    series: str
    source: str
    latest: HistoryRecord
    latest_number: int
    previous: HistoryRecord | None
    gate: GateResult | None
    reason: str | None = None
    """Why the series could not be checked (``gate`` is None then)."""

    @property
    def outcome(self) -> str:
        return "incomplete" if self.gate is None else self.gate.outcome

    @property
    def failed_criteria(self) -> list[str]:
        return [] if self.gate is None else [c.comparison.criterion_id for c in self.gate.criteria if c.failed]

    @property
    def judge_changes(self) -> list[str]:
        """Criteria whose judge differs between the two runs (model or prompt)."""
        if self.previous is None:
            return []
        before = {c.criterion: c.judge for c in self.previous.headline.criteria}
        return [c.criterion for c in self.latest.headline.criteria
                if c.criterion in before and before[c.criterion] != c.judge]


@dataclass(frozen=True)
class HistoryCheck:
    """Every series checked; the outcome is the worst series' (fail > incomplete > pass)."""

    folder: Path
    series: tuple[SeriesCheck, ...]

    @property
    def outcome(self) -> str:
        outcomes = {s.outcome for s in self.series}
        return "fail" if "fail" in outcomes else "incomplete" if "incomplete" in outcomes or not outcomes else "pass"

    @property
    def exit_status(self) -> int:
        return EXIT_STATUS[self.outcome]


def _check_series(folder: Path, records: Sequence[HistoryRecord], *, max_drop: float, alpha: float,
                  seed: int) -> SeriesCheck:
    from evalkit.calibration import read_verdicts

    latest = records[-1]
    previous = records[-2] if len(records) > 1 else None
    base = {"series": latest.series, "source": latest.source, "latest": latest, "latest_number": len(records),
            "previous": previous}
    if previous is None:
        return SeriesCheck(**base, gate=None, reason="its first recorded run: nothing to compare it with")
    missing = [name for name, r in (("latest", latest), ("previous", previous)) if r.verdicts is None]
    if missing:
        return SeriesCheck(**base, gate=None, reason=f"the {' and '.join(missing)} run kept no per-item verdicts "
                                                     "(its subject names no `verdicts`): runs cannot be paired")
    result = gate(read_verdicts(folder / latest.verdicts), read_verdicts(folder / previous.verdicts),
                  max_drop=max_drop, alpha=alpha, unpaired=True, seed=seed)
    return SeriesCheck(**base, gate=result)


def check_history(folder: str | Path, *, series: str | None = None, max_drop: float = DEFAULT_MAX_DROP,
                  alpha: float = DEFAULT_ALPHA, seed: int = 0) -> HistoryCheck:
    """Check the latest run of every series (or of one) against the run before it.

    Args:
        folder: the history folder.
        series: check only this subject's series.
        max_drop: the tolerated absolute drop in pass rate (as ``evalkit gate --max-drop``).
        alpha: the one-sided significance level.
        seed: the paired bootstrap's seed.

    Raises:
        InputError: no history in the folder, or no record of ``series``.
    """
    records = read_history(folder)
    if not records:
        raise InputError("no run history here: record runs with evalkit run, eval run or batch (--history)",
                         file=str(Path(folder) / "history.jsonl"))
    by_series: dict[tuple[str, str], list[HistoryRecord]] = {}
    for r in records:
        if series is None or r.series == series:
            by_series.setdefault((r.series, r.source), []).append(r)
    if not by_series:
        known = sorted({r.series for r in records})
        raise InputError(f"no run of {series!r} in the history (series: {', '.join(known)})", path="--series")
    checks = tuple(_check_series(Path(folder), rs, max_drop=max_drop, alpha=alpha, seed=seed)
                   for _, rs in sorted(by_series.items()))
    return HistoryCheck(Path(folder), checks)


def _when(record: HistoryRecord, number: int) -> str:
    return f"run {number}" + (f" ({record.run_at})" if record.run_at else "")


def render_history_check(check: HistoryCheck) -> str:
    """The check as Markdown a CI job can post: a verdict per series, then each series' gate table."""
    head = {"pass": "PASSED", "fail": "FAILED", "incomplete": "INCOMPLETE"}[check.outcome]
    lines = [f"# evalkit history check: {head}", "",
             "The latest run of each series against the run before it, paired item by item.", "",
             "| series | latest | against | outcome | criteria worse |", "|---|---|---|---|---|"]
    for s in check.series:
        against = _when(s.previous, s.latest_number - 1) if s.previous else "-"
        worse = ", ".join(f"`{c}`" for c in s.failed_criteria) or ("-" if s.gate else s.reason)
        lines.append(f"| `{s.series}` ({s.source}) | {_when(s.latest, s.latest_number)} | {against} "
                     f"| {s.outcome} | {worse} |")
    for s in check.series:
        if s.gate is None:
            continue
        lines += ["", f"## `{s.series}` ({s.source}): {_when(s.latest, s.latest_number)} against "
                      f"{_when(s.previous, s.latest_number - 1)}", ""]
        if s.judge_changes:
            lines += [f"The judge changed between the two runs for {', '.join(f'`{c}`' for c in s.judge_changes)}: "
                      "a change there may be the judge's, not the agent's.", ""]
        body = render_gate_markdown(s.gate).splitlines()[2:]  # its own title gives way to the series' heading
        lines += [line for line in body if not line.startswith("Exit status")]
    lines += ["", f"Exit status {check.exit_status}."]
    return "\n".join(lines) + "\n"
