"""The running server, shared by a class: its one warm-up and one heavy-run queue, cancelled
work when a tab closes, and what each session sees of them (Streamlit messages).

Importing this module sets the process's BLAS threads once and starts the solvers' warm-up
on a background thread: ``make run`` imports it when the server starts
(:mod:`snacks_core.app.launch`), ``streamlit run app.py`` at the first visit.  The
mechanisms, without Streamlit, are :mod:`snacks_core.app.cpu_sharing` and
:mod:`snacks_core.core.cancellation`.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager

import streamlit as st
from streamlit import runtime
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from snacks_core.app import cpu_sharing
from snacks_core.core.cancellation import Cancelled, stop_when
from snacks_core.model import warm_up

# Set once for the process: per run it would be a race between sessions (see
# cpu_sharing.limit_blas_threads_once).  tests/conftest.py sets SNACKS_BLAS_THREADS=0: AppTest
# runs the app inside pytest's process, whose later tests must keep their BLAS threads.
# A bad setting is shown on every page (wait_for_warm_up) and its default used.
SETTING_PROBLEMS = []
try:
    cpu_sharing.limit_blas_threads_once()
except ValueError as exc:
    SETTING_PROBLEMS.append(f"{exc} The BLAS threads were left as they were.")


def _warm_up():
    """The solvers' warm-up, said in the server's log when it is over (the log tells a
    teacher the server is ready before anyone visits)."""
    start = time.perf_counter()
    warm_up.warm_up()
    print(f"Snacks Explorer: the solvers are warm ({time.perf_counter() - start:.1f} s).",
          file=sys.stderr, flush=True)


WARM_UP = cpu_sharing.BackgroundTask(_warm_up, name="snacks-warm-up")
WARM_UP.start()
try:
    HEAVY_RUNS = cpu_sharing.RunQueue(cpu_sharing.max_heavy_runs())
except ValueError as exc:
    HEAVY_RUNS = cpu_sharing.RunQueue(cpu_sharing.max_heavy_runs({}))
    SETTING_PROBLEMS.append(f"{exc} The default, {HEAVY_RUNS.limit}, is used.")
# The script thread that holds a slot of HEAVY_RUNS (see train_slot).
_holder = threading.local()


def wait_for_warm_up() -> None:
    """While the warm-up runs, say so (with the seconds so far) instead of a blank page;
    return once it is done.  Also shows the server's settings that could not be used."""
    for problem in SETTING_PROBLEMS:
        st.error(problem, icon=":material/error:")
    if not WARM_UP.done:
        message = st.empty()
        while not WARM_UP.wait(0.25):
            message.info(f"**Warming up:** loading and compiling the solvers, once per "
                         f"server start ({WARM_UP.seconds():.0f} s so far). The page "
                         "continues by itself.",
                         icon=":material/hourglass_top:")
        message.empty()
    if WARM_UP.error is not None:
        st.warning(f"The solvers' warm-up failed ({WARM_UP.error}); they compile at their "
                   "first use instead.", icon=":material/warning:")


def session_gone():
    """A check, usable from any thread, that is True once this session's browser tab has
    closed or its script run is asked to stop or rerun (a changed widget, a Stop button):
    nobody will see the result of the run in progress."""
    ctx = get_script_run_ctx()
    if ctx is None or not runtime.exists():
        return lambda: False
    session_id, requests = ctx.session_id, ctx.script_requests

    def gone():
        # ScriptRequests has no public state: a rerun or stop that preempts this run shows
        # in its private _state.  Without it, only a closed tab is seen.
        state = getattr(getattr(requests, "_state", None), "name", None)
        return (not runtime.get_instance().is_active_session(session_id) or state == "STOP"
                or state == "RERUN" and _preempts(requests))

    return gone


def _preempts(requests) -> bool:
    """Whether a requested rerun interrupts the running script: Streamlit lets a fragment's
    rerun wait for the script unless it was asked for with st.rerun(scope="fragment")."""
    data = getattr(requests, "_rerun_data", None)
    return not getattr(data, "fragment_id_queue", None) or bool(
        getattr(data, "is_fragment_scoped_rerun", False))


@contextmanager
def cancel_when_gone():
    """Run the page: its computations stop (:class:`Cancelled`) soon after the tab closes
    or a new run preempts this one, and the page ends there without a message (nobody is
    waiting for it; a rerun draws the page anew)."""
    try:
        with stop_when(session_gone()):
            yield
    except Cancelled:
        pass


@contextmanager
def heavy_run(what):
    """Hold a slot of the heavy-run queue for the block, showing this session's place in
    line while it waits; ``what`` names the run ("the sweep")."""
    if getattr(_holder, "ticket", False):
        yield
        return
    message = st.empty()

    def show(position):
        running = HEAVY_RUNS.running()
        ahead = (f"{position} more wait{'s' * (position == 1)} ahead of you" if position
                 else "you are next in line")
        message.info(f"**Queued:** {what} waits for a free slot: {running} heavy "
                     f"run{'s' * (running != 1)} running (this server runs at most "
                     f"{HEAVY_RUNS.limit} at once), {ahead}. It starts by itself.",
                     icon=":material/schedule:")

    with HEAVY_RUNS.slot(should_leave=session_gone(), on_wait=show):
        message.empty()
        _holder.ticket = True
        try:
            yield
        finally:
            _holder.ticket = False


class SlotBusy(Exception):  # noqa: N818 (a state, raised to leave a cached function)
    """A heavy fit found no free slot: the caller waits in line (:func:`heavy_run`) and
    calls again."""


@contextmanager
def train_slot(work):
    """For the body of a cached fit: a slot when the fit is heavy (:func:`cpu_sharing.is_heavy`)
    and this thread holds none; raises :class:`SlotBusy` when none is free.

    Inside the cached function, so that a result already in the cache never waits in line;
    the wait itself is shown outside it (Streamlit replays what a cached function draws).
    """
    if not cpu_sharing.is_heavy(work) or getattr(_holder, "ticket", False):
        yield
        return
    ticket = HEAVY_RUNS.try_start()
    if ticket is None:
        raise SlotBusy
    try:
        yield
    finally:
        HEAVY_RUNS.leave(ticket)
