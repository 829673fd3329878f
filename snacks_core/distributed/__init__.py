"""SnacksClassifier on a Dask cluster: fit and predict with the rows kept on their workers.

A fit on a ``dask.array`` or ``dask.dataframe`` runs on the current
``distributed.Client`` in these stages, one module each:

1. :mod:`~snacks_core.distributed.data`: the rows as a row-chunked Dask array and aligned
   labels, one future per partition on the workers, and per-partition summaries (rows,
   class counts, sums for γ='scale');
2. :mod:`~snacks_core.distributed.landmarks`: the m landmarks drawn across partitions by the
   in-memory rule (class-balanced or uniform); only these m rows reach the client;
3. :mod:`~snacks_core.distributed.fit`: the Nyström factor computed once on the client and
   broadcast once; each partition embedded on its worker and kept there, in memory or
   compact (float16) as that worker's memory allows;
4. :mod:`~snacks_core.distributed.assg` (solver 'snacks'): the Snacks (ASSG) steps on each
   worker's rows averaged across workers each round, a certified gap at each stage's end,
   polished by :mod:`~snacks_core.distributed.cocoa` (every other solver): CoCoA+ rounds
   with LIBLINEAR's dual coordinate descent as the local solver and a certified duality gap
   each round; both stop early by the in-memory rule
   (:class:`~snacks_core.solvers.snacks.HeldOutPatience`);
5. :mod:`~snacks_core.distributed.predict`: scores and labels as Dask arrays, block by block.

:mod:`~snacks_core.distributed.holdout` draws the rows early stopping holds out: those the
in-memory fit holds out with the same seed, whatever the partitioning.

:mod:`~snacks_core.distributed.files` reads a glob of data files (or URLs, through fsspec)
on the workers (one partition each, one LIBSVM index base, one width), scales them by the
one rule of :mod:`snacks_core.datasets.scaling` from per-partition sums, and predicts them:
what ``snacks fit --scheduler`` and ``snacks predict --scheduler`` run.

This module imports no Dask: :func:`is_dask_collection` tells the estimator when to import
the engine (Dask is an optional dependency, ``pip install 'snacks-explorer[distributed]'``).
"""

from __future__ import annotations


def is_dask_collection(data) -> bool:
    """Whether ``data`` is a Dask collection (array, dataframe or series), without
    importing Dask."""
    return type(data).__module__.partition(".")[0] == "dask"


def _connect(distributed, address, what):
    """A Client of the scheduler at ``address``; a ValueError of one line when none answers
    there (nothing listening, or a server that speaks another protocol: its bytes read as a
    Dask message's length ask for exabytes)."""
    try:
        return distributed.Client(address)
    except (OSError, TimeoutError) as exc:
        reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    except (MemoryError, ValueError, TypeError, KeyError):
        reason = "something answered that does not speak Dask's protocol"
    raise ValueError(f"{what}: no Dask scheduler answered at {address} ({reason}): give the "
                     "address 'dask scheduler' prints, e.g. tcp://HOST:8786, and check that "
                     "the scheduler is running and reachable from this machine.")


def current_client(client=None, what="A fit on Dask collections"):
    """``(client, owned)``: the ``distributed.Client`` to run on (``client`` itself, a new
    one for a scheduler address, else the current one) and whether the caller closes it;
    ``what`` names the work in the messages when there is none."""
    try:
        import distributed
    except ImportError:
        raise ValueError(f"{what} needs dask.distributed: pip install "
                         "'snacks-explorer[distributed]'.") from None
    if isinstance(client, str):
        return _connect(distributed, client, what), True
    if client is not None:
        return client, False
    try:
        return distributed.get_client(), False
    except ValueError:
        raise ValueError(f"{what} runs on a dask.distributed cluster, and there is no "
                         "current Client: start one first, e.g. "
                         "Client('tcp://scheduler:8786'), or Client() for a local cluster, "
                         "or pass client=....") from None
