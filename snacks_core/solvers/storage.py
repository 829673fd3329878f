"""Where the embedding Z = z(X) (n × k) lives while a solver streams it: RAM, compact RAM, disk.

A streaming solver reads the rows of Z block by block (shuffled blocks each epoch, and full
sequential passes).  When Z does not fit in memory it is kept compactly or out of core:

``'memory'``
    Z in RAM as float64 or float32.  The whole array is one block and :meth:`read` returns
    a view of it: no copy.
``'compact'``
    Z in RAM as float16, half of float32.  :meth:`read` converts a block to float32 into a
    reusable buffer; the solver accumulates in float32 (or float64).
``'disk'``
    Z in an anonymous temporary file, as float32 (float16 when asked for, or when the free
    disk space is short), written in row blocks and read back block by block with plain
    reads into a reusable buffer: the process holds a few blocks, whatever n.

The contract: :func:`plan_storage` chooses a kind (and the dtype and block size) from a
memory budget and says why, or refuses with a message that says what to pass instead;
:func:`embed_to_store` embeds X block by block into a new :class:`EmbeddingStore`; a store
hands out its rows as C-contiguous blocks in its compute dtype, the blocks covering every
row once, and frees its memory or file when closed.  A solver iterates over
:class:`RowBlocks`: one block for an in-memory array, a store's blocks read ahead by a
background thread.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import tempfile
import weakref
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from snacks_core.core.compiled import njit
from snacks_core.core.memory import MEMORY_FRACTION, memory_limit
from snacks_core.core.validation import check_count

STORAGES = ("auto", "memory", "compact", "disk")

# Bytes of one read block in the compute dtype: large enough that a read costs far more than
# its Python overhead and the solver's per-block work vectorises, small enough that a few
# buffers are nothing next to the embedding (larger blocks read no faster).  A plan shrinks
# blocks when the memory budget leaves less room.
_BLOCK_BYTES = 2**25

# Bytes per row the solver keeps besides Z (labels, weights, margins, permutations: about
# eight float64/int64 vectors of length n), counted in every plan.
_SOLVER_BYTES_PER_ROW = 64

# float32 blocks a compact or out-of-core fit holds at once, at most: while embedding, the
# block being embedded and its kernel intermediate (two), the previous block being written
# and its cast to the storage dtype (two); while training, two read buffers (one is read
# ahead) and the float16 scratch.
_WORKING_BLOCKS = 6

# float16's largest finite value: larger entries would be stored as inf.
_FLOAT16_MAX = float(np.finfo(np.float16).max)

# Share of the free disk space a temporary embedding may take: the rest stays for others.
_DISK_FRACTION = 0.9

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}

_STORAGE_DTYPES = {"memory": (np.float64, np.float32), "compact": (np.float16,),
                   "disk": (np.float32, np.float16)}

# Every float16, indexed by its bit pattern: widening by table lookup is exact, and faster
# than numpy's float16 cast.
_FLOAT16_VALUES = np.arange(2**16, dtype=np.uint16).view(np.float16).astype(np.float32)


# nogil: while a block (megabytes) is widened, other threads (another fit, a prefetcher, the
# app's server) keep running.
@njit(cache=True, nogil=True)
def _widen_float16(bits, table, out):
    """out[i] = table[bits[i]]: float16 bit patterns to float32 or float64 (1-D arrays)."""
    for i in range(bits.shape[0]):
        out[i] = table[bits[i]]


@dataclass(frozen=True)
class StoragePlan:
    """A storage choice; unpacks as ``kind, storage_dtype, message``.

    Attributes
    ----------
    kind : {'memory', 'compact', 'disk'}
    storage_dtype : np.dtype
        The dtype Z is stored in.
    message : str
        A sentence that says what was chosen and why.
    block_rows : int
        Rows per block such that the blocks a fit holds (float32) fit in the budget too:
        pass it to :func:`embed_to_store` / :class:`EmbeddingStore`.
    """

    kind: str
    storage_dtype: np.dtype
    message: str
    block_rows: int

    def __iter__(self):
        return iter((self.kind, self.storage_dtype, self.message))


class EmbeddingStore:
    """Rows of an embedding Z (n × k) held in RAM, compactly in RAM, or in a file on disk.

    Blocks are read as C-contiguous arrays in ``compute_dtype``.  A store is not safe for
    concurrent reads from several threads (a disk store shares one file position and one
    scratch buffer); one reader thread, e.g. a prefetcher, is fine.

    Parameters
    ----------
    n_rows, n_cols : int
        Shape of Z (n × k), both at least 1.
    kind : {'memory', 'compact', 'disk'}
        Where Z lives (see the module docstring).
    storage_dtype : dtype
        float64 or float32 for 'memory', float16 for 'compact', float32 or float16 for 'disk'.
    compute_dtype : dtype or None, default=None
        dtype of the blocks :meth:`read` returns: ``storage_dtype`` for 'memory' (it hands out
        views), float32 (default) or float64 otherwise.
    block_rows : int or None, default=None
        Rows per block: all rows for 'memory', about 32 MiB of ``compute_dtype`` otherwise.
    directory : str or None, default=None
        Directory of the temporary file of a 'disk' store (see :func:`storage_directory`).
        The file has no name on POSIX systems (it is unlinked at creation), so it disappears
        when the store is closed or collected, and even when the process is killed.

    Attributes
    ----------
    n_rows, n_cols, kind, storage_dtype, compute_dtype, block_rows
        As given, resolved.
    nbytes : int
        Bytes of the stored embedding.
    array : ndarray or None
        The whole Z for a 'memory' store; None for the others.
    """

    def __init__(self, n_rows, n_cols, kind, storage_dtype, *, compute_dtype=None,
                 block_rows=None, directory=None):
        self.n_rows = check_count(n_rows, "n_rows")
        self.n_cols = check_count(n_cols, "n_cols")
        if kind not in _STORAGE_DTYPES:
            raise ValueError(f"kind must be one of {tuple(_STORAGE_DTYPES)}, got {kind!r}.")
        self.kind = kind
        self.storage_dtype = np.dtype(storage_dtype)
        if self.storage_dtype not in _STORAGE_DTYPES[kind]:
            allowed = ", ".join(np.dtype(d).name for d in _STORAGE_DTYPES[kind])
            raise ValueError(f"a {kind!r} store holds {allowed}, not {self.storage_dtype.name}.")
        self.compute_dtype = _resolve_compute_dtype(kind, self.storage_dtype, compute_dtype)
        if block_rows is None:
            block_rows = (self.n_rows if kind == "memory"
                          else _rows_per_block(self.n_cols, self.compute_dtype.itemsize))
        self.block_rows = min(check_count(block_rows, "block_rows"), self.n_rows)
        self.nbytes = self.n_rows * self.n_cols * self.storage_dtype.itemsize
        self._array = None
        self._file = None
        self._scratch = None
        if kind == "disk":
            directory = storage_directory(directory)
            _check_disk_space(self.nbytes, directory)
            self._file = tempfile.TemporaryFile(prefix="snacks-embedding-", suffix=".bin",
                                                dir=directory, buffering=0)
            self._file.truncate(self.nbytes)
            # Closing the file frees its disk space: also when the store is collected.
            self._finalizer = weakref.finalize(self, self._file.close)
        else:
            self._array = np.empty((self.n_rows, self.n_cols), dtype=self.storage_dtype)
            self._finalizer = None
        self._closed = False

    @property
    def array(self):
        """The whole embedding as an ndarray for a 'memory' store, else None."""
        return self._array if self.kind == "memory" else None

    def block_bounds(self):
        """``(start, stop)`` of every block, in row order; they cover each row exactly once.

        Returns
        -------
        list of tuple of int
        """
        return [(start, min(start + self.block_rows, self.n_rows))
                for start in range(0, self.n_rows, self.block_rows)]

    def new_buffer(self):
        """A buffer for :meth:`read` of one block; None for 'memory' (reads are views).

        Returns
        -------
        ndarray of shape (block_rows, n_cols) in ``compute_dtype``, or None
        """
        if self.kind == "memory":
            return None
        return np.empty((self.block_rows, self.n_cols), dtype=self.compute_dtype)

    def read(self, start, stop, out=None):
        """Rows ``[start, stop)`` of Z as a C-contiguous array in ``compute_dtype``.

        Parameters
        ----------
        start, stop : int
            Row range, ``0 <= start <= stop <= n_rows``.
        out : ndarray or None, default=None
            A reusable C-contiguous ``compute_dtype`` buffer with ``n_cols`` columns and at
            least ``stop - start`` rows (see :meth:`new_buffer`); the rows are converted into
            its leading rows.  Ignored by a 'memory' store, which returns a view.

        Returns
        -------
        ndarray of shape (stop - start, n_cols)
            A view of the store ('memory'), of ``out``, or a new array.
        """
        self._check_open()
        rows = self._check_range(start, stop)
        if self.kind == "memory":
            return self._array[start:stop]
        if out is None:
            dest = np.empty((rows, self.n_cols), dtype=self.compute_dtype)
        else:
            dest = self._check_out(out, rows)
        if self.kind == "compact":
            _convert(self._array[start:stop], dest)
            return dest
        if self.storage_dtype == self.compute_dtype:
            target = dest
        else:
            size = rows * self.n_cols
            if self._scratch is None or self._scratch.size < size:
                self._scratch = np.empty(max(size, self.block_rows * self.n_cols),
                                         dtype=self.storage_dtype)
            target = self._scratch[:size].reshape(rows, self.n_cols)
        self._file.seek(start * self.n_cols * self.storage_dtype.itemsize)
        _read_exactly(self._file, target.reshape(-1).view(np.uint8))
        if target is not dest:
            _convert(target, dest)
        return dest

    def write(self, start, block):
        """Store ``block`` as rows ``[start, start + len(block))``, cast to ``storage_dtype``.

        Parameters
        ----------
        start : int
            First row.
        block : array-like of shape (rows, n_cols)
            Finite values; for float16 storage within ±65504 (float16's largest value).
        """
        self._check_open()
        block = np.asarray(block)
        if block.ndim != 2 or block.shape[1] != self.n_cols:
            raise ValueError(f"a block of Z must have shape (rows, {self.n_cols}), got "
                             f"{block.shape}.")
        stop = start + block.shape[0]
        self._check_range(start, stop)
        if self.storage_dtype == np.float16:
            check_float16_range(block)
        if self.kind != "disk":
            self._array[start:stop] = block
            return
        data = np.ascontiguousarray(block, dtype=self.storage_dtype)
        self._file.seek(start * self.n_cols * self.storage_dtype.itemsize)
        view = memoryview(data.reshape(-1).view(np.uint8))
        written = 0
        while written < len(view):
            written += self._file.write(view[written:])

    def close(self):
        """Release the embedding: the array, or the temporary file and its disk space."""
        if self._finalizer is not None:
            self._finalizer()
        self._array = None
        self._scratch = None
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __repr__(self):
        return (f"EmbeddingStore(kind={self.kind!r}, n_rows={self.n_rows}, "
                f"n_cols={self.n_cols}, storage_dtype={self.storage_dtype.name}, "
                f"compute_dtype={self.compute_dtype.name}, block_rows={self.block_rows})")

    def _check_open(self):
        if self._closed:
            raise ValueError("this EmbeddingStore is closed; embed the data again.")

    def _check_range(self, start, stop):
        if not 0 <= start <= stop <= self.n_rows:
            raise ValueError(f"rows [{start}, {stop}) are outside [0, {self.n_rows}).")
        return stop - start

    def _check_out(self, out, rows):
        if (not isinstance(out, np.ndarray) or out.dtype != self.compute_dtype
                or out.ndim != 2 or out.shape[1] != self.n_cols or out.shape[0] < rows
                or not out.flags.c_contiguous):
            raise ValueError(
                f"out must be a C-contiguous {self.compute_dtype.name} array of shape "
                f"(>= {rows}, {self.n_cols}); use EmbeddingStore.new_buffer().")
        return out[:rows]


def plan_storage(n_rows, n_cols, *, dtype=np.float64, memory_budget=None, storage="auto",
                 directory=None):
    """Choose where an n × k embedding lives, from a memory budget; say why.

    With ``storage='auto'`` the first of these that fits is taken: in memory in ``dtype``;
    in memory as float32 (when ``dtype`` is float64); compactly in memory as float16; on
    disk as float32; on disk as float16.  A kind fits in memory when the embedding plus the
    solver's per-row vectors (64 bytes a row) fit the budget, plus for 'compact' six
    float32 blocks of at least one row (32 MiB each at most, smaller when the budget is
    tight); on disk when the per-row vectors and six such blocks fit the budget and the
    file fits in 90 % of the free disk space.  An explicit ``storage`` tries that kind only
    (float32 then float16 for 'disk'; float16 only for ``dtype=float16``).

    Parameters
    ----------
    n_rows, n_cols : int
        Shape of the embedding (n × k).
    dtype : {np.float64, np.float32, np.float16}, default=np.float64
        Precision asked for; float16 means compact in memory or float16 on disk.
    memory_budget : int, float, str or None, default=None
        Bytes the embedding may take, e.g. ``8 * 2**30`` or ``'8GiB'``; None is half of
        :func:`~snacks_core.core.memory.memory_limit`.
    storage : {'auto', 'memory', 'compact', 'disk'}, default='auto'
        'auto' chooses by the budget; another value asks for that kind.
    directory : str or None, default=None
        Where a 'disk' embedding is written (see :func:`storage_directory`).

    Returns
    -------
    StoragePlan
        Unpacks as ``(kind, storage_dtype, message)``; ``message`` says what was chosen and
        why; ``block_rows`` sizes the blocks within the budget.

    Raises
    ------
    ValueError
        When the requested storage (or, for 'auto', every storage) does not fit; the
        message says what to pass instead.
    """
    n_rows = check_count(n_rows, "n_rows")
    n_cols = check_count(n_cols, "n_cols")
    dtype = np.dtype(dtype)
    if dtype not in (np.float64, np.float32, np.float16):
        raise ValueError(f"dtype must be float64, float32 or float16, got {dtype.name}.")
    if storage not in STORAGES:
        raise ValueError(f"unknown storage {storage!r}; choose one of {STORAGES}.")
    budget = memory_budget_bytes(memory_budget)
    directory = storage_directory(directory)
    shape = f"{n_rows} × {n_cols}"
    candidates = _candidates(dtype, storage)
    if not candidates:
        raise ValueError("float16 is kept in memory by storage='compact'; pass "
                         "storage='compact' (or 'auto', or 'disk'), or dtype=float32.")
    refusals = {}
    for kind, storage_dtype in candidates:
        block_rows, refusal = _fit(kind, storage_dtype, n_rows, n_cols, budget, directory)
        if refusal is None:
            action = _action(kind, storage_dtype, n_rows * n_cols, directory)
            if refusals:
                message = (f"The {shape} embedding {_explain(refusals, n_rows, budget, directory)}"
                           f": {action}. Pass memory_budget= or storage= to choose.")
            elif storage == "auto":
                message = (f"The {shape} embedding fits the memory budget "
                           f"({_format_bytes(budget)}): {action}.")
            else:
                message = f"storage={storage!r}: {action}."
            return StoragePlan(kind, storage_dtype, message, block_rows)
        reason, phrase = refusal
        refusals.setdefault(reason, []).append(phrase)
    message = f"The {shape} embedding {_explain(refusals, n_rows, budget, directory)}."
    if storage != "auto":
        try:
            alternative = plan_storage(n_rows, n_cols, dtype=dtype, memory_budget=budget,
                                       directory=directory)
        except ValueError:
            alternative = None
        if alternative is not None:
            action = _action(alternative.kind, alternative.storage_dtype, n_rows * n_cols,
                             directory)
            raise ValueError(f"{message} Pass storage={alternative.kind!r} (or 'auto', which "
                             f"would choose it: {action}), or a larger memory_budget=.")
    raise ValueError(
        f"{message} Use fewer landmarks (n_components) or rows, free memory or disk space, "
        "pass a larger memory_budget= (bytes, or a string such as '16GiB'), or point "
        "directory= / $SNACKS_TMPDIR to a disk with more free space.")


def check_float16_range(values) -> None:
    """Refuse embedding values beyond float16's range (±65504): stored as float16 they
    would be inf.  ``values`` may be the float16 result itself (its overflows are inf)."""
    if values.size and (values.max() > _FLOAT16_MAX or values.min() < -_FLOAT16_MAX):
        raise ValueError(
            f"the embedding has values beyond float16's range (±{_FLOAT16_MAX:g}); "
            "store it as float32 instead (storage='memory' or 'disk' with dtype=float32).")


def embed_to_store(transform, X, n_cols, *, kind, storage_dtype, compute_dtype=None,
                   block_rows=None, directory=None, rows_per_block=None, progress=None,
                   rows=None):
    """Embed X in row blocks straight into a new :class:`EmbeddingStore`.

    Peak memory is the store plus two blocks of X's embedding (and what ``transform`` needs
    for one): a 'memory' store is allocated once and filled block by block, and a block is
    written by a second thread while the next is embedded.

    Parameters
    ----------
    transform : callable
        ``transform(X_rows)`` returns the ``(rows, n_cols)`` embedding of a row block, e.g.
        ``NystromEmbedding.transform``.
    X : ndarray or sparse matrix of shape (n, d)
        Sparse input is sliced as CSR (converted once if in another format).
    n_cols : int
        k, the embedding's dimension.
    kind, storage_dtype, compute_dtype, block_rows, directory
        As for :class:`EmbeddingStore`, usually from :func:`plan_storage`.
    rows_per_block : int or None, default=None
        Rows embedded at once; default half the store's block rows.
    progress : callable(rows_done), optional
        Called after each block.
    rows : ndarray of int, optional
        Embed ``X[rows]`` (in that order), gathered block by block, instead of all of X.

    Returns
    -------
    EmbeddingStore
        Filled; the caller closes it (or uses it as a context manager).
    """
    X = X.tocsr() if sp.issparse(X) else np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}.")
    n_rows = X.shape[0] if rows is None else len(rows)
    store = EmbeddingStore(n_rows, n_cols, kind, storage_dtype,
                           compute_dtype=compute_dtype, block_rows=block_rows,
                           directory=directory)
    # Half a block at once: two are in flight (one embedded, one written).
    rows_per_block = check_count(rows_per_block or max(1, store.block_rows // 2),
                                  "rows_per_block")
    # One thread writes (casts, copies to the file) a block while the next is embedded.
    with ThreadPoolExecutor(max_workers=1) as writer:
        pending = None
        try:
            for start in range(0, store.n_rows, rows_per_block):
                stop = min(store.n_rows, start + rows_per_block)
                block = transform(X[start:stop] if rows is None else X[rows[start:stop]])
                if pending is not None:
                    pending.result()
                pending = writer.submit(store.write, start, block)
                if progress is not None:
                    progress(stop)
            if pending is not None:
                pending.result()
        except BaseException:
            if pending is not None:
                pending.cancel()
                wait([pending])
            store.close()
            raise
    return store



class _Block:
    __slots__ = ("start", "stop", "Z")

    def __init__(self, start, stop, Z):
        self.start, self.stop, self.Z = start, stop, Z


class RowBlocks:
    """The embedding's rows as blocks, as a solver reads them: an array is one block, a
    store (:class:`EmbeddingStore`) many.

    Iterating gives each block (``start``, ``stop``, ``Z``: rows ``start … stop``) in row
    order; :meth:`shuffled` in a random order; :meth:`sample` draws rows uniformly, grouped by
    block.  ``array`` is the whole in-memory array (None for a store).  A store's blocks are
    read by one background thread into two buffers, the next block while the caller works on
    the current one (reading from disk, or widening float16, overlaps the solver's passes); a
    block is valid until the caller asks for the one after the next.
    """

    def __init__(self, Z):
        if isinstance(Z, np.ndarray):
            self.array, self.store = Z, None
            self.shape = Z.shape
            self.bounds = [(0, Z.shape[0])]
        else:
            self.array, self.store = Z.array, Z
            self.shape = (Z.n_rows, Z.n_cols)
            self.bounds = Z.block_bounds()
            self._buffers = None

    def _blocks(self, order):
        """A :class:`_Block` for each index of ``order`` into ``bounds``, read ahead."""
        if self.array is not None:
            for k in order:
                start, stop = self.bounds[k]
                whole = (start, stop) == (0, self.shape[0])
                yield _Block(start, stop, self.array if whole else self.array[start:stop])
            return
        if self._buffers is None:
            self._buffers = (self.store.new_buffer(), self.store.new_buffer())

        def read(k, buffer):
            start, stop = self.bounds[k]
            return self.store.read(start, stop, out=buffer)

        with ThreadPoolExecutor(max_workers=1) as reader:
            ahead = reader.submit(read, order[0], self._buffers[0]) if len(order) else None
            for i, k in enumerate(order):
                Z = ahead.result()
                if i + 1 < len(order):
                    ahead = reader.submit(read, order[i + 1], self._buffers[(i + 1) % 2])
                start, stop = self.bounds[k]
                yield _Block(start, stop, Z)

    def __iter__(self):
        return self._blocks(range(len(self.bounds)))

    def shuffled(self, rng):
        """The blocks in a random order (the only order when there is one block)."""
        return self._blocks(rng.permutation(len(self.bounds)) if len(self.bounds) > 1 else [0])

    def sample(self, count, rng):
        """``count`` rows drawn uniformly with replacement, grouped by block: (block, rows)."""
        if len(self.bounds) == 1:
            yield next(iter(self)), rng.integers(0, self.shape[0], size=count)
            return
        sizes = np.array([stop - start for start, stop in self.bounds], dtype=np.float64)
        counts = rng.multinomial(count, sizes / sizes.sum())
        order = [k for k in rng.permutation(len(self.bounds)) if counts[k]]
        for block, k in zip(self._blocks(order), order, strict=True):
            yield block, rng.integers(block.start, block.stop, size=counts[k])

def columns_state_bytes(store, memory_budget):
    """Bytes of the memory budget that a solve on ``store`` leaves for the state of the
    one-vs-rest columns it solves together: the budget (:func:`memory_budget_bytes`) less
    what the store keeps in memory (a compact array) and its working blocks.

    Parameters
    ----------
    store : EmbeddingStore
    memory_budget : int, float, str or None
        As :func:`plan_storage`'s.

    Returns
    -------
    int
    """
    resident = store.nbytes if store.kind != "disk" else 0
    blocks = _WORKING_BLOCKS * store.block_rows * store.n_cols * np.dtype(np.float32).itemsize
    return max(0, memory_budget_bytes(memory_budget) - resident - blocks)


def memory_budget_bytes(memory_budget):
    """The memory budget in bytes: None is half of what this process can use.

    Parameters
    ----------
    memory_budget : int, float, str or None
        Bytes, or a string with a unit (B, kB, MB, GB, TB, KiB, MiB, GiB, TiB), e.g. '8GB'.

    Returns
    -------
    int
    """
    if memory_budget is None:
        return int(MEMORY_FRACTION * memory_limit())
    if isinstance(memory_budget, str):
        match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", memory_budget)
        if match is None or match.group(2).lower() not in _UNITS:
            raise ValueError(f"memory_budget {memory_budget!r} is not a size; write bytes "
                             "or a number with a unit, e.g. '8GB' or '512MiB'.")
        value = float(match.group(1)) * _UNITS[match.group(2).lower()]
    elif isinstance(memory_budget, (int, float, np.integer, np.floating)) and not isinstance(
            memory_budget, bool):
        value = float(memory_budget)
    else:
        raise ValueError(f"memory_budget must be a number of bytes or a string such as '8GB', "
                         f"got {memory_budget!r}.")
    if not math.isfinite(value) or value < 1:
        raise ValueError(f"memory_budget must be a positive size, got {memory_budget!r}.")
    return int(value)


def storage_directory(directory=None):
    """Directory for 'disk' embeddings: ``directory``, else $SNACKS_TMPDIR, else the temp dir.

    Returns
    -------
    str
    """
    directory = directory or os.environ.get("SNACKS_TMPDIR") or tempfile.gettempdir()
    if not os.path.isdir(directory):
        raise ValueError(f"the directory for an out-of-core embedding, {directory!r}, does "
                         "not exist; create it or pass another directory= / $SNACKS_TMPDIR.")
    return str(directory)


def _candidates(dtype, storage):
    """(kind, storage dtype) pairs to try in order, for a requested dtype and storage."""
    f16, f32 = np.dtype(np.float16), np.dtype(np.float32)
    ladder = [("memory", dtype)] if dtype != f16 else []
    if dtype == np.float64:
        ladder.append(("memory", f32))
    ladder.append(("compact", f16))
    ladder += [("disk", f32), ("disk", f16)] if dtype != f16 else [("disk", f16)]
    if storage == "auto":
        return ladder
    if storage == "memory":
        return ladder[:1] if dtype != f16 else []
    return [(kind, d) for kind, d in ladder if kind == storage]


def _fit(kind, storage_dtype, n_rows, n_cols, budget, directory):
    """Block rows of (kind, storage dtype) within the budget, and why it does not fit.

    Returns ``(block_rows, None)`` when it fits, else ``(None, (reason, phrase))`` with reason
    'memory' (over the budget in RAM), 'working' (not even one row per block fits beside the
    per-row vectors) or 'disk' (over the share of free disk space we may take).
    """
    size = n_rows * n_cols * storage_dtype.itemsize
    resident = _SOLVER_BYTES_PER_ROW * n_rows + (size if kind != "disk" else 0)
    phrase = f"{storage_dtype.name} ({_format_bytes(size)})"
    if kind == "memory":
        return (n_rows, None) if resident <= budget else (None, ("memory", phrase))
    row_bytes = n_cols * np.dtype(np.float32).itemsize
    block_rows = min(_BLOCK_BYTES, max(0, budget - resident) // _WORKING_BLOCKS) // row_bytes
    if block_rows < 1:
        return None, ("memory", phrase) if kind == "compact" else ("working", "")
    if kind == "disk" and size > _DISK_FRACTION * shutil.disk_usage(directory).free:
        return None, ("disk", phrase)
    return min(block_rows, n_rows), None


def _explain(refusals, n_rows, budget, directory):
    """Why the embedding fits nowhere it was tried, as a verb phrase (see ``_refusal``)."""
    per_row = _format_bytes(_SOLVER_BYTES_PER_ROW * n_rows)
    parts = []
    if "memory" in refusals:
        parts.append(f"exceeds the {_format_bytes(budget)} memory budget (which also holds "
                     f"{per_row} of per-row solver vectors and a few read blocks) as "
                     f"{' or '.join(refusals['memory'])} in memory")
    if "working" in refusals:
        parts.append(f"even out of core, the per-row solver vectors ({per_row}) leave no room "
                     f"for read blocks in the {_format_bytes(budget)} memory budget")
    if "disk" in refusals:
        free = _format_bytes(shutil.disk_usage(directory).free)
        parts.append(f"as {' or '.join(refusals['disk'])} on disk it exceeds "
                     f"{_DISK_FRACTION:.0%} of the {free} free in {directory}")
    return "; ".join(parts)


def _action(kind, storage_dtype, n_entries, directory):
    """What a plan does, as a phrase."""
    size = _format_bytes(n_entries * storage_dtype.itemsize)
    if kind == "memory":
        return f"keeping it in memory as {storage_dtype.name} ({size})"
    if kind == "compact":
        return f"storing it compactly in memory as float16 ({size}, float32 arithmetic)"
    return (f"writing it as {storage_dtype.name} to a temporary file in {directory} ({size}) "
            "and streaming it in blocks")


def _check_disk_space(nbytes, directory):
    """Refuse, before writing, a file larger than 90 % of the directory's free space."""
    free = shutil.disk_usage(directory).free
    if nbytes > _DISK_FRACTION * free:
        raise ValueError(
            f"the out-of-core embedding needs {_format_bytes(nbytes)} of disk space, more "
            f"than {_DISK_FRACTION:.0%} of the {_format_bytes(free)} free in {directory}; "
            "point directory= / $SNACKS_TMPDIR to a larger disk, or store it as float16.")


def _convert(source, dest):
    """Copy C-contiguous ``source`` into ``dest`` of the same shape, widening its dtype."""
    if source.dtype == np.float16:
        _widen_float16(source.reshape(-1).view(np.uint16), _FLOAT16_VALUES, dest.reshape(-1))
    else:
        np.copyto(dest, source)


def _read_exactly(file, view):
    """Fill ``view`` from the file's current position (a read may return fewer bytes)."""
    done = 0
    while done < len(view):
        got = file.readinto(view[done:])
        if not got:
            raise OSError("the embedding's temporary file ended early; was it truncated?")
        done += got


def _resolve_compute_dtype(kind, storage_dtype, compute_dtype):
    if kind == "memory":
        if compute_dtype is not None and np.dtype(compute_dtype) != storage_dtype:
            raise ValueError("a 'memory' store hands out views of its array: compute_dtype "
                             f"must be its storage dtype {storage_dtype.name}.")
        return storage_dtype
    compute_dtype = np.dtype(np.float32 if compute_dtype is None else compute_dtype)
    if compute_dtype not in (np.float32, np.float64):
        raise ValueError(f"compute_dtype must be float32 or float64, got {compute_dtype.name}.")
    return compute_dtype


def _rows_per_block(n_cols, itemsize):
    """Rows of a block of about ``_BLOCK_BYTES`` bytes."""
    return max(1, _BLOCK_BYTES // (n_cols * itemsize))


def _format_bytes(n_bytes):
    """Bytes in the largest binary unit that keeps the number at least 1, e.g. '19.9 GiB'."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{int(n_bytes)} B"
