"""What the cluster tests share: a two-worker local Dask cluster per test module."""

from __future__ import annotations

import distributed  # the dev extra installs it (evalkit[cluster]): missing, these tests fail, not skip
import pytest


@pytest.fixture(scope="module")
def client():
    """A client of a fresh two-worker LocalCluster (processes, one thread each, loopback only)."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0") as cluster, \
            distributed.Client(cluster) as dask_client:
        yield dask_client
