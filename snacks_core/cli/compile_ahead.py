"""The install step: compile the numba code of the default fits once, into the package's
``__pycache__`` folders, where :func:`snacks_core.core.compiled.njit` finds it even when
``NUMBA_CACHE_DIR`` is set (``make install`` runs it; after a plain ``pip install``:
``python -m snacks_core.cli.compile_ahead [FILE]``)."""

from __future__ import annotations

import sys


def compile_ahead(sample_file=None) -> None:
    """What ``make install`` compiles (``python -m snacks_core.cli.compile_ahead [FILE]`` after a
    plain ``pip install``): every solver on a few rows (the app's warm-up), then the
    command line's default fit on the LIBSVM file ``sample_file`` (default: 2,000 generated
    a9a-shaped rows in a temporary file) and on 12,000 and 40,000 generated a9a-shaped rows
    (early stopping, and the parallel passes: over the training rows from 12,000, over the
    held-out rows too from 40,000, as on a9a)."""
    import contextlib
    import os
    import tempfile
    import time

    from snacks_core.cli import main
    from snacks_core.model.warm_up import warm_up

    started = time.perf_counter()
    warm_up()
    # The fits' own reports say nothing of what was compiled: one line says it instead.
    with (tempfile.TemporaryDirectory() as folder, open(os.devnull, "w") as quiet,
          contextlib.redirect_stdout(quiet)):
        if sample_file is None:
            from sklearn.datasets import dump_svmlight_file

            from snacks_core.datasets import make_a9a_like

            X, y, _, _ = make_a9a_like(2000, 1, random_state=0)
            sample_file = f"{folder}/a9a_like.svm"
            dump_svmlight_file(X, y, sample_file, zero_based=False)
        for argv in (["fit", str(sample_file)], ["fit", "a9a_like", "--n-samples", "12000"],
                     ["fit", "a9a_like", "--n-samples", "40000"]):
            main([*argv, "--progress", "never"])
    print(f"snacks: compiled the code of every solver and of the default fits in "
          f"{time.perf_counter() - started:.0f} s; later runs read it from the package's "
          "__pycache__ folders.")


if __name__ == "__main__":
    compile_ahead(*sys.argv[1:2])
