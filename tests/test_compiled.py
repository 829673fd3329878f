"""snacks_core.core.compiled.njit: code compiled beside the sources (as `make install` and a
wheel's build do) is read even when NUMBA_CACHE_DIR points elsewhere or an install copied it;
numba's own njit is the oracle for the rest."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

MODULE = """
import numba
from snacks_core.core.compiled import njit

@njit(cache=True)
def ours(x):
    return x + {offset}

@numba.njit(cache=True)
def numbas(x):
    return x + {offset}
"""

CALL = """
import json, sys
sys.path.insert(0, sys.argv[1])
import jitted
print(json.dumps({name: [f(1), sum(f.stats.cache_hits.values()),
                         sum(f.stats.cache_misses.values())]
                  for name, f in (("ours", jitted.ours), ("numba", jitted.numbas))}))
"""


def call(folder, cache_dir=None):
    """{function: [f(1), cache hits, cache misses]} in a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    done = subprocess.run([sys.executable, "-c", CALL, str(folder)], env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout)


@pytest.mark.slow
def test_code_compiled_in_tree_is_read_with_an_empty_numba_cache_dir(tmp_path):
    module = tmp_path / "code" / "jitted.py"
    module.parent.mkdir()
    module.write_text(textwrap.dedent(MODULE.format(offset=1)))
    # The install step: compiled with NUMBA_CACHE_DIR unset, into the module's __pycache__.
    assert call(module.parent) == {"ours": [2, 0, 1], "numba": [2, 0, 1]}
    # An empty NUMBA_CACHE_DIR: numba's njit compiles again, ours reads the install's code.
    assert call(module.parent, tmp_path / "empty") == {"ours": [2, 1, 0], "numba": [2, 0, 1]}
    # The source changed since: the installed entry is stale and compiled again, never run.
    module.write_text(textwrap.dedent(MODULE.format(offset=10)))
    assert call(module.parent, tmp_path / "empty2") == {"ours": [11, 0, 1],
                                                        "numba": [11, 0, 1]}


@pytest.mark.slow
def test_code_compiled_in_tree_is_read_after_a_copy_with_new_times(tmp_path):
    """An install copies the sources and their __pycache__ with new modification times:
    the compiled code is still read (it is stamped by the source's content)."""
    module = tmp_path / "code" / "jitted.py"
    module.parent.mkdir()
    module.write_text(textwrap.dedent(MODULE.format(offset=1)))
    assert call(module.parent)["ours"] == [2, 0, 1]
    installed = tmp_path / "installed"
    shutil.copytree(module.parent, installed, copy_function=shutil.copy)  # times not kept
    os.utime(installed / "jitted.py", (1e9, 1e9))
    assert call(installed)["ours"] == [2, 1, 0]
    assert call(installed, tmp_path / "empty")["ours"] == [2, 1, 0]


# A fit from the package under sys.argv[1] (before any other install of it), then the
# snacks_core functions it compiled.
FIT_FROM = """
import gc, importlib.machinery, sys
sys.path.insert(0, sys.argv[1])
sys.meta_path.insert(0, importlib.machinery.PathFinder)
import snacks_core
assert snacks_core.__file__.startswith(sys.argv[1]), snacks_core.__file__
from numba.core.registry import CPUDispatcher
from snacks_core.cli import main
assert main(sys.argv[2:]) == 0
print(sorted(d.__name__ for d in gc.get_objects() if isinstance(d, CPUDispatcher)
             and d.py_func.__module__.startswith("snacks_core")
             and sum(d.stats.cache_misses.values())))
"""


def project_copy(root, folder) -> Path:
    """What ``pip install .`` reads of the checkout ``root``, copied into ``folder``: the
    sources (nothing compiled), the build backend, pyproject and README (also
    benchmarks/bench_first_run.py's)."""
    for name in ("snacks_core", "build_support"):
        shutil.copytree(root / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(root / name, folder / name)
    return folder


@pytest.mark.slow
def test_a_wheel_carries_the_default_fits_compiled_code(tmp_path):
    """`pip install .` builds a wheel: its build step compiles the default fits into it, so
    the first fit after installing the wheel elsewhere compiles nothing."""
    root = Path(__file__).resolve().parent.parent
    project = project_copy(root, tmp_path / "project")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", str(project), "--no-deps", "--no-build-isolation",
                    "-w", str(tmp_path / "wheels")], check=True, capture_output=True)
    wheel = next((tmp_path / "wheels").glob("*.whl"))
    subprocess.run([*pip, "install", "--no-deps", "--target", str(tmp_path / "site"),
                    str(wheel)], check=True, capture_output=True)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "empty")}
    done = subprocess.run([sys.executable, "-c", FIT_FROM, str(tmp_path / "site"), "fit",
                           str(root / "sample_data" / "a9a_small.svm"), "--progress", "never"],
                          env=env, check=True, capture_output=True, text=True)
    assert done.stdout.splitlines()[-1] == "[]"
    assert "compiling" not in done.stderr
