"""Numba's ``njit`` for the package: the code compiled at install is found whatever
``NUMBA_CACHE_DIR`` says.

``make install`` compiles the code of the default fits
(:func:`snacks_core.cli.compile_ahead.compile_ahead`) into numba's
cache beside the sources, each module's ``__pycache__``.  Numba reads that folder only while
``NUMBA_CACHE_DIR`` is unset: with it set (a container's scratch folder, a CI cache) the
first run compiled everything again, for seconds.  A function decorated with :func:`njit`
``(cache=True)`` first looks in its module's ``__pycache__`` when that folder holds the
function's index (written at install) and is writable, and otherwise where numba would
look.  Numba checks each cached entry against the source file's hash and the machine's CPU
as usual: a stale or foreign entry is compiled again, never run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numba
from numba.core import config
from numba.core.caching import CompileResultCacheImpl, FunctionCache, InTreeCacheLocator


class InstalledCacheLocator(InTreeCacheLocator):
    """The module's ``__pycache__``, when NUMBA_CACHE_DIR is set and the install step left
    the function's index there (numba's own locators are tried otherwise)."""

    @classmethod
    def from_function(cls, py_func, py_file):
        if not config.CACHE_DIR:
            return None  # numba's in-tree locator is first anyway
        locator = super().from_function(py_func, py_file)
        if locator is None or not index_path(locator, py_func, py_file).is_file():
            return None
        return locator


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
