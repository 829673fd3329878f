"""A server shared by a class: cancellation of long computations, the heavy-run queue, the
background warm-up and the once-per-process BLAS setting (no Streamlit here, except the
check that a cancelled fit leaves nothing in the app's cache)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import urllib.request

import numpy as np
import pytest
from sklearn.datasets import make_moons

from snacks_core import SnacksClassifier, datasets
from snacks_core.app import cpu_sharing
from snacks_core.core.cancellation import Cancelled, carry, raise_if_stopped, stop_when
from snacks_core.core.threads import for_row_blocks
from snacks_core.model import evaluation
from snacks_core.model.search import SnacksSearchCV
from snacks_core.model.specs import Resources
from snacks_core.model.sweeps import robustness_grid
from snacks_core.solvers import EMBEDDED_SOLVERS


class StopAfter:
    """A should_stop() that turns True once ``count()`` has reached ``k``."""

    def __init__(self, k, count):
        self.k, self.count, self.polls = k, count, 0

    def __call__(self):
        self.polls += 1
        return self.count() >= self.k


# --- cancellation ---------------------------------------------------------------------------

def test_stop_when_nests_and_restores():
    with stop_when(lambda: False):
        raise_if_stopped()
        with stop_when(lambda: True), pytest.raises(Cancelled):
            raise_if_stopped()
        with stop_when(None):
            raise_if_stopped()
        raise_if_stopped()
    with stop_when(lambda: True), stop_when(lambda: False), pytest.raises(Cancelled):
        raise_if_stopped()  # the enclosing check stays in force
    raise_if_stopped()


def test_carry_takes_the_check_to_another_thread():
    outcome = []

    def task():
        try:
            raise_if_stopped()
            outcome.append("ran")
        except Cancelled:
            outcome.append("cancelled")

    with stop_when(lambda: True):
        bare, carried = threading.Thread(target=task), threading.Thread(target=carry(task))
    for thread in (bare, carried):
        thread.start()
        thread.join()
    assert outcome == ["ran", "cancelled"]


@pytest.mark.parametrize("n_threads", [1, 2])
def test_row_blocks_stop_between_blocks(n_threads):
    done = []
    lock = threading.Lock()

    def task(start, stop, scratch):
        with lock:
            done.append(start)

    with stop_when(StopAfter(3, lambda: len(done))), pytest.raises(Cancelled):
        for_row_blocks(100, 10, n_threads, task)
    # Each thread polls before taking a block: at most one block per thread after the third.
    assert 3 <= len(done) <= 3 + n_threads - 1
    for_row_blocks(100, 10, n_threads, task)  # no check: every block
    assert len(done) >= 13


@pytest.mark.parametrize("solver", EMBEDDED_SOLVERS)
def test_a_solver_stops_at_the_checkpoint_after_the_check_flips(solver):
    X, y = make_moons(300, noise=0.2, random_state=0)
    checkpoints = []
    model = SnacksClassifier(n_components=30, lam=1e-4, solver=solver, max_epochs=40,
                             tol=1e-12, random_state=0, early_stopping=False,
                             solver_options={"callback": lambda r, w: checkpoints.append(r)})
    full = len(model.fit(X, y).history_["iteration"])
    assert full > 3
    checkpoints.clear()
    with stop_when(StopAfter(2, lambda: len(checkpoints))), pytest.raises(Cancelled):
        model.fit(X, y)
    assert len(checkpoints) == 2  # the third checkpoint raised before its callback


@pytest.mark.parametrize("multiclass", ["ovr", "ovo"])
def test_two_class_subproblems_in_threads_are_cancelled(multiclass):
    """One-vs-rest's columns stop at their next checkpoint; one-vs-one's pairs (each one
    compiled call, its checkpoint at the end) before or after their call."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 100)
    X = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])[y] + rng.normal(scale=0.7, size=(300, 2))
    checkpoints = []
    lock = threading.Lock()

    def count(record, w):
        with lock:
            checkpoints.append(record)

    model = SnacksClassifier(n_components=20, lam=1e-4, max_epochs=40, tol=1e-12,
                             early_stopping=False, n_jobs=3, random_state=0,
                             multiclass=multiclass, solver_options={"callback": count})
    with stop_when(StopAfter(2, lambda: len(checkpoints))), pytest.raises(Cancelled):
        model.fit(X, y)
    assert 2 <= len(checkpoints) <= 4  # the two other threads stop at their next checkpoint


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_grid_is_cancelled_inside_its_columns(n_jobs):
    X, y = make_moons(300, noise=0.2, random_state=0)
    fits, checkpoints = [], []
    estimator = SnacksClassifier(
        max_epochs=20, tol=1e-12, early_stopping=False,
        solver_options={"callback": lambda r, w: checkpoints.append(r)})
    grid = dict(m=[10, 20], lam=[1e-2, 1e-3, 1e-4], gamma=2.0, seeds=[0], estimator=estimator,
                resources=Resources(n_jobs=n_jobs,
                                    progress=lambda done, total, row: fits.append(done)))
    full = robustness_grid(X, y, **grid)
    assert len(full) == 6 and not full.attrs["stopped"] and len(checkpoints) > 12
    fits.clear()
    checkpoints.clear()
    with stop_when(StopAfter(3, lambda: len(checkpoints))), pytest.raises(Cancelled):
        robustness_grid(X, y, **grid)
    # Stopped in the first cells of each column: no column finished.
    assert fits == [] and len(checkpoints) <= 3 + n_jobs - 1


def test_a_search_is_cancelled():
    X, y = make_moons(300, noise=0.2, random_state=0)
    search = SnacksSearchCV(SnacksClassifier(n_components=20, max_epochs=10, random_state=0),
                            {"lam": [1e-2, 1e-3, 1e-4]}, cv=3)
    polls = StopAfter(10**9, lambda: 0)
    with stop_when(polls):
        search.fit(X, y)
    assert polls.polls > 3  # polled along the way, never asked to stop: a complete search
    assert hasattr(search, "best_params_")
    with stop_when(StopAfter(3, lambda: polls.polls)), pytest.raises(Cancelled):
        search.fit(X, y)


def test_a_cancelled_fit_leaves_nothing_in_the_app_cache(monkeypatch):
    pytest.importorskip("streamlit")
    from snacks_core.app import cached, server

    server.WARM_UP.wait()  # it trains too, started when the app's modules were imported
    calls = []
    train = evaluation.train

    def counting_train(*args, **kwargs):
        calls.append(1)
        return train(*args, **kwargs)

    monkeypatch.setattr(cached.evaluation, "train", counting_train)
    split = datasets.split_dataset(datasets.make_synthetic("moons", 200, noise=0.2,
                                                           random_state=0), random_state=0)
    params = {"kernel": "rbf", "gamma": "scale", "n_components": 20, "lam": 1e-3,
              "solver": "snacks", "sampling": "uniform", "max_epochs": 30,
              "class_weight": None, "random_state": 12345}
    key = ("test-cancelled-fit", cached.params_key(params))
    with stop_when(lambda: True), pytest.raises(Cancelled):
        cached._train(*key, split, params)
    run = cached._train(*key, split, params)  # computed again: the failure was not cached
    assert len(calls) == 2
    assert run.metrics["test_error"] < 0.3
    assert cached._train(*key, split, params) is run and len(calls) == 2


# --- the heavy-run queue ---------------------------------------------------------------------

def test_queue_starts_up_to_the_limit_then_first_in_first_out():
    queue = cpu_sharing.RunQueue(2)
    tickets = [queue.join() for _ in range(5)]
    started = [queue.wait_turn(t, timeout=0) for t in tickets]
    assert started == [True, True, False, False, False]
    assert [queue.position(t) for t in tickets] == [0, 0, 0, 1, 2]
    assert (queue.running(), queue.waiting()) == (2, 3)
    queue.leave(tickets[1])
    assert [queue.wait_turn(t, timeout=0) for t in tickets[2:]] == [True, False, False]
    assert [queue.position(t) for t in tickets[3:]] == [0, 1]


def test_leaving_the_queue_moves_the_others_up():
    queue = cpu_sharing.RunQueue(1)
    first, second, third, fourth = (queue.join() for _ in range(4))
    queue.leave(third)  # a closed tab
    assert [queue.position(t) for t in (second, fourth)] == [0, 1]
    queue.leave(third)  # twice is harmless
    queue.leave(first)
    assert queue.wait_turn(second, timeout=0) and not queue.wait_turn(fourth, timeout=0)
    assert queue.position(fourth) == 0
    queue.leave(second)
    assert queue.wait_turn(fourth, timeout=0)
    queue.leave(fourth)
    assert (queue.running(), queue.waiting()) == (0, 0)


def test_try_start_never_jumps_the_queue():
    queue = cpu_sharing.RunQueue(1)
    holder = queue.try_start()
    assert holder is not None and queue.try_start() is None
    waiting = queue.join()
    queue.leave(holder)
    assert queue.try_start() is None  # the slot went to the one waiting
    assert queue.wait_turn(waiting, timeout=0)


def test_slot_waits_its_turn_and_can_leave():
    queue = cpu_sharing.RunQueue(1)
    order, positions = [], []
    holder = queue.try_start()
    arrived = threading.Event()

    def run(name, should_leave=None):
        def on_wait(position):
            positions.append((name, position))
            arrived.set()
        try:
            with queue.slot(should_leave=should_leave, on_wait=on_wait, poll=0.01):
                order.append(name)
        except Cancelled:
            order.append(f"{name} left")

    leave = threading.Event()
    threads = [threading.Thread(target=run, args=("a",))]
    threads[0].start()
    assert arrived.wait(10)
    threads.append(threading.Thread(target=run, args=("b", leave.is_set)))
    threads[1].start()
    while ("b", 1) not in positions:
        threading.Event().wait(0.01)
    leave.set()
    threads[1].join(10)
    assert order == ["b left"] and queue.waiting() == 1
    queue.leave(holder)
    threads[0].join(10)
    assert order == ["b left", "a"]
    assert ("a", 0) in positions and (queue.running(), queue.waiting()) == (0, 0)


def test_heavy_runs_and_the_setting():
    assert not cpu_sharing.is_heavy(cpu_sharing.fit_work(300, 500, "snacks"))  # any 2-D Playground
    assert cpu_sharing.is_heavy(cpu_sharing.fit_work(35_000, 2000, "snacks"))
    assert cpu_sharing.is_heavy(cpu_sharing.fit_work(5000, 10, "libsvm"))  # n² kernel
    assert cpu_sharing.max_heavy_runs({"SNACKS_MAX_HEAVY_RUNS": "3"}) == 3
    assert cpu_sharing.max_heavy_runs({}) == max(1, cpu_sharing.usable_cores() // 2)
    for bad in ("0", "-1", "two"):
        with pytest.raises(ValueError, match="SNACKS_MAX_HEAVY_RUNS"):
            cpu_sharing.max_heavy_runs({"SNACKS_MAX_HEAVY_RUNS": bad})
    with pytest.raises(ValueError, match="at least 1"):
        cpu_sharing.RunQueue(0)


# --- warm-up and BLAS threads ----------------------------------------------------------------

def test_background_task_runs_once_and_keeps_its_error():
    calls = []
    task = cpu_sharing.BackgroundTask(lambda: calls.append(1), name="test")
    assert not task.done and task.seconds() == 0.0
    task.start()
    task.start()
    assert task.wait(10) and task.done and calls == [1] and task.error is None

    def fail():
        raise RuntimeError("no compiler")

    failing = cpu_sharing.BackgroundTask(fail, name="test")
    failing.start()
    assert failing.wait(10) and isinstance(failing.error, RuntimeError)


@pytest.mark.slow
def test_blas_threads_are_set_once_per_process():
    script = ("from threadpoolctl import threadpool_info\n"
              "from snacks_core.app import cpu_sharing\n"
              "print(cpu_sharing.limit_blas_threads_once({'SNACKS_BLAS_THREADS': '1'}),"
              " cpu_sharing.limit_blas_threads_once({'SNACKS_BLAS_THREADS': '1'}),"
              " {i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'})\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["1", "None", "{1}"]
    assert cpu_sharing.limit_blas_threads_once({"SNACKS_BLAS_THREADS": "0"}) is None
    with pytest.raises(ValueError, match="SNACKS_BLAS_THREADS"):
        cpu_sharing.limit_blas_threads_once({"SNACKS_BLAS_THREADS": "many"})


@pytest.mark.parametrize("queue", [[], ["fragment"]])
@pytest.mark.parametrize("scoped", [False, True])
def test_a_rerun_cancels_the_run_exactly_when_streamlit_preempts_it(queue, scoped):
    """The app's stop check reads Streamlit's private request state: it must agree with
    Streamlit's own rule for which reruns interrupt the running script."""
    pytest.importorskip("streamlit")
    from types import SimpleNamespace

    from streamlit.runtime.scriptrunner_utils.script_requests import (
        RerunData,
        _fragment_run_should_not_preempt_script,
    )

    from snacks_core.app import server

    requests = SimpleNamespace(_rerun_data=RerunData(fragment_id_queue=queue,
                                                     is_fragment_scoped_rerun=scoped))
    assert server._preempts(requests) == (
        not _fragment_run_should_not_preempt_script(queue, scoped))


@pytest.mark.slow
def test_make_run_warms_the_solvers_up_before_anyone_visits(tmp_path):
    """`make run`'s launcher starts the warm-up with the server: its log says the solvers are
    warm while no page has been opened (`streamlit run app.py` would wait for a visitor)."""
    from test_browser import free_port

    port = free_port()
    log = tmp_path / "server.log"
    environ = {k: v for k, v in os.environ.items() if k != "SNACKS_BLAS_THREADS"}
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "snacks_core.app.launch", "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1",
             "--browser.gatherUsageStats", "false"],
            cwd=tmp_path, env=environ, stdout=output, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 180
            while "the solvers are warm" not in log.read_text():
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health",
                                        timeout=5) as response:
                assert response.read() == b"ok"
        finally:
            process.terminate()
            process.wait(timeout=20)
