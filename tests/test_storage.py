"""Embedding storage: round trips of every kind, block reads, planning, cleanup, memory bounds."""

from __future__ import annotations

import gc
import os
import re
import subprocess
import sys
import textwrap
import tracemalloc
from collections import namedtuple

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification

from snacks_core.core import memory
from snacks_core.core.validation import check_count
from snacks_core.kernels.nystrom import NystromEmbedding
from snacks_core.solvers import storage
from snacks_core.solvers.storage import (
    EmbeddingStore,
    embed_to_store,
    memory_budget_bytes,
    plan_storage,
)

# (kind, storage dtype, compute dtype) of every store there is.
LAYOUTS = [
    ("memory", np.float64, np.float64),
    ("memory", np.float32, np.float32),
    ("compact", np.float16, np.float32),
    ("compact", np.float16, np.float64),
    ("disk", np.float32, np.float32),
    ("disk", np.float32, np.float64),
    ("disk", np.float16, np.float32),
]

GIB = 2**30


def _tolerance(storage_dtype):
    """Rounding of one stored entry: float16 keeps 11 significant bits, float32 24."""
    return {np.float16: dict(rtol=1e-3, atol=1e-6), np.float32: dict(rtol=1e-6, atol=1e-9),
            np.float64: dict(rtol=0, atol=0)}[storage_dtype]


def _open_files_under(directory):
    """Paths under ``directory`` this process holds open (an unlinked file still counts)."""
    fd_dir = "/proc/self/fd"
    paths = []
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith(str(directory)):
            paths.append(target)
    return paths


@pytest.fixture
def Z():
    return np.random.default_rng(0).normal(size=(103, 7))


@pytest.mark.parametrize("kind, storage_dtype, compute_dtype", LAYOUTS)
def test_round_trip_by_blocks(Z, tmp_path, kind, storage_dtype, compute_dtype):
    with EmbeddingStore(*Z.shape, kind, storage_dtype, compute_dtype=compute_dtype,
                        block_rows=10, directory=tmp_path) as store:
        for start in range(0, Z.shape[0], 13):
            store.write(start, Z[start:start + 13])
        assert store.nbytes == Z.size * np.dtype(storage_dtype).itemsize
        buffer = store.new_buffer()
        blocks = []
        for start, stop in store.block_bounds():
            block = store.read(start, stop, out=buffer)
            assert block.dtype == compute_dtype and block.flags.c_contiguous
            blocks.append(block.copy())
        np.testing.assert_allclose(np.vstack(blocks), Z, **_tolerance(storage_dtype))
        # A range longer than a block, without a buffer.
        np.testing.assert_allclose(store.read(5, 90), Z[5:90], **_tolerance(storage_dtype))
        np.testing.assert_array_equal(store.read(4, 4), Z[:0])


def test_memory_store_reads_views_of_one_array(Z):
    with EmbeddingStore(*Z.shape, "memory", np.float64) as store:
        store.write(0, Z)
        assert store.block_bounds() == [(0, Z.shape[0])]
        assert store.new_buffer() is None
        block = store.read(10, 20, out=None)
        assert np.shares_memory(block, store.array)
        np.testing.assert_array_equal(store.array, Z)


@pytest.mark.parametrize("kind, storage_dtype", [("compact", np.float16), ("disk", np.float32),
                                                 ("disk", np.float16)])
def test_reads_reuse_the_buffer(Z, tmp_path, kind, storage_dtype):
    with EmbeddingStore(*Z.shape, kind, storage_dtype, block_rows=20,
                        directory=tmp_path) as store:
        store.write(0, Z)
        assert store.array is None
        buffer = store.new_buffer()
        assert buffer.shape == (20, Z.shape[1])
        for start, stop in store.block_bounds()[::-1]:
            block = store.read(start, stop, out=buffer)
            assert np.shares_memory(block, buffer) and block.shape[0] == stop - start
            np.testing.assert_allclose(block, Z[start:stop], **_tolerance(storage_dtype))
        with pytest.raises(ValueError, match="new_buffer"):
            store.read(0, 20, out=buffer.astype(np.float64))
        with pytest.raises(ValueError, match="new_buffer"):
            store.read(0, 21, out=buffer)


@settings(max_examples=200, deadline=None)
@given(n_rows=st.integers(1, 5000), n_cols=st.integers(1, 50), block_rows=st.integers(1, 6000))
def test_block_bounds_cover_every_row_once(n_rows, n_cols, block_rows):
    store = EmbeddingStore(n_rows, n_cols, "memory", np.float32, block_rows=block_rows)
    bounds = store.block_bounds()
    covered = np.concatenate([np.arange(start, stop) for start, stop in bounds])
    np.testing.assert_array_equal(covered, np.arange(n_rows))
    assert all(stop - start == store.block_rows for start, stop in bounds[:-1])
    assert 0 < bounds[-1][1] - bounds[-1][0] <= store.block_rows == min(block_rows, n_rows)


def test_default_blocks_are_about_32_mib():
    assert EmbeddingStore(1, 1, "memory", np.float64).block_rows == 1
    store = EmbeddingStore(10**5, 128, "compact", np.float16)
    assert store.block_rows * 128 * np.dtype(np.float32).itemsize == 2**25


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.integers(-3, 2**62), st.floats(), st.booleans(), st.none(),
                 st.sampled_from(["4", np.int64(3), np.int32(0), np.float64(3.0), 2.0])))
def test_counts_follow_one_rule(value):
    """validation.check_count: an integer >= 1 (numpy's too, never a bool), returned as int;
    the stores and the planner refuse anything else with its message."""
    is_count = (isinstance(value, (int, np.integer)) and not isinstance(value, bool)
                and value >= 1)
    if is_count:
        assert check_count(value, "n_rows") == value and type(check_count(value, "x")) is int
        return
    message = f"n_rows must be an integer >= 1, got {value!r}"
    for refuse in (lambda: check_count(value, "n_rows"),
                   lambda: EmbeddingStore(value, 3, "memory", np.float64),
                   lambda: plan_storage(value, 3)):
        with pytest.raises(ValueError, match=re.escape(message)):
            refuse()


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(ValueError, match="float16"):
        EmbeddingStore(3, 2, "memory", np.float16)
    with pytest.raises(ValueError, match="views"):
        EmbeddingStore(3, 2, "memory", np.float64, compute_dtype=np.float32)
    with pytest.raises(ValueError, match="kind"):
        EmbeddingStore(3, 2, "cloud", np.float32)
    with pytest.raises(ValueError, match="n_rows"):
        EmbeddingStore(0, 2, "memory", np.float32)
    store = EmbeddingStore(3, 2, "compact", np.float16)
    with pytest.raises(ValueError, match="shape"):
        store.write(0, np.ones((2, 3)))
    with pytest.raises(ValueError, match="outside"):
        store.write(2, np.ones((2, 2)))
    with pytest.raises(ValueError, match="float16's range"):
        store.write(0, np.full((1, 2), 1e5))
    store.close()
    with pytest.raises(ValueError, match="closed"):
        store.read(0, 1)
    with pytest.raises(ValueError, match="does not exist"):
        EmbeddingStore(3, 2, "disk", np.float32, directory=tmp_path / "missing")


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to see open files")
def test_temporary_file_is_released_on_close_and_collection(tmp_path, Z):
    store = EmbeddingStore(*Z.shape, "disk", np.float32, directory=tmp_path)
    store.write(0, Z)
    assert len(_open_files_under(tmp_path)) == 1
    store.close()
    store.close()
    assert _open_files_under(tmp_path) == [] and os.listdir(tmp_path) == []

    store = EmbeddingStore(*Z.shape, "disk", np.float16, directory=tmp_path)
    assert len(_open_files_under(tmp_path)) == 1
    del store
    gc.collect()
    assert _open_files_under(tmp_path) == [] and os.listdir(tmp_path) == []

    with EmbeddingStore(*Z.shape, "disk", np.float32, directory=tmp_path):
        assert len(_open_files_under(tmp_path)) == 1
    assert _open_files_under(tmp_path) == []


def test_disk_store_refuses_a_file_larger_than_the_free_space(tmp_path, monkeypatch):
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(storage.shutil, "disk_usage", lambda path: usage(10**9, 0, 1000))
    with pytest.raises(ValueError, match="disk space"):
        EmbeddingStore(100, 10, "disk", np.float32, directory=tmp_path)
    assert os.listdir(tmp_path) == []


@pytest.fixture(scope="module")
def dense_and_sparse():
    X, _ = make_classification(n_samples=300, n_features=6, random_state=0)
    rng = np.random.default_rng(1)
    X_sparse = sp.random(250, 40, density=0.1, format="csr", random_state=rng)
    X_sparse.data = rng.normal(size=X_sparse.nnz)
    return {"dense": X, "sparse": X_sparse}


@pytest.mark.parametrize("data", ["dense", "sparse"])
@pytest.mark.parametrize("kind, storage_dtype, compute_dtype",
                         [layout for layout in LAYOUTS if layout[2] != np.float64
                          or layout[0] == "memory"])
def test_embed_to_store_equals_the_one_shot_transform(dense_and_sparse, tmp_path, data, kind,
                                                      storage_dtype, compute_dtype):
    X = dense_and_sparse[data]
    embedding = NystromEmbedding(n_components=30, dtype=np.float64, random_state=0).fit(X)
    Z = embedding.transform(X)
    with embed_to_store(embedding.transform, X, embedding.n_components_, kind=kind,
                        storage_dtype=storage_dtype, directory=tmp_path,
                        rows_per_block=37) as store:
        assert (store.n_rows, store.n_cols) == Z.shape
        tolerance = _tolerance(storage_dtype)
        if storage_dtype == np.float64:
            tolerance = dict(rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(store.read(0, store.n_rows), Z, **tolerance)


def test_embed_to_store_accepts_other_sparse_formats_and_cleans_up_on_error(tmp_path):
    X = sp.random(50, 8, density=0.3, format="coo", random_state=0)
    with embed_to_store(lambda rows: rows.toarray(), X, 8, kind="disk",
                        storage_dtype=np.float32, directory=tmp_path) as store:
        np.testing.assert_allclose(store.read(0, 50), X.toarray(), rtol=1e-6)

    def failing(rows):
        raise RuntimeError("transform failed")

    with pytest.raises(RuntimeError, match="transform failed"):
        embed_to_store(failing, X, 8, kind="disk", storage_dtype=np.float32,
                       directory=tmp_path)
    gc.collect()
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match=r"shape \(rows, 9\)"):
        embed_to_store(lambda rows: rows.toarray(), X, 9, kind="memory",
                       storage_dtype=np.float64)


def _peak_traced(function):
    """Peak bytes numpy and Python allocate while ``function`` runs (tracemalloc)."""
    tracemalloc.start()
    try:
        result = function()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_embedding_to_disk_and_reading_back_hold_a_few_blocks(tmp_path):
    n, d, k, rows = 40_000, 8, 64, 500
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(d, k))
    block_bytes = rows * k * 8
    full_bytes = n * k * 8

    store, peak = _peak_traced(lambda: embed_to_store(
        lambda X_rows: np.cos(X_rows @ W), X, k, kind="disk", storage_dtype=np.float32,
        directory=tmp_path, rows_per_block=rows))
    assert peak < 4 * block_bytes < full_bytes / 10

    def sum_blocks():
        buffer = store.new_buffer()
        return sum(float(store.read(start, stop, out=buffer).sum(dtype=np.float64))
                   for start, stop in store.block_bounds())

    with store:
        total, peak = _peak_traced(sum_blocks)
        assert peak < 2 * store.block_rows * k * 4 + 2**20
        np.testing.assert_allclose(total, np.cos(X @ W).sum(), rtol=1e-5)


def test_embedding_in_memory_allocates_the_array_once():
    n, d, k, rows = 20_000, 8, 64, 500
    X = np.random.default_rng(0).normal(size=(n, d))
    W = np.ones((d, k))
    store, peak = _peak_traced(lambda: embed_to_store(
        lambda X_rows: X_rows @ W, X, k, kind="memory", storage_dtype=np.float64,
        rows_per_block=rows))
    assert peak < store.nbytes + 4 * rows * k * 8


# Plans: a million rows of 200 columns (0.8 GB in float32), never allocated.
N, K = 10**6, 200
PER_ROW = 64 * N


def _size(itemsize):
    return N * K * itemsize


def test_plan_keeps_what_fits_in_memory():
    kind, dtype, message = plan_storage(N, K, memory_budget=_size(8) + PER_ROW)
    assert (kind, dtype) == ("memory", np.float64)
    assert "fits the memory budget" in message
    plan = plan_storage(N, K, memory_budget=_size(8) + PER_ROW - 1)
    assert tuple(plan)[:2] == ("memory", np.float32)
    plan = plan_storage(N, K, dtype=np.float32, memory_budget=_size(4) + PER_ROW - 1)
    assert tuple(plan)[:2] == ("compact", np.float16)
    assert "float16" in plan.message and "memory_budget=" in plan.message


def test_plan_at_half_the_float32_size_goes_to_disk(tmp_path):
    """float16 in memory is then exactly the budget, and the per-row vectors tip it over."""
    plan = plan_storage(N, K, dtype=np.float32, memory_budget=_size(4) // 2, directory=tmp_path)
    assert tuple(plan)[:2] == ("disk", np.float32)
    assert "temporary file" in plan.message and str(tmp_path) in plan.message
    plan = plan_storage(N, K, dtype=np.float16, memory_budget=_size(4) // 2, directory=tmp_path)
    assert tuple(plan)[:2] == ("disk", np.float16)


def test_plan_stores_float16_on_disk_when_float32_does_not_fit(tmp_path, monkeypatch):
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(storage.shutil, "disk_usage", lambda path: usage(0, 0, _size(3)))
    plan = plan_storage(N, K, memory_budget=_size(2), directory=tmp_path)
    assert tuple(plan)[:2] == ("disk", np.float16)
    assert "on disk it exceeds 90%" in plan.message
    monkeypatch.setattr(storage.shutil, "disk_usage", lambda path: usage(0, 0, _size(1)))
    with pytest.raises(ValueError, match="SNACKS_TMPDIR"):
        plan_storage(N, K, memory_budget=_size(2), directory=tmp_path)


def test_explicit_storage_that_does_not_fit_is_refused_with_advice(tmp_path):
    with pytest.raises(ValueError, match="Pass storage='compact'"):
        plan_storage(N, K, memory_budget=_size(2) + PER_ROW + 2**26, storage="memory")
    with pytest.raises(ValueError, match="Pass storage='disk'"):
        plan_storage(N, K, memory_budget=_size(2), storage="compact", directory=tmp_path)
    with pytest.raises(ValueError, match="fewer landmarks"):
        plan_storage(N, K, memory_budget=2**20, storage="disk")
    with pytest.raises(ValueError, match="storage='compact'"):
        plan_storage(N, K, dtype=np.float16, storage="memory")
    with pytest.raises(ValueError, match="unknown storage"):
        plan_storage(N, K, storage="ram")


def test_explicit_storage_that_fits_is_taken(tmp_path):
    plan = plan_storage(N, K, storage="compact", memory_budget=GIB)
    assert tuple(plan)[:2] == ("compact", np.float16)
    kind, dtype, message = plan_storage(N, K, storage="disk", memory_budget=GIB,
                                        directory=tmp_path)
    assert (kind, dtype) == ("disk", np.float32) and message.startswith("storage='disk'")


def test_a_plan_at_twice_the_budget_streams_within_it(tmp_path):
    """The plan's blocks shrink to the budget: embedding and a pass allocate less than it."""
    n, d, k = 20_000, 8, 50
    budget = n * k * 4 // 2
    plan = plan_storage(n, k, dtype=np.float32, memory_budget=budget, directory=tmp_path)
    assert plan.kind == "disk" and plan.block_rows < 2**25 // (k * 4)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(d, k))

    def embed_and_pass():
        store = embed_to_store(lambda X_rows: np.cos(X_rows @ W), X, k, kind=plan.kind,
                               storage_dtype=plan.storage_dtype, block_rows=plan.block_rows,
                               directory=tmp_path)
        buffer = store.new_buffer()
        total = sum(float(store.read(start, stop, out=buffer).sum(dtype=np.float64))
                    for start, stop in store.block_bounds())
        store.close()
        return total

    total, peak = _peak_traced(embed_and_pass)
    assert peak < budget - 64 * n
    np.testing.assert_allclose(total, np.cos(X @ W).sum(), rtol=1e-5)


def test_memory_budget_accepts_bytes_and_units(monkeypatch):
    assert memory_budget_bytes("8GB") == 8 * 10**9
    assert memory_budget_bytes("512 MiB") == 512 * 2**20
    assert memory_budget_bytes("1.5GiB") == 3 * 2**29
    assert memory_budget_bytes(12345.0) == 12345
    monkeypatch.setattr(storage, "memory_limit", lambda: 10 * GIB)
    assert memory_budget_bytes(None) == 5 * GIB
    for bad in ("8 parsecs", "GB", "-1GB", 0, float("nan"), True, [1]):
        with pytest.raises(ValueError, match="memory_budget"):
            memory_budget_bytes(bad)


def test_storage_directory_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("SNACKS_TMPDIR", str(tmp_path))
    assert storage.storage_directory() == str(tmp_path)
    assert str(tmp_path) in plan_storage(N, K, storage="disk", memory_budget=GIB).message


@pytest.mark.slow  # a fresh interpreter
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
def test_memory_limit_respects_a_lowered_address_space_limit():
    script = textwrap.dedent("""
        import os, resource
        from snacks_core.core import memory
        mapped = int(open("/proc/self/statm").read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (mapped + 2**30, resource.RLIM_INFINITY))
        print(memory.memory_limit(), memory.available_memory())
        try:
            memory.check_fits_in_memory(2**30, "A test array", "")
        except ValueError:
            print("refused")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True, cwd=os.path.dirname(os.path.dirname(__file__)))
    limit, available, refused = result.stdout.split()
    assert 0 < int(limit) <= 2**30 and int(available) == int(limit)
    assert refused == "refused"


def test_memory_limit_is_at_most_the_physical_memory():
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert 0 < memory.memory_limit() <= physical
    assert memory.available_memory() == memory.memory_limit()


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_cgroup_limit_is_the_tightest_ancestor(tmp_path, version):
    if version == "v2":
        (tmp_path / "proc").write_text("0::/outer/inner\n")
        root, name = tmp_path / "fs", "memory.max"
    else:
        (tmp_path / "proc").write_text("4:memory:/outer/inner\n3:cpu:/elsewhere\n")
        root, name = tmp_path / "fs" / "memory", "memory.limit_in_bytes"
    (root / "outer" / "inner").mkdir(parents=True)
    (root / name).write_text("max\n" if version == "v2" else "9223372036854771712\n")
    (root / "outer" / name).write_text(f"{3 * GIB}\n")
    (root / "outer" / "inner" / name).write_text(f"{5 * GIB}\n")
    assert memory._cgroup_memory_limit(tmp_path / "proc", str(tmp_path / "fs")) == 3 * GIB
    # Only the root's "max" (v2) or nothing (a v1 tree read as v2) is left: no limit.
    (tmp_path / "proc").write_text("0::/\n")
    assert memory._cgroup_memory_limit(tmp_path / "proc", str(tmp_path / "fs")) is None
    assert memory._cgroup_memory_limit(tmp_path / "missing", str(tmp_path)) is None
