"""Every ```python block of README.md and docs/*.md runs as written, on small files.

The blocks of one document run in order in one namespace (a later block uses what an earlier
one made), in a folder holding the files they name: ``train.txt`` and ``test.txt`` (LIBSVM),
``data.csv`` (a CSV with a ``target`` column) and ``data/part-*.parquet`` (a ``label``
column).  A block that connects to a cluster address (``tcp://HOST:8786``) connects to a
``distributed.LocalCluster`` instead.  Blocks of ```bash, ```sh or ```console are not run.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from snacks_core.datasets import sample_data_dir

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CLUSTER_ADDRESS = "tcp://HOST:8786"
_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks(document: Path) -> list[str]:
    """The code of every ```python block of ``document``, in order."""
    return _BLOCK.findall(document.read_text(encoding="utf-8"))


WITH_BLOCKS = [doc for doc in DOCUMENTS if python_blocks(doc)]


def test_the_documents_have_python_blocks_to_run():
    names = {doc.name for doc in WITH_BLOCKS}
    assert {"README.md", "library.md"} <= names


@pytest.fixture
def files_the_docs_name(tmp_path, monkeypatch):
    """A folder with the small files the blocks read, as the working directory."""
    lines = (sample_data_dir() / "a9a_small.svm").read_text().splitlines(keepends=True)
    (tmp_path / "train.txt").write_text("".join(lines[:400]))
    (tmp_path / "test.txt").write_text("".join(lines[400:600]))
    spirals = pd.read_csv(sample_data_dir() / "two_spirals.csv")
    spirals.rename(columns={"label": "target"}).to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "data").mkdir()
    rng = np.random.default_rng(0)
    for part in range(3):
        X = rng.normal(size=(150, 4))
        frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(4)])
        frame["label"] = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, -1)
        frame.to_parquet(tmp_path / "data" / f"part-{part}.parquet")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.slow
@pytest.mark.parametrize("document", WITH_BLOCKS, ids=lambda doc: doc.name)
def test_every_python_block_runs(document, files_the_docs_name):
    blocks = python_blocks(document)
    cluster = None
    namespace = {"__name__": "__main__"}
    try:
        for number, code in enumerate(blocks, 1):
            if CLUSTER_ADDRESS in code:
                if cluster is None:
                    from distributed import LocalCluster

                    cluster = LocalCluster(n_workers=2, threads_per_worker=1,
                                           processes=True, dashboard_address=None)
                code = code.replace(CLUSTER_ADDRESS, cluster.scheduler_address)
            try:
                exec(compile(code, f"{document.name}, python block {number}", "exec"),
                     namespace)
            except Exception as exc:
                pytest.fail(f"{document.name}, python block {number} fails: "
                            f"{type(exc).__name__}: {exc}\n{code}")
    finally:
        client = namespace.get("client")
        if client is not None and hasattr(client, "close"):
            client.close()
        if cluster is not None:
            cluster.close()
