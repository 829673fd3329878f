"""Numba's ``njit`` for the package: the code compiled at install is found wherever it was
installed and whatever ``NUMBA_CACHE_DIR`` says.

The install compiles the code of the default fits
(:func:`snacks_core.cli.compile_ahead.compile_ahead`) into numba's cache beside the sources,
each module's ``__pycache__``: ``make install`` after its editable install, and a plain
``pip install .`` inside the wheel it builds (``build_support/snacks_build.py``).  Numba read
that folder only while ``NUMBA_CACHE_DIR`` was unset, and (before numba 0.68) only while each
source file kept the modification time it had when compiled, which a wheel's install does
not keep.  A function decorated with :func:`njit` ``(cache=True)`` first looks in its
module's ``__pycache__`` when that folder holds the function's index and is writable, and
stamps each entry with a hash of its source file's content (numba's own stamp since 0.68);
otherwise it looks where numba would.  Numba still checks each entry against the stamp, its
own version and the machine's CPU: a stale or foreign entry is compiled again, never run.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from pathlib import Path

import numba
from numba.core.caching import CompileResultCacheImpl, FunctionCache, InTreeCacheLocator


class InstalledCacheLocator(InTreeCacheLocator):
    """The module's ``__pycache__``, when the install step left the function's index there
    (numba's own locators are tried otherwise); entries stamped by the source's content."""

    def get_source_stamp(self):
        path = Path(self._py_file)
        stat = path.stat()
        return source_hash(path, stat.st_mtime_ns, stat.st_size)

    @classmethod
    def from_function(cls, py_func, py_file):
        locator = super().from_function(py_func, py_file)
        if locator is None or not index_path(locator, py_func, py_file).is_file():
            return None
        return locator


@functools.lru_cache(maxsize=None)
def source_hash(path, mtime_ns, size) -> bytes:
    """SHA-256 of a source file, computed once per version of it (its time and size are in
    the key, so a file edited while the process runs is hashed again)."""
    return hashlib.sha256(path.read_bytes()).digest()


def index_path(locator, py_func, py_file) -> Path:
    """Where numba keeps ``py_func``'s index (its naming: ``module.qualname-line.pyXY.nbi``)."""
    name = f"{Path(py_file).stem}.{py_func.__qualname__}".replace("<", "").replace(">", "")
    version = f"py{sys.version_info[0]}{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"
    return (Path(locator.get_cache_path())
            / f"{name}-{locator.get_disambiguator()}.{version}.nbi")


class InstalledFirstImpl(CompileResultCacheImpl):
    _locator_classes = [InstalledCacheLocator, *CompileResultCacheImpl._locator_classes]


class InstalledFirstCache(FunctionCache):
    _impl_class = InstalledFirstImpl


def njit(function=None, *, cache=False, **options):
    """``numba.njit`` (its keyword options); with ``cache=True`` the install's compiled
    code is read first."""
    def decorate(function):
        dispatcher = numba.njit(**options)(function)
        if cache:
            dispatcher._cache = InstalledFirstCache(dispatcher.py_func)
        return dispatcher

    return decorate if function is None else decorate(function)
