"""Batches: many subjects, or one subject swept over a grid of values, run in parallel with one index page.

``evalkit batch BATCH.yaml --out DIR`` (or ``evalkit run S1.yaml S2.yaml --out DIR``) runs each subject as
``evalkit run`` does, into ``DIR/NAME``, up to ``--jobs`` at once; a rerun skips the runs that are up to
date, and ``DIR/index.html`` shows every run's headline numbers, sortable, each linking to its report.
"""

from evalkit.batch.index import INDEX_HTML, INDEX_JSON, batch_rows, write_index
from evalkit.batch.plan import RESERVED_NAMES, BatchPlan, BatchRun, plan_batch, plan_subjects
from evalkit.batch.runner import (
    LOGS_FOLDER,
    BatchResult,
    RunState,
    batch_history,
    run_batch,
    run_batch_file,
    run_subject_files,
    up_to_date,
)
from evalkit.batch.variants import SUBJECTS_FOLDER, write_run_subject

__all__ = [
    "INDEX_HTML",
    "INDEX_JSON",
    "LOGS_FOLDER",
    "RESERVED_NAMES",
    "SUBJECTS_FOLDER",
    "BatchPlan",
    "BatchResult",
    "BatchRun",
    "RunState",
    "batch_history",
    "batch_rows",
    "plan_batch",
    "plan_subjects",
    "run_batch",
    "run_batch_file",
    "run_subject_files",
    "up_to_date",
    "write_index",
    "write_run_subject",
]
