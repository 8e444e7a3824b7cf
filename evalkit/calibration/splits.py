"""Splitting labelled traces into train, dev and test: deterministic, stratified, disjoint by trace.

train is the only source of few-shot examples, dev is where the judge prompt is iterated on, and
test is measured once. A trace's place is decided by a keyed hash of its id, so the split does not
depend on the order the labels come in, and a label that already names its split keeps it.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from evalkit.contracts.labels import HumanLabel, Split
from evalkit.errors import InputError

SPLITS: tuple[Split, ...] = ("train", "dev", "test")

DEFAULT_FRACTIONS = (0.15, 0.40, 0.45)
"""train/dev/test shares: the validate-evaluator recipe (train 10-20%, dev 40-45%, test 40-45%)."""


@dataclass(frozen=True)
class LabelSplits:
    """The three splits; every label carries its ``split``. Each list is sorted by trace id."""

    train: list[HumanLabel]
    dev: list[HumanLabel]
    test: list[HumanLabel]

    def __iter__(self):
        return iter((self.train, self.dev, self.test))


def _allocate(count: int, fractions: Sequence[float]) -> list[int]:
    """Largest-remainder rounding of ``count * fractions``; ties go to the later split (test first)."""
    exact = [count * f for f in fractions]
    sizes = [math.floor(x) for x in exact]
    order = sorted(range(len(fractions)), key=lambda i: (-(exact[i] - sizes[i]), -i))
    for i in order[: count - sum(sizes)]:
        sizes[i] += 1
    return sizes


def _rank(seed: int, trace_id: str) -> bytes:
    return hashlib.sha256(f"{seed}\x00{trace_id}".encode()).digest()


def _check_fractions(fractions: Sequence[float]) -> None:
    if len(fractions) != 3 or any(not 0 <= f <= 1 for f in fractions) or abs(sum(fractions) - 1) > 1e-9:
        raise InputError(f"must be three shares in [0, 1] summing to 1 (got {tuple(fractions)!r})",
                         path="fractions")


def _existing_splits(labels: Sequence[HumanLabel]) -> dict[str, Split]:
    fixed: dict[str, Split] = {}
    for i, label in enumerate(labels):
        if label.split is None:
            continue
        other = fixed.setdefault(label.trace_id, label.split)
        if other != label.split:
            raise InputError(f"trace {label.trace_id!r} is in both {other!r} and {label.split!r}; "
                             "a trace belongs to one split", path=f"labels[{i}].split")
    return fixed


def split_labels(labels: Sequence[HumanLabel], fractions: Sequence[float] = DEFAULT_FRACTIONS,
                 seed: int = 0, stratify: bool = True) -> LabelSplits:
    """Split labels into train, dev and test.

    The unit is the trace: all labels of one trace land in the same split. Traces whose labels
    already name a split stay there; the others are split by ``fractions`` within each stratum
    (the set of labels the trace carries, e.g. all ``pass``), in the order of a hash of
    ``(seed, trace id)``.

    Args:
        labels: human labels.
        fractions: train, dev and test shares, summing to 1.
        seed: changes the hash order, hence which traces go where.
        stratify: keep each label's share equal across splits (as far as rounding allows).

    Returns:
        The three splits, each label with its ``split`` set.

    Raises:
        InputError: bad fractions, or one trace placed in two splits by its labels.
    """
    _check_fractions(fractions)
    place = _existing_splits(labels)
    strata: dict[tuple[str, ...], set[str]] = defaultdict(set)
    kinds: dict[str, set[str]] = defaultdict(set)
    for label in labels:
        kinds[label.trace_id].add(label.label)
    for trace_id, seen in kinds.items():
        if trace_id not in place:
            strata[tuple(sorted(seen)) if stratify else ()].add(trace_id)
    for key in sorted(strata):
        ranked = sorted(strata[key], key=lambda t: (_rank(seed, t), t))
        start = 0
        for split, size in zip(SPLITS, _allocate(len(ranked), fractions), strict=True):
            for trace_id in ranked[start:start + size]:
                place[trace_id] = split
            start += size
    out: dict[Split, list[HumanLabel]] = {s: [] for s in SPLITS}
    for label in labels:
        split = place[label.trace_id]
        out[split].append(label if label.split == split else label.model_copy(update={"split": split}))
    for split in SPLITS:
        out[split].sort(key=lambda lb: (lb.trace_id, lb.criterion_id or "", lb.annotator or "",
                                        lb.label, lb.labeled_at or "", lb.notes or ""))
    return LabelSplits(out["train"], out["dev"], out["test"])
