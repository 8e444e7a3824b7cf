"""Field types several contracts share, each defined once: non-empty text, slugs, rates, intervals.

Two name shapes exist on purpose. A :data:`Slug` is kebab-case (``hallucinated-policy``): failure
modes, skill names, case ids. A :data:`LowerName` also allows ``_`` between words, because it names
files a person already named that way (notebook stems such as ``00_overview``, subject names).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from evalkit.contracts.base import CamelContract

NonEmptyStr = Annotated[str, Field(min_length=1)]
"""Text that must say something: an id, a name, a path."""

SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
"""Lower-case letters and digits, words joined by single hyphens."""

Slug = Annotated[str, Field(pattern=SLUG_PATTERN)]
"""A kebab-case id such as ``hallucinated-policy``."""

LOWER_NAME_PATTERN = r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$"
"""Lower-case letters and digits, words joined by single hyphens or underscores."""

LowerName = Annotated[str, Field(pattern=LOWER_NAME_PATTERN, max_length=64)]
"""A subject or notebook name such as ``sample`` or ``00_overview``."""

Rate = Annotated[float, Field(ge=0, le=1, strict=True)]
"""A proportion in [0, 1]."""


class ConfidenceInterval(CamelContract):
    """A two-sided confidence interval ``[lo, hi]`` at confidence ``level``: the one interval type.

    Every interval evalkit computes (a pass rate's, a kappa's, a difference of two rates') has this
    shape in Python, on disk and in ``--json`` output. A kappa or a difference can be negative, so the
    ends are any finite numbers here; a rate's interval is the :class:`RateConfidenceInterval` refinement.
    """

    lo: float = Field(strict=True, allow_inf_nan=False)
    hi: float = Field(strict=True, allow_inf_nan=False)
    level: float = Field(gt=0, lt=1, strict=True)

    @model_validator(mode="after")
    def _ordered(self) -> ConfidenceInterval:
        if self.lo > self.hi:
            raise ValueError(f"hi: must be >= lo ({self.hi!r} < {self.lo!r})")
        return self


class RateConfidenceInterval(ConfidenceInterval):
    """A :class:`ConfidenceInterval` for a rate: both ends lie in [0, 1] (checked field by field)."""

    lo: Rate
    hi: Rate
