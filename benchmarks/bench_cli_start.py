"""How quickly the command line starts, against ``python -c "import sklearn.svm"``.

``PYTHONPATH=. python benchmarks/bench_cli_start.py [--repeats 7] [--rows 30000] [--write]``
times, each in a fresh subprocess, ``--repeats`` times in turn (the median counts):

- "import sklearn.svm": ``python -c "import sklearn.svm"``, the baseline;
- "snacks --help": the parser alone (it imports no numerical library);
- "import snacks_core": the package (its public names load on first use);
- "snacks fit": ``snacks fit FILE --test FILE --model M`` at default settings on an
  a9a-shaped *synthetic* LIBSVM file of ``--rows`` training rows (written once under
  ``$TMPDIR``), after one untimed run that fills numba's cache; its **overhead** is the wall
  time less the embedding and training times it prints.
- "snacks predict": ``snacks predict M FILE --out P`` with that model on the test file.

Prints each median and its ratio to the baseline (issue 30's targets: ``snacks --help`` at
most 0.5×, the fit's overhead at most 1.5×); ``--write`` also replaces the "Command-line
start" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sklearn.datasets import dump_svmlight_file

from _report import machine, write_section
from snacks_core.datasets import make_a9a_like

ROOT = Path(__file__).resolve().parent.parent


def wall(argv) -> tuple[float, str]:
    """Wall time of a fresh ``python argv…`` and its standard output."""
    start = time.perf_counter()
    result = subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                            cwd=ROOT, check=True)
    return time.perf_counter() - start, result.stdout


def fit_times(output) -> float:
    """Embedding + training seconds printed by ``snacks fit``."""
    seconds = 0.0
    for line in output.splitlines():
        name, _, value = line.strip().rpartition(" ")
        if name.strip() in ("embedding time (s)", "training time (s)"):
            seconds += float(value)
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--rows", type=int, default=30_000)
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="bench_cli_start_", dir=os.environ.get("TMPDIR")))
    X, y, X_test, y_test = make_a9a_like(args.rows, args.rows // 2, random_state=0)
    train, test = folder / "train.svm", folder / "test.svm"
    dump_svmlight_file(X, y, str(train), zero_based=False)
    dump_svmlight_file(X_test, y_test, str(test), zero_based=False)
    model, predictions = folder / "model.npz", folder / "predictions.txt"
    cli = ["-m", "snacks_core.cli"]
    commands = {
        "import sklearn.svm": ["-c", "import sklearn.svm"],
        "snacks --help": [*cli, "--help"],
        "import snacks_core": ["-c", "import snacks_core"],
        "snacks fit": [*cli, "fit", str(train), "--test", str(test), "--model", str(model),
                       "--progress", "never"],
        "snacks predict": [*cli, "predict", str(model), str(test), "--out", str(predictions)],
    }
    wall(commands["snacks fit"])  # numba's cache filled: the first run is bench_first_run's
    times = {name: [] for name in commands}
    overheads = []
    for _ in range(args.repeats):
        for name, argv in commands.items():
            seconds, output = wall(argv)
            times[name].append(seconds)
            if name == "snacks fit":
                overheads.append(seconds - fit_times(output))
    median = {name: statistics.median(values) for name, values in times.items()}
    median["snacks fit overhead"] = statistics.median(overheads)
    baseline = median["import sklearn.svm"]
    rows = [f"| {name} | {seconds:.2f} | {seconds / baseline:.2f}× |"
            for name, seconds in median.items()]
    body = "\n".join([
        "## Command-line start",
        "",
        f"`benchmarks/bench_cli_start.py --repeats {args.repeats} --rows {args.rows}`; "
        f"{machine()}. Medians of {args.repeats} fresh processes run in turn; the fit on an "
        f"a9a-shaped synthetic file ({args.rows:,} + {args.rows // 2:,} rows) at default "
        "settings with numba's cache warm; its overhead is the wall time less the embedding "
        "and training times it prints.",
        "",
        "| command | wall (s) | ÷ import sklearn.svm |",
        "|---|---|---|",
        *rows])
    print(body)
    if args.write:
        write_section("cli-start", body)


if __name__ == "__main__":
    main()
