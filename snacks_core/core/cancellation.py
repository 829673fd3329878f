"""Stopping a long computation from outside: a stop check that the library polls.

A caller that may lose interest in a result (a server whose user closed the tab, a script
with a deadline) runs the work inside :func:`stop_when` with a ``should_stop()`` callable;
the library polls it at its natural pauses (every solver checkpoint, between the row
blocks of kernel matrices and embeddings) through :func:`raise_if_stopped`, and raises
:class:`Cancelled` out of the call once it returns True.  Nothing is returned half-done:
a cancelled fit, grid or search raises, so a cache around the call stores nothing.

The check travels with the work: it is held in a :class:`contextvars.ContextVar`, and the
library's thread pools run their tasks with the check of the thread that started them
(:func:`carry`).  Work handed to other processes (the sweeps' ``backend='processes'`` or
Dask) is not reached; the sweeps' own ``should_stop`` stops those between columns.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable
from contextlib import contextmanager

_should_stop: contextvars.ContextVar[Callable[[], bool] | None] = contextvars.ContextVar(
    "snacks_should_stop", default=None)


class Cancelled(Exception):  # noqa: N818 (what happened, like KeyboardInterrupt)
    """A computation stopped because its caller's ``should_stop()`` returned True."""


@contextmanager
def stop_when(should_stop: Callable[[], bool] | None):
    """Poll ``should_stop()`` inside the block; the library raises :class:`Cancelled` at its
    next pause once it returns True.

    An enclosing check stays in force: the work stops when either says so.  None adds
    nothing.

    Examples
    --------
    >>> from snacks_core.core.cancellation import Cancelled, raise_if_stopped, stop_when
    >>> with stop_when(lambda: True):
    ...     try:
    ...         raise_if_stopped()
    ...     except Cancelled:
    ...         print("stopped")
    stopped
    """
    outer = _should_stop.get()
    check = should_stop
    if outer is not None and should_stop is not None:
        def check():
            return should_stop() or outer()
    token = _should_stop.set(check if check is not None else outer)
    try:
        yield
    finally:
        _should_stop.reset(token)


def raise_if_stopped() -> None:
    """Raise :class:`Cancelled` if the current stop check says so (a no-op without one)."""
    should_stop = _should_stop.get()
    if should_stop is not None and should_stop():
        raise Cancelled("The computation was cancelled.")


def carry(function: Callable) -> Callable:
    """``function`` bound to the stop check in force here, for a task run on another thread
    (a new thread starts with none)."""
    should_stop = _should_stop.get()
    if should_stop is None:
        return function

    @functools.wraps(function)
    def with_check(*args, **kwargs):
        with stop_when(should_stop):
            return function(*args, **kwargs)

    return with_check
