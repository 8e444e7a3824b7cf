"""Several reviewers of the same traces: one file each, agreement per mode and per criterion, the items they
disagree on, and gold labels adjudicated from them with their provenance.

Each reviewer's labels are a file of their own (an annotation store for error analysis, a human-label file
for criteria), and every record names its reviewer. Agreement is Cohen's kappa with its interval for two
reviewers, and Krippendorff's alpha (nominal; the ``krippendorff`` package) for more than two, over the items
each pair (or set) labelled. Gold labels (:class:`~evalkit.contracts.HumanLabel` with ``adjudication``) are
what ``evalkit calibrate`` reads: an item every reviewer labelled alike becomes gold as ``agreed``; an item
they disagree on becomes gold only when an adjudicator decided it (``adjudicated``, naming the labels it
resolved); an undecided disagreement is left out and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit import stats
from evalkit.analysis.store import latest
from evalkit.contracts.annotation import Annotation
from evalkit.contracts.labels import Adjudication, HumanLabel, ResolvedLabel
from evalkit.errors import InputError
from evalkit.io.json_case import camel_json

Item = tuple[str, str, str]
"""``(kind, about, trace)``: kind ``mode`` (about a mode id) or ``criterion`` (about a criterion id)."""


@dataclass(frozen=True)
class ReviewerLabels:
    """One reviewer's file: per item, the label (``fail`` = the mode is there, for modes) and when."""

    reviewer: str
    file: str
    items: dict[Item, tuple[str, str | None]]
    splits: dict[Item, str] = field(default_factory=dict)
    """The calibration split of each human-labelled item that names one (gold keeps it)."""


def _from_annotations(records: Sequence[Annotation], modes: Sequence[str] | None) -> dict[Item, tuple[str, str | None]]:
    known = modes if modes is not None else sorted({m for a in records for m in a.modes})
    items: dict[Item, tuple[str, str | None]] = {}
    for a in latest(records):
        if a.label == "defer":
            continue
        for mode in known:
            items[("mode", mode, a.trace_id)] = ("fail" if mode in a.modes else "pass", a.at)
    return items


def read_reviewer_file(path: str | Path, modes: Sequence[str] | None = None) -> ReviewerLabels:
    """One reviewer's labels: an annotation store, or a human-label file (every record naming the reviewer).

    Args:
        path: the file.
        modes: the failure modes to compare on (a taxonomy's ids); by default every mode the file names.

    Raises:
        InputError: a record without a reviewer's name, a file with two reviewers' labels, an empty file.
    """
    from evalkit.contract_files import read_models
    from evalkit.io.documents import read_records

    file = str(path)
    records = read_records(path, "jsonl")
    splits: dict[Item, str] = {}
    if not records:
        raise InputError("no labels in this reviewer's file", file=file)
    if "at" in records[0].value and "annotator" in records[0].value:
        from evalkit.analysis.store import read_store

        annotations = read_store(path).annotations
        names = {a.annotator for a in annotations}
        items = _from_annotations(annotations, modes)
    else:
        labels = read_models(path, HumanLabel)
        for record, label in zip(records, labels, strict=True):
            if not label.annotator:
                raise InputError("no reviewer named: each record of a reviewer's file names its reviewer",
                                 file=file, line=record.line, path="annotator")
        names = {label.annotator or "" for label in labels}
        items = {}
        for label in labels:
            if label.label != "defer":
                item = ("criterion", label.criterion_id or "-", label.trace_id)
                items[item] = (label.label, label.labeled_at)
                if label.split is not None:
                    splits[item] = label.split
    if len(names) != 1:
        raise InputError(f"labels by {', '.join(sorted(names))} in one file: keep each reviewer's labels in a "
                         "file of their own", file=file, path="annotator")
    return ReviewerLabels(names.pop(), file, items, splits)


def reviewers_in_store(annotations: Sequence[Annotation], modes: Sequence[str] | None = None, *,
                       leave_out: Sequence[str] = ()) -> list[ReviewerLabels]:
    """Each annotator of one store as a reviewer (a store kept by several people, as the sample's)."""
    names = sorted({a.annotator for a in annotations} - set(leave_out))
    return [ReviewerLabels(n, "", _from_annotations([a for a in annotations if a.annotator == n], modes))
            for n in names]


@dataclass(frozen=True)
class Agreement:
    """The reviewers' agreement on one question (a mode, or a criterion) over the items they share."""

    kind: str
    about: str
    reviewers: list[str]
    items: int
    """Items labelled by at least two of the reviewers."""
    statistic: str
    """``cohen-kappa`` (two reviewers) or ``krippendorff-alpha`` (more)."""
    value: float | None
    ci: Any = None
    reason: str | None = None


@dataclass(frozen=True)
class Disagreement:
    """An item the reviewers labelled differently: the disagreement queue's entry."""

    kind: str
    about: str
    trace_id: str
    labels: dict[str, str]


@dataclass
class ReviewersReport:
    """Agreement per mode and per criterion, and the disagreement queue."""

    reviewers: list[str]
    agreement: list[Agreement] = field(default_factory=list)
    disagreements: list[Disagreement] = field(default_factory=list)

    def to_json_obj(self) -> dict[str, Any]:
        """A JSON-ready dict (camelCase keys)."""
        return camel_json(self)


def _alpha(rows: list[list[str | None]]) -> tuple[float | None, str | None]:
    import krippendorff
    import numpy as np

    codes = {"pass": 0.0, "fail": 1.0}
    data = np.array([[np.nan if v is None else codes[v] for v in row] for row in rows])
    values = data[~np.isnan(data)]
    if len(set(values.tolist())) < 2:
        return None, "every reviewer gave one and the same label: alpha is undefined"
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")), None


def compare_reviewers(files: Sequence[ReviewerLabels], level: float = stats.DEFAULT_LEVEL) -> ReviewersReport:
    """Agreement per (kind, about) and every item two reviewers labelled differently.

    Raises:
        InputError: fewer than two reviewers, or one reviewer in two files.
    """
    names = [f.reviewer for f in files]
    if len(files) < 2:
        raise InputError("agreement needs at least two reviewers' files", path="files")
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise InputError(f"reviewer {twice!r} has two files: give each reviewer one", path="files")
    report = ReviewersReport(names)
    questions = sorted({(k, a) for f in files for (k, a, _) in f.items})
    for kind, about in questions:
        traces = sorted({t for f in files for (k, a, t) in f.items if (k, a) == (kind, about)})
        rows = [[f.items.get((kind, about, t), (None, None))[0] for t in traces] for f in files]
        shared = [i for i, _ in enumerate(traces) if sum(row[i] is not None for row in rows) >= 2]
        for i in shared:
            given = {n: rows[r][i] for r, n in enumerate(names) if rows[r][i] is not None}
            if len(set(given.values())) > 1:
                report.disagreements.append(Disagreement(kind, about, traces[i], given))
        if len(files) == 2:
            both = [i for i in shared]
            k = stats.cohens_kappa([rows[0][i] for i in both], [rows[1][i] for i in both], level=level)
            report.agreement.append(Agreement(kind, about, names, len(both), "cohen-kappa", k.kappa, k.ci, k.reason))
        else:
            value, reason = _alpha([[row[i] for i in shared] for row in rows]) if shared else \
                (None, "no item labelled by two reviewers")
            report.agreement.append(Agreement(kind, about, names, len(shared), "krippendorff-alpha", value,
                                              reason=reason))
    return report


@dataclass
class GoldLabels:
    """Gold labels with provenance, and what could not become gold."""

    labels: list[HumanLabel]
    agreed: int
    adjudicated: int
    unresolved: list[Disagreement]


def _as_labels(decisions: Sequence[HumanLabel | Annotation], disputed: dict[tuple[str, str], Disagreement]
               ) -> list[HumanLabel]:
    """An adjudicator's annotations (the review page's export) as labels on each disputed mode of their traces."""
    out = []
    for d in decisions:
        if isinstance(d, HumanLabel):
            out.append(d)
            continue
        for (about, trace), item in sorted(disputed.items()):
            if trace == d.trace_id and item.kind == "mode" and d.label != "defer":
                out.append(HumanLabel(trace_id=trace, label="fail" if about in d.modes else "pass", criterion_id=about,
                                      annotator=d.annotator, labeled_at=d.at, notes=d.note))
    return out


def _split(files: Sequence[ReviewerLabels], item: Item) -> str | None:
    """The split the reviewers' labels of ``item`` name (calibrate measures on test, tunes on dev: a gold label
    that dropped it would move between them)."""
    named = {f.splits[item] for f in files if item in f.splits}
    if len(named) > 1:
        raise InputError(f"the reviewers put trace {item[2]!r} in different splits ({', '.join(sorted(named))}) "
                         f"for {item[1]}: give it one split in every reviewer's file", path="split")
    return named.pop() if named else None


def adjudicate(files: Sequence[ReviewerLabels], decisions: Sequence[HumanLabel | Annotation], *,
               at: str) -> GoldLabels:
    """Gold labels: items all reviewers labelled alike, and disagreements an adjudicator decided.

    Args:
        files: every reviewer's labels.
        decisions: the adjudicator's labels on disputed items: human labels naming the adjudicator (for a mode,
            ``criterionId`` is the mode id and ``fail`` says the trace shows it), or the adjudicator's annotations
            (the review page's labels: a trace's modes decide each disputed mode on it).
        at: when the agreed items became gold (injected; an adjudicated item takes its decision's time, else this).

    Raises:
        InputError: a decision without an adjudicator's name, or on an item no reviewer disputed.
    """
    report = compare_reviewers(files)
    disputed = {(d.about, d.trace_id): d for d in report.disagreements}
    decided: dict[tuple[str, str], HumanLabel] = {}
    for i, decision in enumerate(_as_labels(decisions, disputed)):
        key = (decision.criterion_id or "-", decision.trace_id)
        if not decision.annotator:
            raise InputError("an adjudication names its adjudicator", path=f"decisions[{i}].annotator")
        if key not in disputed:
            raise InputError(f"no disagreement on {key[0]} for trace {key[1]!r} to adjudicate",
                             path=f"decisions[{i}]")
        decided[key] = decision
    kinds = {(k, a) for f in files for (k, a, _) in f.items}
    gold, agreed, adjudicated, unresolved = [], 0, 0, []
    for kind, about in sorted(kinds):
        traces = sorted({t for f in files for (k, a, t) in f.items if (k, a) == (kind, about)})
        for trace in traces:
            given = [(f.reviewer, *f.items[(kind, about, trace)]) for f in files if (kind, about, trace) in f.items]
            if len(given) < 2:
                continue
            resolved = [ResolvedLabel(annotator=n, label=v, at=when) for n, v, when in given]
            values = {v for _, v, _ in given}
            criterion = None if about == "-" else about
            split = _split(files, (kind, about, trace))
            if len(values) == 1:
                how = Adjudication(how="agreed", by="+".join(n for n, _, _ in given), at=at, resolved=resolved)
                gold.append(HumanLabel(trace_id=trace, label=values.pop(), criterion_id=criterion, split=split,
                                       adjudication=how))
                agreed += 1
            elif (about, trace) in decided:
                d = decided[(about, trace)]
                how = Adjudication(how="adjudicated", by=d.annotator or "", at=d.labeled_at or at, resolved=resolved)
                gold.append(HumanLabel(trace_id=trace, label=d.label, criterion_id=criterion, notes=d.notes,
                                       split=d.split or split, adjudication=how))
                adjudicated += 1
            else:
                unresolved.append(disputed[(about, trace)])
    gold.sort(key=lambda g: (g.criterion_id or "", g.trace_id))
    return GoldLabels(gold, agreed, adjudicated, unresolved)
