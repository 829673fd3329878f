"""snacks_core.core.compiled.njit: code compiled beside the sources (as `make install` does) is
read even when NUMBA_CACHE_DIR points elsewhere; numba's own njit is the oracle for the rest."""

import json
import os
import subprocess
import sys
import textwrap

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
