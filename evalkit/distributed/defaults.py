"""How many traces a unit of distributed work holds by default, importable without Dask or pydantic.

:mod:`evalkit.distributed.partitions` cuts traces by it, and ``--partition-size`` offers it without
loading that module.
"""

from __future__ import annotations

DEFAULT_PARTITION_TRACES = 100
"""Traces per partition: a Dask task costs a few milliseconds of the scheduler's and the client's
time, which the client shares the cores with; at 100 long traces a task is a second or more of work
and the run still has many partitions per worker, so a slow or lost one holds little up."""
