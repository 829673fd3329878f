"""The numpydoc ``Examples`` sections run as doctests.

The modules are listed here rather than collected with ``--doctest-modules``, so that
collection never imports the Streamlit pages, ``snacks_core.app`` or the benchmarks, and a
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
    "snacks_core.model.defaults",
    "snacks_core.model.estimator",
    "snacks_core.kernels.functions",
    "snacks_core.core.memory",
    "snacks_core.kernels.nystrom",
    "snacks_core.solvers.objective",
    "snacks_core.kernels.operators",
    "snacks_core.kernels.random_features",
    "snacks_core.model.search",
    "snacks_core.model.sweeps",
    "snacks_core.core.threads",
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
