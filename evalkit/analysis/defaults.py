"""The sampling strategies and the saturation window, importable without polars or pydantic.

:mod:`evalkit.analysis.sampling` and :mod:`evalkit.analysis.saturation` use them, and ``evalkit sample``
and ``evalkit analysis saturation`` offer them without loading those modules.
"""

from __future__ import annotations

STRATEGIES: tuple[str, ...] = ("random", "stratified", "outlier", "failure-driven", "uncertainty")
"""The ways :func:`evalkit.analysis.sample_traces` picks traces to read first."""

SATURATION_WINDOW = 20
"""Saturated when no new failure mode appeared in this many traces (the error-analysis method's ~20)."""
