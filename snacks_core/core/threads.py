"""Thread policy: how many threads a call may use, and how row blocks share them.

Every parallel routine of the library takes ``n_jobs`` in scikit-learn's sense and turns it
into a thread count with :func:`effective_n_threads`, which also honours the limits a
caller has set (CPU affinity, numba's thread count, ``threadpoolctl`` BLAS limits), so that
a caller running several jobs each inside ``threadpool_limits(1)`` is not oversubscribed.
:func:`numba_threads` runs numba's parallel regions (the solvers' checkpoint passes) on
that many threads.

Blockwise work (kernel matrices, the Nyström transform) is handed to a pool of Python
threads by :func:`for_row_blocks`: each thread runs BLAS on one thread and ``nogil`` jitted
code, so that the work of a block stays on one core and in its cache, and a block's values
do not depend on how many threads computed it.
"""

from __future__ import annotations

import functools
import numbers
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numba
from threadpoolctl import ThreadpoolController

from snacks_core.core.cancellation import carry, raise_if_stopped


def effective_n_threads(n_jobs=None) -> int:
    """The number of threads to use for ``n_jobs``, in scikit-learn's sense.

    Parameters
    ----------
    n_jobs : int or None
        None: every core the current limits allow, the smallest of the cores this process
        may run on (``os.sched_getaffinity``), numba's thread count
        (``NUMBA_NUM_THREADS``, ``numba.set_num_threads``) and the BLAS thread limit
        (``threadpoolctl.threadpool_limits``, ``OMP_NUM_THREADS``, ...), so that a caller
        that runs several jobs each inside ``threadpool_limits(1)`` is not oversubscribed.
        A positive integer: that many threads, at most the cores of this process.
        A negative integer: cores + 1 + n_jobs (−1 for all cores), at least 1.

    Returns
    -------
    int
        At least 1.

    Raises
    ------
    ValueError
        For 0 or anything but None or an integer.

    Examples
    --------
    >>> from threadpoolctl import threadpool_limits
    >>> from snacks_core.core.threads import effective_n_threads
    >>> effective_n_threads(1)
    1
    >>> with threadpool_limits(1):  # one job of a parallel sweep
    ...     effective_n_threads()
    1
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if n_jobs is None:
        blas = [lib.num_threads for lib in blas_controller().lib_controllers]
        return max(1, min([cores, numba.get_num_threads(), *blas]))
    if not isinstance(n_jobs, numbers.Integral) or isinstance(n_jobs, bool) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None or a non-zero integer (-1 for all cores); "
                         f"got {n_jobs!r}")
    return max(1, min(int(n_jobs), cores) if n_jobs > 0 else cores + 1 + int(n_jobs))


def for_row_blocks(n_rows, block_rows, n_threads, task, make_scratch=None) -> None:
    """Call ``task(start, stop, scratch)`` on consecutive blocks of ``block_rows`` rows,
    from ``n_threads`` threads that each run BLAS on one thread.

    Blocks are handed out in order to whichever thread is free, which balances the load on
    a busy machine; each thread calls ``make_scratch()`` once for buffers it reuses across
    its blocks (None without it).  Threads run at the same time where the tasks release
    the GIL: BLAS calls and ``nogil`` jitted code.  A single block runs on the calling
    thread with the BLAS threads as they are, which costs nothing on small problems.
    The first exception of a task is raised once every thread has stopped.  The caller's
    stop check (:mod:`snacks_core.core.cancellation`) is polled before each block: a cancelled
    computation stops after the blocks in progress.
    """
    starts = range(0, n_rows, block_rows)
    raise_if_stopped()
    if len(starts) <= 1:
        task(0, n_rows, make_scratch() if make_scratch else None)
        return
    lock = threading.Lock()
    pending = iter(starts)
    failed = threading.Event()

    def work():
        scratch = make_scratch() if make_scratch else None
        while not failed.is_set():
            with lock:
                start = next(pending, None)
            if start is None:
                return
            try:
                raise_if_stopped()
                task(start, min(start + block_rows, n_rows), scratch)
            except BaseException:
                failed.set()
                raise

    n_threads = min(n_threads, len(starts))
    # One BLAS thread per worker: n_threads workers each with a BLAS pool would oversubscribe
    # the cores, and a block's values must not depend on how many threads computed it.
    with blas_controller().limit(limits=1):
        if n_threads == 1:
            work()
            return
        with ThreadPoolExecutor(n_threads, thread_name_prefix="snacks-kernel") as pool:
            for future in [pool.submit(carry(work)) for _ in range(n_threads)]:
                future.result()


@functools.lru_cache(maxsize=1)
def blas_controller():
    """threadpoolctl's handle on the BLAS libraries loaded (numpy's and scipy's, each with
    its own thread pool), made once: inspecting the loaded libraries is not free."""
    return ThreadpoolController().select(user_api="blas")


@contextmanager
def numba_threads(n_jobs):
    """Run numba's parallel regions on the threads ``n_jobs`` allows (None: every core the
    current numba, BLAS and affinity limits allow; see :func:`effective_n_threads`); the
    previous thread count is restored on exit."""
    previous = numba.get_num_threads()
    numba.set_num_threads(min(effective_n_threads(n_jobs), numba.config.NUMBA_NUM_THREADS))
    try:
        yield
    finally:
        numba.set_num_threads(previous)
