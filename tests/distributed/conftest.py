"""What the cluster tests share: a two-worker local Dask cluster per test module."""

from __future__ import annotations

import pytest

from evalkit.distributed import dask_client


@pytest.fixture(scope="module")
def client():
    """A client of a fresh two-worker LocalCluster started as ``--workers 2`` starts it (processes, one
    thread each, loopback only, workers forked on Linux), so the tests run what users run. The dev extra
    installs Dask (evalkit[cluster]): missing, these tests fail, not skip."""
    with dask_client(workers=2) as dask:
        yield dask
