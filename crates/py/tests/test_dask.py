"""A sweep on a real local Dask cluster (a scheduler and two worker processes) gives the rows of a
single-process sweep."""

from __future__ import annotations

import os

import distributed
import pytest

import smartsim
from test_sweep import Serial


def test_dask_cluster_rows_equal_single_process_rows(small):
    args = dict(set={"machine.hz": [100, 1000], "task.A.share": [1, 2, 4]}, seeds=[1, 2, 3, 4])
    alone = smartsim.sweep(small, executor=Serial(), **args)
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        # Two worker processes, neither of them this one.
        pids = client.run(os.getpid)
        assert len(pids) == 2 and os.getpid() not in pids.values()
        on_dask = smartsim.sweep(small, executor=client.get_executor(), **args)
        batched = smartsim.sweep(small, executor=client.get_executor(), batch=5, **args)
        # An error in a worker comes back as itself, with where.
        with pytest.raises(smartsim.ScenarioError) as e:
            smartsim.sweep(small, set={"scheduler.policy": ["nope"]}, executor=client.get_executor())
        assert (e.value.file, e.value.line, e.value.field) == (str(small), 7, "scheduler.policy")
    assert on_dask == alone
    assert batched == alone
    assert len(alone) == 2 * 3 * 4 * 3
