"""Judge calibration's interval methods and defaults, importable without numpy or pydantic.

:mod:`evalkit.calibration.correction` and :mod:`evalkit.calibration.applies` use them, and ``evalkit
calibrate`` offers them without loading those modules.
"""

from __future__ import annotations

METHODS: tuple[str, ...] = ("adjusted-wald", "bootstrap", "bootstrap-full")
"""The corrected pass rate's interval methods, described in :mod:`evalkit.calibration.correction`."""

DEFAULT_METHOD = "adjusted-wald"
"""Chosen by the coverage study in benchmarks/bench_calibration.py (see docs/calibration.md)."""

DEFAULT_ITERATIONS = 20_000
"""Bootstrap resamples; judgy's default, so intervals are comparable."""

DEFAULT_POLICY_VERSION = "1"
"""The labelling policy's version when the user names none; bump it when the labelling guide changes."""
