"""The first run after ``pip install .``: ``snacks fit`` in a fresh virtual environment, just
installed, against a warm run.

``python benchmarks/bench_first_run.py [--rows 30000] [--repeats 2]`` (any Python with numpy,
scikit-learn and this package importable) writes an a9a-shaped *synthetic* LIBSVM file
(:func:`snacks_core.datasets.make_a9a_like`: 123 binary features, 14 non-zeros a row) under
``$TMPDIR``, then does what a user does:

- builds the wheel as ``pip install .`` does (an isolated build environment; the build step
  compiles the default fits' numba code into it: ``build_support/snacks_build.py``), timed;
- installs it with its dependencies into a new virtual environment (from the package
  registries or pip's cache);
- ``--repeats`` times: reinstalls the wheel's files (``--force-reinstall --no-deps``), then,
  each in a fresh process of that environment with ``NUMBA_CACHE_DIR`` unset:
  "after pip install ." ``snacks fit FILE`` (default options), "warm" the same again,
  "import sklearn.svm" the baseline, and "never compiled" the same fit after deleting the
  installed numba cache (``*.nbi``, ``*.nbc``), as a wheel built without the step.

Prints the wall and CPU times (fastest of the repeats), each first run's cost over the warm
one as a ratio to the baseline (issue 37's target: at most 2×), and the jitted functions each
first run compiled, with their number of type specialisations.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_compiled import project_copy  # noqa: E402

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




def installed_environment(root, folder):
    """A new virtual environment with this package's wheel installed; the wheel, and the
    seconds its build took (wall, CPU)."""
    subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True)
    python = str(folder / "venv" / "bin" / "python")
    pip = [python, "-m", "pip", "--disable-pip-version-check", "-q"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR")}
    project = project_copy(root, folder / "project")
    build, _ = timed([*pip, "wheel", str(project), "--no-deps", "-w", str(folder / "wheels")],
                     env, folder)
    wheel = next((folder / "wheels").glob("*.whl"))
    subprocess.run([*pip, "install", str(wheel)], env=env, cwd=folder, check=True)
    return python, pip, env, wheel, build


def installed_cache(python, env, folder):
    """The numba cache files installed with the package."""
    site = subprocess.run([python, "-c", "import snacks_core, os; "
                           "print(os.path.dirname(snacks_core.__file__))"],
                          env=env, cwd=folder, capture_output=True, text=True, check=True)
    package = Path(site.stdout.strip())
    return [*package.rglob("*.nbi"), *package.rglob("*.nbc")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=30_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent
    runs = {name: [] for name in ("after pip install .", "warm", "never compiled",
                                  "import sklearn.svm")}
    compiled = {}
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        data = folder / "a9a_like.svm"
        X, y, _, _ = make_a9a_like(args.rows, 1, random_state=0)
        dump_svmlight_file(X, y, str(data), zero_based=False)
        python, pip, env, wheel, build = installed_environment(root, folder)
        fit = [python, "-c", FIT, "fit", str(data)]
        for _ in range(args.repeats):
            subprocess.run([*pip, "install", "--force-reinstall", "--no-deps", str(wheel)],
                           env=env, cwd=folder, check=True)
            seconds, compiled["after pip install ."] = timed(fit, env, folder)
            runs["after pip install ."].append(seconds)
            runs["warm"].append(timed(fit, env, folder)[0])
            runs["import sklearn.svm"].append(
                timed([python, "-c", "import sklearn.svm"], env, folder)[0])
            for path in installed_cache(python, env, folder):
                path.unlink()
            seconds, compiled["never compiled"] = timed(fit, env, folder)
            runs["never compiled"].append(seconds)
    report(args, runs, compiled, build)


def report(args, runs, compiled, build):
    """The table, the ratios and what each first run compiled."""
    best = {name: np.min(seconds, axis=0) for name, seconds in runs.items()}
    print(f"a9a-shaped synthetic file, {args.rows:,} rows; fastest of {args.repeats}; "
          f"building the wheel (isolated, with its compile step) took {build[0]:.0f} s")
    print("| run | wall s | CPU s |")
    print("|---|---|---|")
    for name, seconds in best.items():
        print(f"| {name} | {seconds[0]:.2f} | {seconds[1]:.2f} |")
    for name in ("after pip install .", "never compiled"):
        ratio = (best[name] - best["warm"]) / best["import sklearn.svm"]
        print(f"\n({name} − warm) / import sklearn.svm: **{ratio[0]:.2f}×** wall, "
              f"**{ratio[1]:.2f}×** CPU (target ≤ 2×)")
    for name, output in compiled.items():
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
