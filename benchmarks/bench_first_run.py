"""The first run after install: ``snacks fit`` with an empty ``NUMBA_CACHE_DIR`` against a
warm run.

``PYTHONPATH=. python benchmarks/bench_first_run.py [--rows 30000] [--repeats 2]`` writes an
a9a-shaped *synthetic* LIBSVM file (:func:`snacks_core.datasets.make_a9a_like`: 123 binary
features, 14 non-zeros a row) under ``$TMPDIR`` and copies ``snacks_core`` (sources only, no
``__pycache__``) into two fresh folders; then, each in a fresh subprocess and ``--repeats``
times (the fastest counts):

- "after make install": in one copy, ``make install``'s compile step
  (:func:`snacks_core.cli.compile_ahead.compile_ahead`, ``NUMBA_CACHE_DIR`` unset: the code goes to
  the copy's ``__pycache__``), then ``snacks fit FILE`` (default options) with
  ``NUMBA_CACHE_DIR`` a new empty folder: issue 30's measure;
- "never compiled": ``snacks fit FILE`` from the other copy, nothing compiled anywhere, so
  that every jitted function the fit needs is compiled;
- "warm": the same command again on the cache the previous run filled;
- "import sklearn.svm": ``python -c "import sklearn.svm"``, the baseline.

Prints the wall and CPU times, each first run's cost over the warm one and its ratio to the
baseline (issue 30's target: at most 2×), and the jitted functions the never-compiled run
compiled, with their number of type specialisations.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import dump_svmlight_file

from snacks_core.datasets import make_a9a_like

# The fit, then the specialisations each snacks_core dispatcher compiled (not found in a
# cache), on standard error.
FIT = """
import gc, sys
from numba.core.registry import CPUDispatcher
from snacks_core.cli import main
code = main(sys.argv[1:])
for d in gc.get_objects():
    if (isinstance(d, CPUDispatcher) and d.py_func.__module__.startswith("snacks_core")
            and sum(d.stats.cache_misses.values())):
        print("compiled", f"{d.py_func.__module__}.{d.__name__}",
              sum(d.stats.cache_misses.values()), file=sys.stderr)
sys.exit(code)
"""
# The Makefile's install step.
INSTALL_WARM_UP = ("from snacks_core.cli.compile_ahead import compile_ahead; "
                   "compile_ahead({sample!r})")


def timed(command, env, cwd):
    """Wall and CPU seconds (user + system) of ``command`` in a subprocess, and its
    standard error.  Compiling runs on one thread, so on a quiet machine the two agree for
    it; on a shared one the CPU seconds drift less."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True,
                          check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return np.array([wall, cpu]), done.stderr


def fresh_copy(root, folder) -> Path:
    """``snacks_core``'s sources copied under ``folder`` (nothing compiled), for PYTHONPATH."""
    shutil.copytree(root / "snacks_core", folder / "snacks_core",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=30_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent
    sample = str(root / "sample_data" / "a9a_small.svm")
    runs = {name: [] for name in ("never compiled", "after make install", "warm",
                                  "import sklearn.svm")}
    compiled = compiled_after_install = ""
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        data = folder / "a9a_like.svm"
        X, y, _, _ = make_a9a_like(args.rows, 1, random_state=0)
        dump_svmlight_file(X, y, str(data), zero_based=False)
        fit = [sys.executable, "-c", FIT, "fit", str(data)]
        for repeat in range(args.repeats):
            cold = fresh_copy(root, folder / f"cold_{repeat}")
            env = {**os.environ, "PYTHONPATH": str(cold),
                   "NUMBA_CACHE_DIR": str(folder / f"numba_cache_{repeat}")}
            seconds, compiled = timed(fit, env, folder)
            runs["never compiled"].append(seconds)
            runs["warm"].append(timed(fit, env, folder)[0])
            runs["import sklearn.svm"].append(
                timed([sys.executable, "-c", "import sklearn.svm"], env, folder)[0])
            installed = fresh_copy(root, folder / f"installed_{repeat}")
            env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
            env["PYTHONPATH"] = str(installed)
            timed([sys.executable, "-c", INSTALL_WARM_UP.format(sample=sample)], env, folder)
            env["NUMBA_CACHE_DIR"] = str(folder / f"numba_cache_install_{repeat}")
            seconds, compiled_after_install = timed(fit, env, folder)
            runs["after make install"].append(seconds)
    # The fastest of the repeats, wall and CPU seconds apart.
    best = {name: np.min(seconds, axis=0) for name, seconds in runs.items()}
    print(f"a9a-shaped synthetic file, {args.rows:,} rows; fastest of {args.repeats}")
    print("| run | wall s | CPU s |")
    print("|---|---|---|")
    for name, seconds in best.items():
        print(f"| {name} | {seconds[0]:.2f} | {seconds[1]:.2f} |")
    for name in ("after make install", "never compiled"):
        ratio = (best[name] - best["warm"]) / best["import sklearn.svm"]
        print(f"\n({name} − warm) / import sklearn.svm: **{ratio[0]:.2f}×** wall, "
              f"**{ratio[1]:.2f}×** CPU (target ≤ 2×)")
    for name, output in (("never-compiled", compiled),
                         ("after-install", compiled_after_install)):
        lines = sorted(line.split(maxsplit=2)[1:] for line in output.splitlines()
                       if line.startswith("compiled "))
        said = "snacks: compiling (once after installing)" in output
        print(f"\nCompiled in the {name} run: {len(lines)} functions, "
              f"{sum(int(count) for _, count in lines)} specialisations; "
              f"{'said' if said else 'did not say'} that it compiles")
        for function, count in lines:
            print(f"- {function}: {count}")


if __name__ == "__main__":
    main()
