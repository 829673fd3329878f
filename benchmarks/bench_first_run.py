"""The first run after install: ``snacks fit`` with an empty numba cache against a warm one.

``PYTHONPATH=. python benchmarks/bench_first_run.py [--rows 30000] [--repeats 2]`` writes an
a9a-shaped *synthetic* LIBSVM file (:func:`snacks_core.datasets.make_a9a_like`: 123 binary
features, 14 non-zeros a row) under ``$TMPDIR``, then, each in a fresh subprocess and
``--repeats`` times (the fastest counts):

- "cold": ``snacks fit FILE`` (default options) with ``NUMBA_CACHE_DIR`` a new empty folder,
  so that every jitted function the fit needs is compiled;
- "warm": the same command again on the cache the cold run filled;
- "after make install": the same command on a cache that only ``make install``'s warm-up
  step (``evaluation.warm_up()`` and ``snacks fit sample_data/a9a_small.svm``) filled;
- "import sklearn.svm": ``python -c "import sklearn.svm"``, the baseline.

Prints the wall and CPU times, the compile cost (cold − warm) and its ratio to the baseline
(issue 30's target: at most 2×), and the jitted functions the cold run compiled, with their
number of type specialisations.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import dump_svmlight_file

from snacks_core.datasets import make_a9a_like

# The fit, then each snacks_core dispatcher's compiled specialisations on standard error.
FIT = """
import gc, sys
from numba.core.registry import CPUDispatcher
from snacks_core.cli import main
code = main(sys.argv[1:])
for d in gc.get_objects():
    if (isinstance(d, CPUDispatcher) and d.signatures
            and d.py_func.__module__.startswith("snacks_core")):
        print("compiled", f"{d.py_func.__module__}.{d.__name__}", len(d.signatures),
              file=sys.stderr)
sys.exit(code)
"""
# The Makefile's install step.
INSTALL_WARM_UP = ("from snacks_core.evaluation import warm_up; warm_up(); "
                   "from snacks_core.cli import main; main(['fit', {sample!r}])")


def timed(command, env):
    """Wall and CPU seconds (user + system) of ``command`` in a subprocess, and its
    standard error.  Compiling runs on one thread, so on a quiet machine the two agree for
    it; on a shared one the CPU seconds drift less."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return np.array([wall, cpu]), done.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=30_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "a9a_like.svm"
        X, y, _, _ = make_a9a_like(args.rows, 1, random_state=0)
        dump_svmlight_file(X, y, str(data), zero_based=False)
        env = {**os.environ, "PYTHONPATH": str(root)}
        fit = [sys.executable, "-c", FIT, "fit", str(data)]
        cold, warm, installed, baseline, compiled = [], [], [], [], ""
        for repeat in range(args.repeats):
            env["NUMBA_CACHE_DIR"] = str(Path(folder) / f"numba_cache_{repeat}")
            seconds, compiled = timed(fit, env)
            cold.append(seconds)
            warm.append(timed(fit, env)[0])
            baseline.append(timed([sys.executable, "-c", "import sklearn.svm"], env)[0])
            # What `make install` leaves: a cache filled by its warm-up step only.
            env["NUMBA_CACHE_DIR"] = str(Path(folder) / f"numba_cache_install_{repeat}")
            sample = str(root / "sample_data" / "a9a_small.svm")
            timed([sys.executable, "-c", INSTALL_WARM_UP.format(sample=sample)], env)
            installed.append(timed(fit, env)[0])
    # The fastest of the repeats, wall and CPU seconds apart.
    cold, warm, installed, baseline = (np.min(runs, axis=0)
                                       for runs in (cold, warm, installed, baseline))
    print(f"a9a-shaped synthetic file, {args.rows:,} rows; fastest of {args.repeats}")
    print("| run | wall s | CPU s |")
    print("|---|---|---|")
    for name, seconds in (("snacks fit, empty NUMBA_CACHE_DIR (cold)", cold),
                          ("snacks fit, same cache again (warm)", warm),
                          ("snacks fit after make install's warm-up step", installed),
                          ("python -c 'import sklearn.svm'", baseline),
                          ("cold − warm (compiling)", cold - warm)):
        print(f"| {name} | {seconds[0]:.2f} | {seconds[1]:.2f} |")
    for name, first in (("cold", cold), ("after make install", installed)):
        ratio = (first - warm) / baseline
        print(f"\n({name} − warm) / import sklearn.svm: **{ratio[0]:.2f}×** wall, "
              f"**{ratio[1]:.2f}×** CPU (target ≤ 2×)")
    lines = sorted(line.split(maxsplit=2)[1:] for line in compiled.splitlines()
                   if line.startswith("compiled "))
    print(f"\nCompiled in the cold run: {len(lines)} functions, "
          f"{sum(int(count) for _, count in lines)} specialisations")
    for name, count in lines:
        print(f"- {name}: {count}")


if __name__ == "__main__":
    main()
