"""Expanding dimensions into tuples: every combination of their values, or an error, never a cut list."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from evalkit.contracts.dataset import Dimension
from evalkit.errors import TooManyTuples

MAX_TUPLES = 5000
"""The seed's cap on a cartesian expansion: past it the designer must narrow the dimensions."""




def expand_tuples(dimensions: Sequence[Dimension], *, cap: int = MAX_TUPLES) -> list[dict[str, str]]:
    """Every tuple of the dimensions' values, in dimension order then value order.

    Raises:
        TooManyTuples: the product has more than ``cap`` tuples (the count is in the message).
        ValueError: no dimensions, or a dimension named twice.
    """
    if not dimensions:
        raise ValueError("dimensions: at least one dimension is needed to expand tuples")
    names = [d.name for d in dimensions]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"dimensions: {', '.join(twice)} is named more than once")
    total = math.prod(len(d.values) for d in dimensions)
    if total > cap:
        sizes = " x ".join(f"{d.name} ({len(d.values)})" for d in dimensions)
        raise TooManyTuples(f"{sizes} = {total:,} tuples, more than the cap of {cap:,}; "
                            "drop values or split the dimensions into several suites")
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(d.values for d in dimensions))]


def uncovered_tuples(dimensions: Sequence[Dimension], covered: Sequence[dict[str, str]], *,
                     cap: int = MAX_TUPLES) -> list[dict[str, str]]:
    """The expanded tuples no case realises yet (compared on the designer's dimensions only)."""
    names = [d.name for d in dimensions]
    seen = {tuple(t.get(n) for n in names) for t in covered}
    return [t for t in expand_tuples(dimensions, cap=cap) if tuple(t[n] for n in names) not in seen]
