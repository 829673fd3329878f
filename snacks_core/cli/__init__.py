"""The ``snacks`` command line: fit and save a model, predict with it, fill a robustness
heatmap, compare solvers, search by cross-validation.

::

    snacks fit DATA [--test FILE] [--model NPZ] [options]   train one model, print its metrics
    snacks predict MODEL DATA [--out FILE] [--decision-values]  predict a file's rows
    snacks heatmap DATA --m … --lam … [options]   test error over an (m, λ) or (γ, λ) grid
    snacks compare DATA [options]                 every solver on one setting (Tables III–VII)
    snacks search DATA [options]                  choose γ, λ (or C), m and the scaling by CV
    snacks datasets [--download NAME …]           list, or download, the public LIBSVM datasets

DATA is a built-in name — a synthetic generator, a scikit-learn bundled dataset,
``a9a_like`` (the a9a-shaped generator) or a public LIBSVM dataset (downloaded once into
the cache), a file of ``sample_data/`` by its name, or the path of a CSV or LIBSVM file.
Mistakes give one line on stderr and exit status 2 (bad arguments) or 1 (bad data, failed
download, impossible run); a heatmap stopped by Ctrl-C writes its finished cells and exits
with status 3 (130 when a second Ctrl-C aborts it: the cells finished so far stay in the
output file, which gets each cell as it finishes).

Each command is a module of this package with a ``run(args)`` function, imported only once
the arguments are parsed: ``snacks --help`` and argument errors never load the numerical
libraries (:mod:`.parser` imports the standard library alone).
"""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys
import threading
import warnings

from snacks_core.cli.parser import STOPPED, build_parser

__all__ = ["main", "run", "command_line", "build_parser", "STOPPED", "COMMANDS"]

# Command → the module of this package that runs it.
COMMANDS = {"fit": "fit", "predict": "predict", "heatmap": "heatmap", "compare": "compare",
            "search": "search", "datasets": "listing"}


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(f"snacks: warning: {message}\n")


def main(argv=None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 failed run, 2 bad arguments,
    3 heatmap stopped before its last cell, 130 interrupted)."""
    return run(build_parser().parse_args(argv))


def command_module(args):
    """The module of this package that runs the parsed command ``args``."""
    return importlib.import_module(f".{COMMANDS[args.command]}", __name__)


def run(args) -> int:
    """Run the parsed command ``args`` (:func:`main`'s status)."""
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning
        try:
            return command_module(args).run(args)
        # A failed download is a ConnectionError, an OSError.
        except (ValueError, OSError) as exc:
            message = " ".join(str(exc).split())
            sys.stderr.write(f"snacks {args.command}: error: {message}\n")
            return 1
        except KeyboardInterrupt:
            sys.stderr.write("\nsnacks: interrupted\n")
            return 130


def command_line():
    """The ``snacks`` program: :func:`main`, with two savings of a short command's start and
    end (measured in BENCHMARKS.md, "Your own data").

    - Python's cyclic garbage collector waits until the command's modules are imported,
      then leaves them out of its scans (``gc.freeze``): importing scikit-learn, SciPy and
      numba makes hundreds of thousands of objects that live as long as the process, and
      scanning them again and again as they were made costs CPU for nothing.
    - The process ends without the interpreter's teardown (freeing every module and LLVM's
      compiled code, a noticeable share of a short command).  Once the command has
      returned, the exit handlers run (temporary files, a Dask client), the output is
      flushed and the process ends; while a thread other than the main one is still
      running it exits as usual.
    """
    gc.disable()
    args = build_parser().parse_args()
    command_module(args)
    gc.freeze()
    gc.enable()
    code = run(args)
    if any(thread is not threading.main_thread() and not thread.daemon
           for thread in threading.enumerate()):
        sys.exit(code)
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a closed pipe: Python's own exit reports it
        sys.exit(code)
    os._exit(code)
