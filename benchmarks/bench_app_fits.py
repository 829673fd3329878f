"""What the app's own fits gain from the Snacks engine work, against the code before it.

``PYTHONPATH=. python benchmarks/bench_app_fits.py [--baseline REF]
[--workload app|w8a|defaults|sweeps|cluster|stores]``
checks out ``REF`` (default: the commit before the engine issue's first change) in a
temporary git worktree and times, alternately in fresh processes of each version, the fit
the app makes with its default settings (``SnacksClassifier(n_components=50,
lam=1e-3)``) on the Playground's moons (2,000 rows) and on a 50,000-row synthetic set (the
app's large-data case): median of 3 fits after one warm-up fit, 3 rounds; prints the
medians and the ratio.
``--workload w8a`` times instead, on a 30,000-row subsample of ``../shared/data/w8a``, a
default fit + predict (m = 1000) and a 6 m × 6 λ robustness grid: how a refactor's
version compares with the one before it.  ``--workload defaults`` times
``SnacksClassifier()`` at its defaults on the sets of ``bench_accuracy.py`` (w8a and
pendigits from ``../shared/data`` where present, scikit-learn's digits, the generated
26-class letters look-alike), each split 80/20 or 70/30 by a seeded stratified split:
what a user's default call costs.  ``--workload sweeps`` times one sweep of dual ascent
(the loop that polishes every default fit) over an embedding's rows in a random order, at
sizes below and above this machine's caches, and checks that both versions end at the same
point.  ``--workload cluster`` times ``SnacksClassifier()`` at its defaults on Dask arrays
of the many-class sets (pendigits, digits, the letters look-alike; four partitions) on a
``LocalCluster`` of two worker processes, ``--workload stores`` with the embedding kept
compactly in memory (float16) and in a file on disk.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from _accuracy_sets import ROOT, SHARED

BASELINE = "2a0f64b^"  # before "storage: EmbeddingStore ...", the engine issue's first commit

FIT = r"""
import json, time, warnings
import numpy as np
from sklearn.datasets import make_classification, make_moons
from sklearn.model_selection import train_test_split
from snacks_core import SnacksClassifier
warnings.simplefilter("ignore")
SnacksClassifier(n_components=20, max_epochs=3).fit(*make_moons(300, random_state=0))
problems = {
    "moons 2,000 (γ = 2)": (*make_moons(2000, noise=0.25, random_state=0), {"gamma": 2.0}),
    "synthetic 50,000 × 20": (*make_classification(50_000, 20, n_informative=8, flip_y=0.05,
                                                   random_state=0), {}),
}
out = {}
for name, (X, y, options) in problems.items():
    X, X_test, y, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)
    times = []
    for _ in range(3):
        start = time.perf_counter()
        model = SnacksClassifier(n_components=50, lam=1e-3, random_state=0, **options).fit(X, y)
        times.append(time.perf_counter() - start)
    out[name] = {"seconds": float(np.median(times)), "epochs": float(model.history_["epoch"][-1]),
                 "stop": model.stop_reasons_[0],
                 "error": float(100 * np.mean(model.predict(X_test) != y_test))}
print(json.dumps(out))
"""


# ``--workload w8a``: a default fit + predict and a 6 m × 6 λ grid on real data.
W8A_WORK = r"""
import json, sys, time, warnings
import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.model_selection import train_test_split
from snacks_core import SnacksClassifier
try:  # the layout by roles, or the flat one before it
    from snacks_core.model.sweeps import robustness_grid
except ImportError:
    from snacks_core.sweeps import robustness_grid
warnings.simplefilter("ignore")
X, y = load_svmlight_file(sys.argv[1], n_features=300)
X, _, y, _ = train_test_split(X.tocsr(), y, train_size=30000, stratify=y, random_state=0)
X, X_test, y, y_test = train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
SnacksClassifier(n_components=20, max_epochs=3).fit(X[:500], y[:500])
work = {
    "w8a fit + predict (m = 1000, λ = 1e-6)": lambda: SnacksClassifier(
        gamma=0.09, n_components=1000, lam=1e-6, random_state=0).fit(X, y).predict(X_test),
    "w8a grid, 6 m × 6 λ": lambda: robustness_grid(
        X, y, X_test, y_test, m=[50, 100, 200, 400, 700, 1000],
        lam=[1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2], gamma=0.09),
}
out = {}
for name, job in work.items():
    times = []
    for _ in range(3):
        start = time.perf_counter()
        result = job()
        times.append(time.perf_counter() - start)
    error = (np.mean(result != y_test) if isinstance(result, np.ndarray)
             else result["test_error"].mean())
    out[name] = {"seconds": float(np.median(times)), "error": float(100 * error)}
print(json.dumps(out))
"""

# ``--workload defaults``: SnacksClassifier() on bench_accuracy.py's sets (_accuracy_sets.py,
# its splits; dense sets standardised, as 'auto' scaling did before it left dense columns
# on one scale as they are: every version compared gets the same rows; sparse w8a as is).
DEFAULTS_WORK = r"""
import json, sys, time, warnings
import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from snacks_core import SnacksClassifier
sys.path.insert(0, sys.argv[1])
from _accuracy_sets import datasets, selected
warnings.simplefilter("ignore")
sets = selected(datasets(), ("w8a", "pendigits", "digits", "letters"))
out = {}
for name, load in sets.items():
    X, y, test_size = load()
    X, X_test, y, y_test = train_test_split(X, y, test_size=test_size, stratify=y,
                                            random_state=0)
    if isinstance(X, np.ndarray):
        scaler = StandardScaler().fit(X)
        X, X_test = scaler.transform(X), scaler.transform(X_test)
    SnacksClassifier(random_state=0).fit(X[:2000], y[:2000])
    times = []
    for _ in range(3):
        start = time.perf_counter()
        model = SnacksClassifier(random_state=0).fit(X, y)
        times.append(time.perf_counter() - start)
    out[f"{name}, {X.shape[0]:,} rows"] = {
        "seconds": float(np.median(times)),
        "error": float(100 * np.mean(model.predict(X_test) != y_test))}
print(json.dumps(out))
"""

# ``--workload cluster``: ``SnacksClassifier()`` at its defaults on Dask arrays of the
# many-class sets (pendigits, digits, the 26-class look-alike) on a LocalCluster of two
# worker processes of one thread (median of 3 fits after a warm-up fit).
CLUSTER_WORK = r"""
import json, sys, time, warnings
import numpy as np
import dask.array as da
import distributed
from sklearn.model_selection import train_test_split
from snacks_core import SnacksClassifier
sys.path.insert(0, sys.argv[1])
from _accuracy_sets import datasets, selected
warnings.simplefilter("ignore")
out = {}
with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, \
        distributed.Client(cluster):
    for name, load in selected(datasets(), ("pendigits", "digits", "letters")).items():
        X, y, test_size = load()
        X, X_test, y, y_test = train_test_split(X, y, test_size=test_size, stratify=y,
                                                random_state=0)
        chunks = -(-X.shape[0] // 4)
        Xd, yd = da.from_array(X, chunks=(chunks, X.shape[1])), da.from_array(y, chunks=chunks)
        times = []
        for _ in range(4):
            start = time.perf_counter()
            model = SnacksClassifier(random_state=0).fit(Xd, yd)
            times.append(time.perf_counter() - start)
        out[f"{name} on 2 workers, {X.shape[0]:,} rows, {len(model.classes_)} classes"] = {
            "seconds": float(np.median(times[1:])),
            "error": float(100 * np.mean(model.predict(X_test) != y_test))}
print(json.dumps(out))
"""

# ``--workload stores``: ``SnacksClassifier()`` at its defaults on the many-class sets with
# the embedding in a store (``storage='compact'`` and ``'disk'``; median of 3 fits after a
# warm-up fit).
STORES_WORK = r"""
import json, sys, time, warnings
import numpy as np
from sklearn.model_selection import train_test_split
from snacks_core import SnacksClassifier
sys.path.insert(0, sys.argv[1])
from _accuracy_sets import datasets, selected
warnings.simplefilter("ignore")
out = {}
for name, load in selected(datasets(), ("pendigits", "letters")).items():
    X, y, test_size = load()
    X, X_test, y, y_test = train_test_split(X, y, test_size=test_size, stratify=y,
                                            random_state=0)
    for storage in ("compact", "disk"):
        times = []
        for _ in range(4):
            start = time.perf_counter()
            model = SnacksClassifier(random_state=0, storage=storage).fit(X, y)
            times.append(time.perf_counter() - start)
        out[f"{name}, storage='{storage}', {X.shape[0]:,} rows"] = {
            "seconds": float(np.median(times[1:])),
            "error": float(100 * np.mean(model.predict(X_test) != y_test))}
print(json.dumps(out))
"""

# ``--workload sweeps``: one dual-ascent sweep (median of 9) over n rows × m float32 columns
# in a random order, from the same α and w in both versions.
SWEEPS_WORK = r"""
import json, time
import numpy as np
from snacks_core.solvers.snacks_kernels import dual_ascent_sweep
out = {}
for n, m in [(1_257, 300), (7_694, 300), (16_000, 500), (50_000, 300), (16_000, 1_000),
             (200_000, 50)]:
    rng = np.random.default_rng(0)
    Z = (rng.standard_normal((n, m)) / np.sqrt(m)).astype(np.float32)
    y = np.where(rng.random(n) < 0.04, 1.0, -1.0)
    upper = np.ones(n)
    sqnorm = np.einsum("ij,ij->i", Z, Z, dtype=np.float64)
    order = rng.permutation(n)
    alpha, w = np.zeros(n), np.zeros(m)
    dual_ascent_sweep(Z, 0, y, upper, sqnorm, order, alpha, w, w.copy())
    times = []
    for _ in range(9):
        start = time.perf_counter()
        hinge = dual_ascent_sweep(Z, 0, y, upper, sqnorm, order, alpha, w, w.copy())
        times.append(time.perf_counter() - start)
    out[f"one sweep, {n:,} rows × m = {m:,} ({Z.nbytes / 2**20:.0f} MiB)"] = {
        "seconds": float(np.median(times)), "result": [float(hinge), float(w @ w)]}
print(json.dumps(out))
"""
W8A = SHARED / "w8a"
WORK = {"app": (FIT, []), "w8a": (W8A_WORK, [str(W8A)]),
        "defaults": (DEFAULTS_WORK, [str(ROOT / "benchmarks")]), "sweeps": (SWEEPS_WORK, []),
        "cluster": (CLUSTER_WORK, [str(ROOT / "benchmarks")]),
        "stores": (STORES_WORK, [str(ROOT / "benchmarks")])}


def run(path, workload):
    env = {**os.environ, "PYTHONPATH": str(path)}
    code, args = WORK[workload]
    # From inside the checkout: ``python -c`` puts the working directory first on sys.path.
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=path,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workload", choices=tuple(WORK), default="app",
                        help="the app's default fits, a fit and a grid on w8a, "
                             "SnacksClassifier() at its defaults on real and many-class sets, "
                             "one dual-ascent sweep at several sizes, or the defaults on "
                             "many-class sets on a 2-worker LocalCluster or with the "
                             "embedding in a store")
    args = parser.parse_args()
    if args.workload == "w8a" and not W8A.exists():
        print(f"skipped: {W8A} not found.")
        return
    with tempfile.TemporaryDirectory() as tmp:
        worktree = Path(tmp) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q",
                        str(worktree), args.baseline], check=True)
        try:
            rounds = [(run(worktree, args.workload), run(ROOT, args.workload))
                      for _ in range(args.rounds)]
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(worktree)], check=True)
    app = args.workload == "app"
    print(f"| {'app fit (m = 50, λ = 1e-3)' if app else 'workload'} | before "
          f"({args.baseline}) s | now s | before / now |"
          + (" epochs before → now | stop now |" if app else "")
          + (" same result |" if args.workload == "sweeps" else " test error % before → now |"))
    print("|---|---|---|---|" + ("---|---|" if app else "") + "---|")
    for name in rounds[0][0]:
        before = np.median([r[0][name]["seconds"] for r in rounds])
        now = np.median([r[1][name]["seconds"] for r in rounds])
        b, n = rounds[-1][0][name], rounds[-1][1][name]
        epochs = (f" {b['epochs']:.1f} → {n['epochs']:.1f} | {n['stop']} |" if app else "")
        outcome = (("yes" if b["result"] == n["result"] else "**no**") if "result" in n
                   else f"{b['error']:.2f} → {n['error']:.2f}")
        print(f"| {name} | {before:.3g} | {now:.3g} | **{before / now:.2f}×** |{epochs} "
              f"{outcome} |")


if __name__ == "__main__":
    main()
