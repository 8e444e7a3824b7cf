"""The run history: every run's headline numbers in an append-only store, the trend, and a regression check.

``evalkit run``, ``evalkit eval run`` and ``evalkit batch`` record each run in a history folder
(``history.jsonl`` and the runs' per-item verdicts under ``verdicts/``; a folder people can commit).
``evalkit history show`` prints it, each run report draws its series' trend (this package registers the
report section), and ``evalkit history check`` fails when the latest run is worse than the one before
beyond noise (the regression gate of :mod:`evalkit.compare`), writing Markdown a CI job can post.
"""

from evalkit.history.check import HistoryCheck, SeriesCheck, check_history, render_history_check
from evalkit.history.record import (
    TREND_FILE,
    Recorded,
    inputs_digest,
    merge_headlines,
    record_notebook_run,
    record_run,
    run_headline,
)
from evalkit.history.show import render_history
from evalkit.history.store import (
    DEFAULT_FOLDER,
    HISTORY_FILE,
    VERDICTS_FOLDER,
    default_history,
    keep_verdicts,
    read_history,
)
from evalkit.history.trend import judge_changes, register_trend_section, render_trend_section, trend_rows

register_trend_section()

__all__ = [
    "DEFAULT_FOLDER",
    "HISTORY_FILE",
    "TREND_FILE",
    "VERDICTS_FOLDER",
    "HistoryCheck",
    "Recorded",
    "SeriesCheck",
    "check_history",
    "default_history",
    "inputs_digest",
    "judge_changes",
    "keep_verdicts",
    "merge_headlines",
    "read_history",
    "record_notebook_run",
    "record_run",
    "render_history",
    "render_history_check",
    "render_trend_section",
    "run_headline",
    "trend_rows",
]
