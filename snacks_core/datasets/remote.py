"""Data files at URLs (``s3://``, ``gs://``, ``http(s)://``, ``file://``...) through fsspec,
an optional dependency (the ``distributed`` extra).

A URL's file is copied to a temporary local file of the same name (its format and compression
come from the name), read as a local file, and removed: the same readers, limits and messages
as a file on disk, on one machine as on a cluster's workers.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile


def url_scheme(path) -> str | None:
    """The protocol of a URL (``'s3'``, ``'gs'``, ``'http'``...), None for a local path.

    Examples
    --------
    >>> from snacks_core.datasets.remote import url_scheme
    >>> url_scheme("https://example.org/a9a.svm"), url_scheme("data/a9a.svm")
    ('https', None)
    """
    scheme, separator, _ = str(path).partition("://")
    return scheme.lower() if separator and scheme.isalnum() else None


def remote_filesystem(url):
    """The fsspec file system of ``url``; a ValueError that names what to install when
    fsspec, or its support of that protocol, is missing here."""
    protocol = url_scheme(url)
    try:
        import fsspec
    except ImportError:
        raise ValueError(f"{url}: reading {protocol}:// paths needs fsspec (pip install "
                         "fsspec aiohttp, or the package's 'distributed' extra; with "
                         "--scheduler, on the workers too).") from None
    try:
        return fsspec.filesystem(protocol)
    except (ImportError, ValueError) as exc:
        raise ValueError(f"{url}: fsspec cannot read {protocol}:// here "
                         f"({str(exc).splitlines()[0]}); install its support (http(s): "
                         "aiohttp, s3: s3fs, gs: gcsfs; with --scheduler, on the workers "
                         "too), or copy the file to a local or shared folder.") from None


def _check_room(filesystem, url, folder):
    """Refuse a file larger than the free space of the temporary folder, when its size is
    known, before it is copied there."""
    try:
        size = filesystem.size(url)
    except Exception:  # a server that does not say the size: copy and see
        return
    free = shutil.disk_usage(folder).free
    if size is not None and size > free:
        raise ValueError(f"{url}: its {size / 2**30:.2f} GiB do not fit in the "
                         f"{free / 2**30:.2f} GiB free in {folder}, where it is copied to be "
                         "read; set TMPDIR to a folder with room.")


@contextlib.contextmanager
def local_copy(url):
    """The path of a temporary local copy of the file at ``url``, removed after the block.

    Raises
    ------
    ValueError
        In one line, when fsspec cannot read the URL (missing support, no such file, a
        server that does not answer).
    """
    filesystem = remote_filesystem(url)
    with tempfile.TemporaryDirectory(prefix="snacks-") as folder:
        name = os.path.basename(str(url).split("?")[0].rstrip("/")) or "data"
        local = os.path.join(folder, name)
        _check_room(filesystem, url, folder)
        try:
            filesystem.get_file(url, local)
        except FileNotFoundError:
            raise ValueError(f"cannot read {url}: there is no such file.") from None
        except Exception as exc:  # each protocol's client has its own errors
            detail = str(exc).splitlines()[0] if str(exc) else ""
            raise ValueError(f"cannot read {url}: {type(exc).__name__}"
                             + (f" ({detail})" if detail else "") + ".") from None
        yield local


@contextlib.contextmanager
def local_paths(paths):
    """``paths`` with every URL replaced by the path of a local copy (:func:`local_copy`),
    the copies removed after the block."""
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(local_copy(path)) if url_scheme(path) else path
               for path in paths]
