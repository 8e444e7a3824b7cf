"""Growing a suite: new cases join only when they are new (by id) and not a near-duplicate of a case kept.

A near-duplicate asks the same thing in nearly the same words: lowercase, split on ``[^a-z0-9]+``,
token-set Jaccard >= 0.8 (the seed evaluator's rule). Near-duplicates are dropped against the suite
first, then against the new cases kept before them, so the outcome does not depend on the suite's size.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.contracts.dataset import Case, CaseExpectation, CaseOrigin, CaseSource, Dataset
from evalkit.errors import InputError
from evalkit.suite.ids import case_id

NEAR_DUPLICATE_JACCARD = 0.8
_SPLIT = re.compile(r"[^a-z0-9]+")


def query_tokens(query: str) -> frozenset[str]:
    """The set of lowercase ``[a-z0-9]`` runs of ``query``."""
    return frozenset(t for t in _SPLIT.split(query.lower()) if t)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Token-set Jaccard similarity; two empty sets are identical (1.0)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def is_near_duplicate(query: str, other: str, threshold: float = NEAR_DUPLICATE_JACCARD) -> bool:
    """True when the two queries' token sets have Jaccard similarity >= ``threshold``."""
    return jaccard(query_tokens(query), query_tokens(other)) >= threshold


def new_case(case_tuple: dict[str, str], query: str, source: CaseSource, *, expected: CaseExpectation | None = None,
             origin: CaseOrigin | None = None, **provenance: str | None) -> Case:
    """A case with its content-derived id; ``provenance`` sets origin_trace_id, selected_by, rationale;
    ``expected`` and ``origin`` describe it (they never change its id)."""
    fields: dict[str, Any] = {k: v for k, v in provenance.items() if v is not None}
    if expected is not None:
        fields["expected"] = expected
    if origin is not None:
        fields["origin"] = origin
    return Case(id=case_id(case_tuple, query), tuple=dict(case_tuple), query=query, source=source, **fields)


def check_case_ids(cases: Iterable[Case], *, file: str | None = None, where: str = "cases") -> None:
    """Refuse a case whose id is not the id of its tuple and query (an edited query, a hand-made id).

    Raises:
        InputError: naming the case by index and id, with the id it should have.
    """
    for i, case in enumerate(cases):
        want = case_id(case.tuple, case.query)
        if case.id != want:
            raise InputError(f"case id {case.id!r} does not match its tuple and query (expected {want!r}); "
                             "a case's id is derived from its content", file=file, path=f"{where}[{i}].id")


@dataclass(frozen=True)
class NearDuplicate:
    """A new case dropped because it nearly repeats ``of`` (a suite case, or a new case kept before it)."""

    case: Case
    of: str
    similarity: float


@dataclass(frozen=True)
class MergeResult:
    """The grown suite and what happened to each offered case."""

    dataset: Dataset
    added: list[Case] = field(default_factory=list)
    already_present: list[Case] = field(default_factory=list)
    near_duplicates: list[NearDuplicate] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the designer: counts and the version now."""
        return (f"{len(self.added)} added, {len(self.already_present)} already in the suite, "
                f"{len(self.near_duplicates)} near-duplicates dropped; version {self.dataset.version}")


def _closest(tokens: frozenset[str], pool: Sequence[tuple[str, frozenset[str]]]) -> tuple[str, float] | None:
    best: tuple[str, float] | None = None
    for other_id, other in pool:
        sim = jaccard(tokens, other)
        if sim >= NEAR_DUPLICATE_JACCARD and (best is None or sim > best[1]):
            best = (other_id, sim)
    return best


def merge(dataset: Dataset, offered: Sequence[Case]) -> MergeResult:
    """Append the offered cases that are new and not near-duplicates; version + 1 when any were added.

    Existing cases are kept as they are and in their order; added cases follow in offered order.

    Raises:
        InputError: an offered case whose id is not derived from its tuple and query.
    """
    check_case_ids(offered, where="offered")
    existing = {c.id for c in dataset.cases}
    suite_pool = [(c.id, query_tokens(c.query)) for c in dataset.cases]
    fresh: list[Case] = []
    present: list[Case] = []
    dropped: list[NearDuplicate] = []
    for case in offered:
        if case.id in existing:
            present.append(case)
            continue
        hit = _closest(query_tokens(case.query), suite_pool)
        if hit is not None:
            dropped.append(NearDuplicate(case, hit[0], hit[1]))
        else:
            fresh.append(case)
    added: list[Case] = []
    kept_pool: list[tuple[str, frozenset[str]]] = []
    for case in fresh:
        tokens = query_tokens(case.query)
        hit = _closest(tokens, kept_pool)
        if hit is not None:
            dropped.append(NearDuplicate(case, hit[0], hit[1]))
            continue
        added.append(case)
        kept_pool.append((case.id, tokens))
    if not added:
        return MergeResult(dataset, [], present, dropped)
    grown = Dataset(subject=dataset.subject, dimensions=dataset.dimensions, cases=[*dataset.cases, *added],
                    version=dataset.version + 1)
    return MergeResult(grown, added, present, dropped)
