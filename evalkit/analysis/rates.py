"""How often each failure mode occurs among reviewed traces, with Wilson intervals, most frequent first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.analysis.store import labels_of
from evalkit.analysis.taxonomy import check_modes, descendants
from evalkit.contracts.annotation import Annotation, Taxonomy
from evalkit.contracts.summary import Headline, ModeHeadline
from evalkit.io.json_case import camel_json
from evalkit.stats import DEFAULT_LEVEL, wilson_bounds


@dataclass(frozen=True)
class ModeRate:
    """One failure mode's share of the reviewed traces."""

    mode: str
    name: str | None
    count: int
    reviewed: int
    rate: float | None
    lo: float | None
    hi: float | None


@dataclass(frozen=True)
class FailureRates:
    """Failure-mode rates over one annotator's decided labels (``defer`` is left out of every rate)."""

    annotator: str | None
    reviewed: int
    passed: int
    failed: int
    deferred: int
    untagged_fails: int
    level: float
    modes: list[ModeRate]

    def to_json_obj(self) -> dict[str, Any]:
        """A JSON-ready dict (camelCase keys, as ``evalkit analysis rates --json`` prints it)."""
        return camel_json(self)

    def headline(self) -> Headline:
        """Every mode's rate and interval, as a run's headline numbers carry them (batch index, history)."""
        return Headline(failure_modes=[ModeHeadline(mode=r.mode, name=r.name, rate=r.rate, lo=r.lo, hi=r.hi,
                                                    count=r.count, reviewed=r.reviewed) for r in self.modes])


def _mode_rate(mode: str, name: str | None, count: int, reviewed: int, level: float) -> ModeRate:
    ci = wilson_bounds(count, reviewed, level)
    return ModeRate(mode, name, count, reviewed, count / reviewed if reviewed else None,
                    ci[0] if ci else None, ci[1] if ci else None)


def failure_mode_rates(annotations: Sequence[Annotation], taxonomy: Taxonomy | None = None,
                       annotator: str | None = None, level: float = DEFAULT_LEVEL) -> FailureRates:
    """The rate of every failure mode among reviewed traces, most frequent first.

    A trace counts once per mode however it was relabelled: the latest label per trace wins. With a
    taxonomy, every mode is listed (a mode nobody tagged has rate 0) and a parent mode counts the traces
    tagged with it or any mode below it.

    Args:
        annotations: store records in file order.
        taxonomy: the failure modes; without one, the modes the labels use.
        annotator: whose labels; by default the annotator who labelled the most traces.
        level: the confidence level of the intervals.

    Raises:
        InputError: a label names a mode the taxonomy lacks, or the annotator labelled nothing.
    """
    who, labels = labels_of(annotations, annotator)
    if taxonomy is not None:
        check_modes(labels, taxonomy)
    decided = [a for a in labels if a.label != "defer"]
    fails = [a for a in decided if a.label == "fail"]
    if taxonomy is not None:
        members = {m.id: descendants(taxonomy, m.id) for m in taxonomy.modes}
        names: dict[str, str | None] = {m.id: m.name for m in taxonomy.modes}
    else:
        seen = sorted({m for a in fails for m in a.modes})
        members = {m: {m} for m in seen}
        names = dict.fromkeys(seen)
    rows = [_mode_rate(mode, names[mode], sum(1 for a in fails if members[mode] & set(a.modes)), len(decided),
                       level) for mode in members]
    rows.sort(key=lambda r: (-r.count, r.mode))
    return FailureRates(
        annotator=who, reviewed=len(decided), passed=len(decided) - len(fails), failed=len(fails),
        deferred=len(labels) - len(decided), untagged_fails=sum(1 for a in fails if not a.modes),
        level=level, modes=rows,
    )
