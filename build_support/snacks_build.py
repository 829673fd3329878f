"""The package's build backend: setuptools' own, with the numba code of the default fits
compiled into the wheel.

A plain ``pip install .`` builds a wheel in a fresh build environment and installs it.
Without this step nothing was compiled, and the first ``snacks fit`` or app visit after it
spent seconds in numba's compiler (BENCHMARKS.md, "The first run after installing").  Here
the wheel's ``build_py`` step runs :mod:`snacks_core.cli.compile_ahead` on the copied
sources, so numba's cache (``__pycache__/*.nbi``, ``*.nbc``) travels in the wheel beside
them.  Numba checks each entry at load against the source's content, its own version and the
machine's CPU: a wheel taken to another machine, or installed beside another numba, compiles
again at first use and never runs foreign code.  ``SNACKS_COMPILE_AT_BUILD=0`` leaves the
step out (a wheel built for other machines); an editable install (``make install``) has
its own step in the Makefile.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 (PEP 517's hooks, as setuptools has them)
from setuptools.command.build_py import build_py

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: build-system.requires adds tomli there
    import tomli as tomllib


def get_requires_for_build_wheel(config_settings=None):
    """setuptools' requirements and the package's own: the compile step imports it."""
    with open("pyproject.toml", "rb") as file:
        dependencies = tomllib.load(file)["project"]["dependencies"]
    return [*_setuptools.get_requires_for_build_wheel(config_settings), *dependencies]


# The copied sources are imported first, even where an editable install of the package
# would be found before them (a build without isolation).
COMPILE = """
import importlib.machinery, sys
sys.path.insert(0, sys.argv[1])
sys.meta_path.insert(0, importlib.machinery.PathFinder)
import snacks_core
assert snacks_core.__file__.startswith(sys.argv[1]), snacks_core.__file__
from snacks_core.cli.compile_ahead import compile_ahead
compile_ahead()
"""


class BuildPyCompiled(build_py):
    """``build_py``, then the default fits' numba code compiled beside the copied sources."""

    def run(self):
        super().run()
        if self.editable_mode or os.environ.get("SNACKS_COMPILE_AT_BUILD") == "0":
            return
        # NUMBA_CACHE_DIR unset: numba writes to each module's __pycache__, in the wheel.
        env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        done = subprocess.run([sys.executable, "-c", COMPILE, str(Path(self.build_lib).resolve())],
                              env=env)
        if done.returncode:
            # The wheel works without it; its first fit compiles, as a source checkout does.
            print("snacks: compiling the default fits at build time failed (exit "
                  f"{done.returncode}); the first fit after installing will compile them",
                  file=sys.stderr)
