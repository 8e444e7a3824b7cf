"""The eval-driven-development loop's budget defaults, importable without pydantic.

They come from the seed's loop control (edd-change-request schema, "Defaults"); the ``LoopBudget``
contract (:mod:`evalkit.contracts.edd`) and ``evalkit edd run``'s options both read them from here.
"""

from __future__ import annotations

DEFAULT_MAX_SWINGS = 6
"""Swings before the loop stops short of full green."""

DEFAULT_MAX_WALLCLOCK_MS = 30 * 60 * 1000
"""Wall-clock time (30 minutes) before the loop stops."""

DEFAULT_NO_IMPROVEMENT_STREAK_LIMIT = 2
"""Swings in a row without improvement before the loop stops."""
