"""Sharing one server's CPUs between many sessions, the mechanism: a queue for heavy runs,
a task run once in the background, and the process's BLAS threads set once.

Plain Python (no Streamlit), testable on its own: :mod:`snacks_core.app.server` holds the
running server's instances of these and shows what they do to the people waiting.  The
settings a teacher can change are environment variables read when the server starts:

``SNACKS_MAX_HEAVY_RUNS``
    How many heavy runs (:func:`is_heavy`) may run at once; the others wait in a first-in,
    first-out queue.  Default: half the cores this process may use, at least 1
    (:func:`max_heavy_runs`).
``SNACKS_BLAS_THREADS``
    The BLAS threads of the whole server process, set once at start (default 1: each run
    is small, and many run side by side); 0 leaves the process's setting alone.
"""

from __future__ import annotations

import importlib
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from contextlib import contextmanager

from threadpoolctl import threadpool_limits

from snacks_core.core.cancellation import Cancelled

# Work (n × m embedding entries of one fit; n² for the exact kernel solvers) from which a
# fit is heavy: 10,000 rows at m = 500.  The Playground's examples of up to a few thousand
# rows (at their default m ≈ 2√n) stay below it and never queue.
HEAVY_WORK = 5 * 10**6
KERNEL_SOLVERS = ("libsvm", "admm")


def fit_work(n_rows, n_components, solver) -> int:
    """The size of one fit: n × m entries of its embedding, or n² for a kernel solver (no
    embedding: it works on the n × n kernel)."""
    return int(n_rows) ** 2 if solver in KERNEL_SOLVERS else int(n_rows) * int(n_components)


def is_heavy(work) -> bool:
    """Whether a fit of this :func:`fit_work` takes a slot of the heavy-run queue."""
    return work >= HEAVY_WORK


def usable_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def max_heavy_runs(environ=None) -> int:
    """``SNACKS_MAX_HEAVY_RUNS``, or half the usable cores (at least 1) when it is unset.

    Raises
    ------
    ValueError
        When it is set to anything but a positive integer.
    """
    value = (os.environ if environ is None else environ).get("SNACKS_MAX_HEAVY_RUNS", "")
    if not value.strip():
        return max(1, usable_cores() // 2)
    try:
        limit = int(value)
    except ValueError:
        limit = 0
    if limit < 1:
        raise ValueError(f"SNACKS_MAX_HEAVY_RUNS must be a positive integer, got {value!r}.")
    return limit


class RunQueue:
    """At most ``limit`` runs at once; the others wait first in, first out.

    A run takes a ticket with :meth:`join`, waits with :meth:`wait_turn` (its place is
    :meth:`position`) and gives its slot or place back with :meth:`leave`; :meth:`slot`
    does all three.  Thread-safe: the tickets of every session of a server meet here.
    """

    def __init__(self, limit: int):
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit!r}.")
        self.limit = limit
        self._changed = threading.Condition()
        self._waiting: deque = deque()
        self._running: set = set()

    def join(self) -> object:
        """A new ticket at the end of the queue."""
        ticket = object()
        with self._changed:
            self._waiting.append(ticket)
            self._start_heads()
        return ticket

    def try_start(self) -> object | None:
        """A running ticket if a slot is free and nobody waits, else None (nothing joined)."""
        with self._changed:
            if self._waiting or len(self._running) >= self.limit:
                return None
            ticket = object()
            self._running.add(ticket)
            return ticket

    def wait_turn(self, ticket, timeout=None) -> bool:
        """Wait at most ``timeout`` seconds (None: as long as it takes) for the ticket's
        run to start; True once it has."""
        with self._changed:
            return self._changed.wait_for(lambda: ticket in self._running, timeout)

    def position(self, ticket) -> int:
        """Runs waiting ahead of the ticket (0 once it runs or is first in line)."""
        with self._changed:
            return self._waiting.index(ticket) if ticket in self._waiting else 0

    def running(self) -> int:
        """Runs holding a slot now."""
        with self._changed:
            return len(self._running)

    def waiting(self) -> int:
        """Runs waiting for a slot now."""
        with self._changed:
            return len(self._waiting)

    def leave(self, ticket) -> None:
        """Give the ticket's slot, or its place in the queue, back (again is a no-op)."""
        with self._changed:
            self._running.discard(ticket)
            if ticket in self._waiting:
                self._waiting.remove(ticket)
            self._start_heads()

    @contextmanager
    def slot(self, *, should_leave: Callable[[], bool] | None = None,
             on_wait: Callable[[int], None] | None = None, poll: float = 0.5):
        """Hold a slot for the block, waiting in line for it first.

        While it waits, ``on_wait(position)`` is called every ``poll`` seconds and
        ``should_leave()`` is asked whether to give up: then the run leaves the queue and
        :class:`~snacks_core.core.cancellation.Cancelled` is raised.
        """
        ticket = self.join()
        try:
            while not self.wait_turn(ticket, poll):
                if should_leave is not None and should_leave():
                    raise Cancelled("The run left the queue before its turn.")
                if on_wait is not None:
                    on_wait(self.position(ticket))
            yield
        finally:
            self.leave(ticket)

    def _start_heads(self):
        """Move the first waiting tickets into free slots (the lock is held)."""
        while self._waiting and len(self._running) < self.limit:
            self._running.add(self._waiting.popleft())
        self._changed.notify_all()


class BackgroundTask:
    """A function run once on a daemon thread; callers can wait for it and ask how long it
    has been running.  An exception it raises is kept in :attr:`error`."""

    def __init__(self, function: Callable[[], object], name: str):
        self._function, self._name = function, name
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = None
        self._started = self._finished = None
        self.error: BaseException | None = None

    def start(self) -> None:
        """Start the thread (only the first call does)."""
        with self._lock:
            if self._thread is None:
                self._started = time.perf_counter()
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()

    def _run(self):
        try:
            self._function()
        except Exception as exc:  # kept for the callers to report: a thread cannot raise to them
            self.error = exc
        finally:
            self._finished = time.perf_counter()
            self._done.set()

    def wait(self, timeout=None) -> bool:
        """Wait at most ``timeout`` seconds; True once the task has finished."""
        return self._done.wait(timeout)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def seconds(self) -> float:
        """How long it has run (until it finished); 0 before it starts."""
        if self._started is None:
            return 0.0
        return (self._finished or time.perf_counter()) - self._started


_blas_lock = threading.Lock()
_blas_set = False


def limit_blas_threads_once(environ=None) -> int | None:
    """Set the process's BLAS threads to ``SNACKS_BLAS_THREADS`` (default 1; 0 leaves them)
    the first time it is called in this process; returns the limit set (None: left alone).

    Once, at the start: a limit changed and restored around each run would be changed
    back by one session while another's run is in progress (the setting is the process's).
    """
    global _blas_set
    value = (os.environ if environ is None else environ).get("SNACKS_BLAS_THREADS", "1")
    try:
        threads = int(value)
    except ValueError:
        threads = -1
    if threads < 0:
        raise ValueError(f"SNACKS_BLAS_THREADS must be an integer >= 0, got {value!r}.")
    with _blas_lock:
        if _blas_set or threads == 0:
            return None
        # threadpoolctl limits the BLAS libraries loaded when it is called: load NumPy's and
        # SciPy's first (importing snacks_core loads its modules only when they are used).
        importlib.import_module("scipy.linalg")
        threadpool_limits(threads, user_api="blas")
        _blas_set = True
        return threads
