"""What the app's own fits gain from the Snacks engine work, against the code before it.

``PYTHONPATH=. python benchmarks/bench_app_fits.py [--baseline REF]`` checks out ``REF``
(default: the commit before the engine issue's first change) in a temporary git worktree
and times, alternately in fresh processes of each version, the fit the app makes with its
default settings (``SnacksClassifier(n_components=50, lam=1e-3)``) on the Playground's
moons (2,000 rows) and on a 50,000-row synthetic set (the app's large-data case): median
of 3 fits after one warm-up fit, 3 rounds; prints the medians and the ratio.
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

ROOT = Path(__file__).resolve().parent.parent
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


def run(path):
    env = {**os.environ, "PYTHONPATH": str(path)}
    # From inside the checkout: ``python -c`` puts the working directory first on sys.path.
    done = subprocess.run([sys.executable, "-c", FIT], env=env, cwd=path, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        worktree = Path(tmp) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q",
                        str(worktree), args.baseline], check=True)
        try:
            rounds = [(run(worktree), run(ROOT)) for _ in range(args.rounds)]
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(worktree)], check=True)
    print(f"| app fit (m = 50, λ = 1e-3) | before ({args.baseline}) s | now s | before / now "
          "| epochs before → now | stop now | test error % before → now |")
    print("|---|---|---|---|---|---|---|")
    for name in rounds[0][0]:
        before = np.median([r[0][name]["seconds"] for r in rounds])
        now = np.median([r[1][name]["seconds"] for r in rounds])
        b, n = rounds[-1][0][name], rounds[-1][1][name]
        print(f"| {name} | {before:.3f} | {now:.3f} | **{before / now:.1f}×** | "
              f"{b['epochs']:.1f} → {n['epochs']:.1f} | {n['stop']} | "
              f"{b['error']:.2f} → {n['error']:.2f} |")


if __name__ == "__main__":
    main()
