"""The numpydoc ``Examples`` sections run as doctests.

The modules are listed here rather than collected with ``--doctest-modules``, so that
collection never imports the Streamlit pages, ``snacks_core.ui`` or the benchmarks, and a
module listed without a single example fails instead of passing silently.
"""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "snacks_core.datasets.bundled",
    "snacks_core.datasets.csv_reader",
    "snacks_core.datasets.dataset",
    "snacks_core.datasets.download",
    "snacks_core.datasets.files",
    "snacks_core.datasets.libsvm_reader",
    "snacks_core.datasets.sample_data",
    "snacks_core.datasets.split",
    "snacks_core.datasets.synthetic",
    "snacks_core.defaults",
    "snacks_core.estimator",
    "snacks_core.kernels",
    "snacks_core.memory",
    "snacks_core.nystrom",
    "snacks_core.objective",
    "snacks_core.operators",
    "snacks_core.random_features",
    "snacks_core.search",
    "snacks_core.sweeps",
    "snacks_core.threads",
]


@pytest.mark.parametrize("name", MODULES)
def test_examples(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    for test in doctest.DocTestFinder().find(module):
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
    assert runner.tries > 0, f"{name} has no examples"
