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

import importlib
import sys
import warnings

from .parser import STOPPED, build_parser

__all__ = ["main", "build_parser", "STOPPED", "COMMANDS"]

# Command → the module of this package that runs it.
COMMANDS = {"fit": "fit", "predict": "predict", "heatmap": "heatmap", "compare": "compare",
            "search": "search", "datasets": "listing"}


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(f"snacks: warning: {message}\n")


def main(argv=None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 failed run, 2 bad arguments,
    3 heatmap stopped before its last cell, 130 interrupted)."""
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning
        try:
            command = importlib.import_module(f".{COMMANDS[args.command]}", __name__)
            return command.run(args)
        # A failed download is a ConnectionError, an OSError.
        except (ValueError, OSError) as exc:
            message = " ".join(str(exc).split())
            sys.stderr.write(f"snacks {args.command}: error: {message}\n")
            return 1
        except KeyboardInterrupt:
            sys.stderr.write("\nsnacks: interrupted\n")
            return 130
