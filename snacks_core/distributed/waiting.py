"""Waiting for work on the cluster: every stage waits with a time limit and names the
partitions that failed, were lost or are still pending, never hanging; a worker that leaves
the cluster during a fit is reported on the client as it is noticed."""

from __future__ import annotations

import warnings
import weakref

# The workers each client saw at its last wait (watch_workers starts a fit's watch).
_seen = weakref.WeakKeyDictionary()


def watch_workers(client):
    """Start noticing the workers that leave ``client``'s cluster (at each wait)."""
    _seen[client] = set(client.scheduler_info()["workers"])


def _report_lost_workers(client, what):
    """Warn once for each watched worker gone since the last wait: Dask recomputes its
    partitions (rows, embedding) on the workers left, which costs time, not the fit."""
    if client not in _seen:
        return
    now = set(client.scheduler_info()["workers"])
    gone = sorted(_seen[client] - now)
    _seen[client] = now
    if gone:
        warnings.warn(f"{what}: worker(s) {', '.join(gone)} left the cluster; Dask recomputes "
                      f"their partitions on the {len(now)} worker(s) left and the fit goes "
                      "on.", UserWarning, stacklevel=3)

# Seconds a stage of work on the cluster (a round, the embedding) may take before the fit
# reports what it is still waiting for, rather than waiting for ever.
DEFAULT_TIMEOUT_S = 600.0


def wait_for(client, futures, what, timeout, *, lost_ok=False):
    """Wait until ``futures`` are done; return the positions of those cancelled because
    their inputs were lost (only with ``lost_ok``; otherwise they raise).

    Raises a RuntimeError that names the partitions (positions in ``futures``) that failed,
    were lost, or are still pending after ``timeout`` seconds: never a hang (a ValueError,
    bad data, when the task failed with one).
    """
    import distributed
    from distributed.client import FuturesCancelledError

    try:
        # distributed.wait runs on the current client, which ``client`` need not be.
        with client.as_current():
            distributed.wait(futures, timeout=timeout)
    except (TimeoutError, distributed.TimeoutError):
        pending = [p for p, f in enumerate(futures) if f.status == "pending"]
        workers = len(client.scheduler_info()["workers"])
        raise RuntimeError(f"{what}: partition(s) {pending[:10]} gave no result within "
                           f"{timeout:g} s ({workers} worker(s) connected); the fit was "
                           "stopped rather than left waiting.") from None
    except FuturesCancelledError:
        pass
    _report_lost_workers(client, what)
    lost = [p for p, f in enumerate(futures) if f.status == "cancelled"]
    failed = [p for p, f in enumerate(futures) if f.status == "error"]
    if failed:
        error = futures[failed[0]].exception()
        # Bad data found on a worker stays a ValueError, as in memory (the command line
        # prints it as one line).
        kind = ValueError if isinstance(error, ValueError) else RuntimeError
        raise kind(f"{what}: partition(s) {failed[:10]} failed "
                   f"({type(error).__name__}: {error}).") from error
    if lost and not lost_ok:
        raise RuntimeError(f"{what}: partition(s) {lost[:10]} were lost with their worker "
                           "and could not be recomputed.")
    return lost


def gather_results(client, futures, what, timeout):
    """The results of ``futures`` (small ones: summaries, landmarks) once
    :func:`wait_for` says they are all there."""
    wait_for(client, futures, what, timeout)
    return client.gather(futures)
