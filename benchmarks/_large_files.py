"""Large synthetic data files for the large-data benchmarks (bench_large.py).

``write_file(X, y, path, fmt)`` writes a LIBSVM (``fmt='libsvm'``) or CSV (``'csv'``, label
in the first column as in HIGGS.csv) file with every value as a fixed-point decimal of
``digits`` fractional digits (SUSY.bz2 and HIGGS.csv.gz write 10 to 18 significant digits),
compressed by its suffix (``.gz``, ``.bz2``, ``.xz``).  The text is formatted by a jitted
loop: Python's ``%`` formatting would take minutes for millions of rows.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import subprocess
from pathlib import Path

import numba
import numpy as np


@numba.njit(cache=True)
def _format_rows(X, y, libsvm, digits, out):
    """Text of the rows into ``out`` (large enough); returns the bytes written."""
    scale = 10.0 ** digits
    pos = 0
    for i in range(X.shape[0]):
        label = int(y[i])
        if label < 0:
            out[pos] = 45
            pos += 1
            label = -label
        elif libsvm:
            out[pos] = 43
            pos += 1
        out[pos] = 48 + label
        pos += 1
        for j in range(X.shape[1]):
            out[pos] = 32 if libsvm else 44
            pos += 1
            if libsvm:
                index = j + 1
                if index >= 10:
                    out[pos] = 48 + index // 10
                    pos += 1
                out[pos] = 48 + index % 10
                out[pos + 1] = 58
                pos += 2
            value = X[i, j]
            if value < 0:
                out[pos] = 45
                pos += 1
                value = -value
            fixed = np.int64(value * scale + 0.5)
            whole, fraction = fixed // np.int64(scale), fixed % np.int64(scale)
            start = pos
            if whole == 0:
                out[pos] = 48
                pos += 1
            while whole > 0:
                out[pos] = 48 + whole % 10
                whole //= 10
                pos += 1
            out[start:pos] = out[start:pos][::-1].copy()
            out[pos] = 46
            pos += 1
            for k in range(digits - 1, -1, -1):
                out[pos + k] = 48 + fraction % 10
                fraction //= 10
            pos += digits
        out[pos] = 10
        pos += 1
    return pos


def format_rows(X, y, fmt, digits=10):
    """The bytes of ``X``/``y`` as LIBSVM or CSV text (label first)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    width = 8 + X.shape[1] * (digits + 25)
    out = np.empty(X.shape[0] * width, dtype=np.uint8)
    size = _format_rows(X, np.asarray(y, dtype=np.int64), fmt == "libsvm", digits, out)
    return out[:size].tobytes()


def write_file(make_rows, n_rows, path, fmt, *, digits=10, block=500_000):
    """Write ``n_rows`` rows from ``make_rows(start, stop) -> (X, y)`` to ``path`` in blocks,
    compressed by its suffix; gzip and bz2 through the system's pigz/gzip/bzip2 when present
    (as the files on the LIBSVM site were made), Python's modules otherwise."""
    path = Path(path)
    suffix = path.suffix
    command = {".gz": ["gzip", "-c", "-6"], ".bz2": ["bzip2", "-c", "-9"]}.get(suffix)
    with open(path, "wb") as raw:
        if command is not None:
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=raw)
            sink = process.stdin
        else:
            process = None
            sink = {".xz": lambda: lzma.open(raw, "wb"), ".gz": lambda: gzip.open(raw, "wb"),
                    ".bz2": lambda: bz2.open(raw, "wb")}.get(suffix, lambda: raw)()
        for start in range(0, n_rows, block):
            X, y = make_rows(start, min(n_rows, start + block))
            sink.write(format_rows(X, y, fmt, digits))
        if sink is not raw:
            sink.close()
        if process is not None and process.wait() != 0:
            raise OSError(f"{command[0]} failed on {path}")
    return path
