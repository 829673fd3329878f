"""Thread policy: ``effective_n_threads`` follows the caller's limits, ``for_row_blocks``
computes every block once and reports a task's error."""

from __future__ import annotations

import os

import numba
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from snacks_core.core.threads import effective_n_threads, for_row_blocks


def test_effective_n_threads_follows_limits_and_requests():
    cores = len(os.sched_getaffinity(0))
    assert effective_n_threads(1) == 1
    assert effective_n_threads(-1) == cores
    assert effective_n_threads(10 * cores) == cores
    assert effective_n_threads(-10 * cores) == 1
    assert 1 <= effective_n_threads() <= min(cores, numba.get_num_threads())
    with threadpool_limits(1, user_api="blas"):
        assert effective_n_threads() == 1
        assert effective_n_threads(2) == min(2, cores)
    for bad in (0, 2.0, "all", True):
        with pytest.raises(ValueError, match="n_jobs must be None or a non-zero integer"):
            effective_n_threads(bad)


def test_for_row_blocks_covers_every_row_once_and_raises_task_errors():
    seen = np.zeros(103, dtype=int)
    scratches = []

    def count(start, stop, scratch):
        seen[start:stop] += 1
        scratch.append(start)

    for_row_blocks(103, 10, 2, count, lambda: scratches.append([]) or scratches[-1])
    assert np.all(seen == 1)
    assert sorted(start for scratch in scratches for start in scratch) == list(range(0, 103, 10))
    assert 1 <= len(scratches) <= 2

    def fail(start, stop, scratch):
        raise RuntimeError(f"block {start}")

    with pytest.raises(RuntimeError, match="block"):
        for_row_blocks(103, 10, 2, fail)
