"""A multi-gigabyte file to a fitted model through ``snacks fit``, against scikit-learn's
reader and an in-memory fit of the same data, measured in one run.

``PYTHONPATH=. python benchmarks/bench_large.py [--rows 2000000] [--m 1000] [--higgs-rows 0]
[--dir $TMPDIR/snacks_large]`` writes (once) a SUSY-shaped LIBSVM file of ``--rows`` rows
(0: none)
× 18 (values with 10 decimals, as the LIBSVM site's SUSY) and its ``.bz2``, then prints:

1. parsing the text: :func:`snacks_core.datasets.load_libsvm` against
   ``sklearn.datasets.load_svmlight_file`` (the issue's target: 2x on 2 cores);
2. the baseline: ``load_svmlight_file`` + the CLI's split and scaling + an in-memory
   ``SnacksClassifier(n_components=m, lam=1e-5)`` fit + predict, in this process;
3. ``snacks fit FILE --m M --lam 1e-5`` (no size option), ``--memory-budget 2GB`` and the
   ``.bz2`` file, each in its own process: wall time, peak resident memory (GNU time), test
   error, and the ratio to the baseline (targets: 1x; 1.5x and 3.5 GB for the budget).

With ``--higgs-rows N`` it also writes a HIGGS-shaped ``.csv.gz`` (N × 28, label first, as
HIGGS.csv.gz) and runs ``snacks fit`` on it beside ``pandas.read_csv``'s parse time and an
in-memory fit of a 500,000-row subsample.  Files go under ``--dir`` (never the repository).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _large_files import write_file  # noqa: E402
from _report import machine  # noqa: E402
from snacks_core import SnacksClassifier  # noqa: E402
from snacks_core.datasets import load_csv, load_libsvm, make_susy_like  # noqa: E402

LAM = 1e-5
SUBSAMPLE = 500_000
ROOT = Path(__file__).resolve().parent.parent


def susy_rows(start, stop):
    """SUSY-shaped rows, the same whatever the block size (one seed per 500,000 rows)."""
    return make_susy_like(stop - start, random_state=1000 + start // 500_000)


def higgs_rows(start, stop):
    """HIGGS-shaped rows: 28 columns, the 18 SUSY-shaped ones and 10 products of them."""
    X, y = susy_rows(start, stop)
    return np.hstack([X, X[:, :10] * X[:, 8:18]]), y


def run_cli(argv):
    """(wall seconds, peak RSS bytes, test error, stdout) of ``snacks`` in its own process.

    The peak is GNU time's (%M): a child's own ru_maxrss would count this process's memory
    at the fork, which the baseline has filled.
    """
    with tempfile.NamedTemporaryFile() as peak, tempfile.TemporaryFile() as out, \
            tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        status = subprocess.call(["/usr/bin/time", "-f", "%M", "-o", peak.name, sys.executable,
                                  "-m", "snacks_core.cli", *argv], stdout=out, stderr=err,
                                 cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
        kilobytes = int(Path(peak.name).read_text().split()[-1])
    if status:
        raise SystemExit(f"snacks {' '.join(argv)} failed: {stderr[-2000:]}")
    error = float(re.search(r"test error\s+([0-9.e-]+)", stdout).group(1))
    return wall, kilobytes * 1024, error, stdout


def baseline(path, m):
    """load_svmlight_file + the CLI's split and scaling + an in-memory fit + predict."""
    from sklearn.datasets import load_svmlight_file
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    start = time.perf_counter()
    X, y = load_svmlight_file(str(path))
    parsed = time.perf_counter() - start
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0,
                                                        stratify=y)
    scaler = StandardScaler(with_mean=False)
    X_train, X_test = scaler.fit_transform(X_train), scaler.transform(X_test)
    model = SnacksClassifier(n_components=m, lam=LAM, random_state=0).fit(X_train, y_train)
    error = float(np.mean(model.predict(X_test) != y_test))
    return time.perf_counter() - start, parsed, error


def timed(function):
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--m", type=int, default=1000)
    parser.add_argument("--higgs-rows", type=int, default=0)
    parser.add_argument("--moonshot-rows", type=int, default=0,
                        help="also fit this many SUSY-shaped rows with m = 2000 (the embedding "
                             "far beyond memory) and report time, storage and test error")
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "snacks_large"))
    args = parser.parse_args()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    print(machine())
    if args.rows:
        susy(folder, args.rows, args.m)
    if args.higgs_rows:
        higgs(folder, args.higgs_rows, args.m)
    if args.moonshot_rows:
        moonshot(args.moonshot_rows)


def moonshot(rows, m=2000, test_rows=200_000):
    """A default fit of ``rows`` SUSY-shaped rows with m landmarks: the n × m embedding
    (80 GB as float32 for 10M × 2000) is planned onto disk; time, storage, test error."""
    import resource
    import warnings

    X, y = susy_rows(0, rows + test_rows)
    mean, scale = X[:rows].mean(axis=0), X[:rows].std(axis=0)
    X = (X - mean) / scale
    model = SnacksClassifier(n_components=m, lam=LAM, random_state=0)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X[:rows], y[:rows])
    fit = time.perf_counter() - start
    start = time.perf_counter()
    error = float(np.mean(model.predict(X[rows:]) != y[rows:]))
    predict = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"\nMoonshot: {rows:,} SUSY-shaped rows x 18, m = {m}, λ = {LAM:g}: fit {fit:.0f} s "
          f"(embedding {model.embedding_time_:.0f} s, training {model.training_time_:.0f} s, "
          f"{model.history_['epoch'].max():.2f} epochs, {', '.join(model.stop_reasons_)}), "
          f"kept as {model.storage_}; predict {test_rows:,} rows {predict:.0f} s; test error "
          f"{100 * error:.2f} %; peak RSS {peak:.1f} GiB")
    for warning in caught:
        print(f"  plan: {warning.message}")


def susy(folder, rows, m):
    """Parse and end-to-end runs on a SUSY-shaped LIBSVM file and its .bz2."""
    text = folder / f"susy_{rows}.svm"
    compressed = folder / f"susy_{rows}.svm.bz2"
    for path in (text, compressed):
        if not path.is_file():
            write_file(susy_rows, rows, path, "libsvm")
    size = text.stat().st_size / 2**20
    print(f"\nSUSY-shaped LIBSVM text: {rows:,} rows x 18, {size:.0f} MiB "
          f"({compressed.stat().st_size / 2**20:.0f} MiB as .bz2); m = {m}, λ = {LAM:g}")

    from sklearn.datasets import load_svmlight_file

    ours, _ = timed(lambda: load_libsvm(text))
    theirs, _ = timed(lambda: load_svmlight_file(str(text)))
    ours_bz2, _ = timed(lambda: load_libsvm(compressed))
    print("\n| parse | seconds | MiB/s | load_svmlight_file / this |")
    print("|---|---|---|---|")
    print(f"| sklearn load_svmlight_file | {theirs:.1f} | {size / theirs:.0f} | 1.00x |")
    print(f"| snacks load_libsvm | {ours:.1f} | {size / ours:.0f} | {theirs / ours:.2f}x |")
    print(f"| snacks load_libsvm, .bz2 | {ours_bz2:.1f} | {size / ours_bz2:.0f} | "
          f"{theirs / ours_bz2:.2f}x |")

    base, base_parse, base_error = baseline(text, m)
    runs = {"snacks fit (no size option)": [str(text)],
            "snacks fit --memory-budget 2GB": [str(text), "--memory-budget", "2GB"],
            "snacks fit, .bz2": [str(compressed)]}
    print("\n| end to end | wall (s) | peak RSS (GiB) | test error | time / baseline |")
    print("|---|---|---|---|---|")
    print(f"| baseline: load_svmlight_file ({base_parse:.1f} s) + in-memory fit + predict | "
          f"{base:.1f} | | {100 * base_error:.2f} % | 1.00x |")
    for name, argv in runs.items():
        wall, peak, error, _ = run_cli(["fit", *argv, "--m", str(m), "--lam", str(LAM)])
        print(f"| {name} | {wall:.1f} | {peak / 2**30:.2f} | {100 * error:.2f} % | "
              f"{wall / base:.2f}x |")


def higgs(folder, rows, m):
    """snacks fit on a HIGGS-shaped .csv.gz; pandas' parse; an in-memory subsample fit."""
    import pandas as pd

    path = folder / f"higgs_{rows}.csv.gz"
    if not path.is_file():
        write_file(higgs_rows, rows, path, "csv", digits=9)
    print(f"\nHIGGS-shaped CSV: {rows:,} rows x 28, {path.stat().st_size / 2**30:.2f} GiB "
          f"gzip; m = {m}, λ = {LAM:g}")
    parse_pandas, _ = timed(lambda: pd.read_csv(path, header=None))
    parse_ours, data = timed(lambda: load_csv(path, label_column=0))
    print(f"parse: pandas.read_csv {parse_pandas:.0f} s, snacks load_csv {parse_ours:.0f} s "
          f"({parse_pandas / parse_ours:.2f}x)")
    rng = np.random.default_rng(0)
    train = min(SUBSAMPLE, data.n_samples // 2)
    rows_sub = rng.choice(data.n_samples, train + min(100_000, train), replace=False)
    X, y = data.X[rows_sub], data.y[rows_sub]
    del data
    mean, scale = X[:train].mean(axis=0), X[:train].std(axis=0)
    model = SnacksClassifier(n_components=m, lam=LAM, random_state=0)
    model.fit((X[:train] - mean) / scale, y[:train])
    sub_error = float(np.mean(model.predict((X[train:] - mean) / scale) != y[train:]))
    wall, peak, error, out = run_cli(["fit", str(path), "--label-column", "0", "--m", str(m),
                                      "--lam", str(LAM)])
    times = dict(re.findall(r"(embedding|training) time \(s\)\s+([0-9.]+)", out))
    print(f"snacks fit: {wall:.0f} s (embedding {float(times['embedding']):.0f} s, training "
          f"{float(times['training']):.0f} s), peak RSS {peak / 2**30:.2f} GiB, test error "
          f"{100 * error:.2f} %; in-memory fit of a {train:,}-row subsample: "
          f"{100 * sub_error:.2f} %")


if __name__ == "__main__":
    main()
