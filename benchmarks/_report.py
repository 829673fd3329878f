"""Shared by the benchmark scripts: machine description and BENCHMARKS.md sections."""

from __future__ import annotations

import os
import platform
import re
import time
from pathlib import Path

import numpy as np

BENCHMARKS_MD = Path(__file__).resolve().parent.parent / "BENCHMARKS.md"


def machine() -> str:
    """One line naming the CPU, cores, memory and library versions."""
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    import numba
    import sklearn

    return (f"{model}, {os.cpu_count()} cores, {memory:.0f} GiB; "
            f"Python {platform.python_version()}, NumPy {np.__version__}, "
            f"scikit-learn {sklearn.__version__}, numba {numba.__version__}; "
            f"{time.strftime('%Y-%m-%d')}")


def best_time(function, repeats=3):
    """Smallest wall time of ``repeats`` calls and the last result (timings drift here)."""
    best, result = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def optimal_objective(Z, y, lam):
    """F* on an embedding from LIBLINEAR run to tol 1e-8 (C = 1/(2nλ), hinge, no intercept)."""
    from sklearn.svm import LinearSVC

    from snacks_core.solvers.objective import lam_to_C, primal_objective

    reference = LinearSVC(C=lam_to_C(lam, Z.shape[0]), loss="hinge", fit_intercept=False,
                          tol=1e-8, max_iter=100000).fit(Z, y)
    return primal_objective(reference.coef_.ravel(), Z, y, lam)


def write_section(name: str, body: str) -> None:
    """Replace (or append) the section between this benchmark's markers in BENCHMARKS.md."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n{body.rstrip()}\n{end}"
    text = BENCHMARKS_MD.read_text() if BENCHMARKS_MD.exists() else (
        "# Benchmarks\n\nEach section is written by its script in `benchmarks/`; every speed "
        "claim is a ratio measured side by side in one run on the machine named in it.\n")
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    BENCHMARKS_MD.write_text(text)
