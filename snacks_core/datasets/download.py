"""Public LIBSVM binary datasets: downloaded once, verified before they are cached."""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from snacks_core.datasets.dataset import Dataset, make_dataset
from snacks_core.datasets.libsvm_reader import read_libsvm_files
from snacks_core.datasets.streams import UPLOAD_LIMITS

LIBSVM_BASE_URL = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"


@dataclass(frozen=True)
class LibsvmSource:
    """A public LIBSVM binary dataset: its train file, optional test file and width."""

    train: str
    test: str | None
    n_features: int
    about: str


LIBSVM_DATASETS = {
    "a9a": LibsvmSource("a9a", "a9a.t", 123, "Adult census income, 32,561 + 16,281 rows"),
    "w8a": LibsvmSource("w8a", "w8a.t", 300, "web page keywords, 49,749 + 14,951 rows"),
    "ijcnn1": LibsvmSource("ijcnn1.bz2", "ijcnn1.t.bz2", 22,
                           "IJCNN 2001 challenge, 49,990 + 91,701 rows"),
    "cod-rna": LibsvmSource("cod-rna", "cod-rna.t", 8, "non-coding RNA, 59,535 + 271,617 rows"),
    "skin_nonskin": LibsvmSource("skin_nonskin", None, 3, "skin pixels (RGB), 245,057 rows"),
    "mushrooms": LibsvmSource("mushrooms", None, 112, "edible or poisonous, 8,124 rows"),
    "phishing": LibsvmSource("phishing", None, 68, "phishing web sites, 11,055 rows"),
    "madelon": LibsvmSource("madelon", "madelon.t", 500, "NIPS 2003 challenge, 2,000 + 600 rows"),
}


class DownloadError(ConnectionError):
    """A public dataset could not be downloaded; the message says what to do instead."""


# A download larger or slower than this is refused (the largest public set here is ~25 MB).
MAX_DOWNLOAD_BYTES = 256 * 2**20
DOWNLOAD_DEADLINE = 600.0


def libsvm_cache_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """Where downloaded LIBSVM files are kept: ``cache_dir``, $SNACKS_DATA_HOME or ~/.cache."""
    if cache_dir is not None:
        return Path(cache_dir)
    home = os.environ.get("SNACKS_DATA_HOME")
    if home:
        return Path(home) / "libsvm"
    return Path.home() / ".cache" / "snacks_explorer" / "libsvm"


def cached_libsvm_datasets(cache_dir: str | os.PathLike | None = None) -> list[str]:
    """Names of the public LIBSVM datasets whose files are all in the cache."""
    root = libsvm_cache_dir(cache_dir)
    return [name for name, source in LIBSVM_DATASETS.items()
            if all((root / name / f).is_file() for f in (source.train, source.test) if f)]


def fetch_libsvm(name: str, *, cache_dir: str | os.PathLike | None = None,
                 base_url: str | None = None, timeout: float = 30.0,
                 deadline: float = DOWNLOAD_DEADLINE,
                 max_bytes: int = MAX_DOWNLOAD_BYTES) -> Dataset:
    r"""A public LIBSVM binary dataset, downloaded once into a local cache.

    A download is verified before it is cached: its size against the announced length and
    ``max_bytes``, its start (not a web page; bz2 data where a ``.bz2`` file is expected)
    and its whole content (every file must parse as the LIBSVM data expected).  It is
    written to a temporary file in the cache folder and renamed only then, so a broken
    download never stays in the cache.

    Parameters
    ----------
    name : str
        One of :data:`LIBSVM_DATASETS` (a9a, w8a, ijcnn1, cod-rna, skin_nonskin, …).
    cache_dir : path, optional
        Defaults to :func:`libsvm_cache_dir`.
    base_url : str, optional
        Where the files live: $SNACKS_LIBSVM_URL, else the LIBSVM site (tests point it at a
        local server).
    timeout : float, default=30
        Seconds to wait for the server at each read.
    deadline : float, default=DOWNLOAD_DEADLINE
        Seconds for a whole file.
    max_bytes : int, default=MAX_DOWNLOAD_BYTES
        Largest file accepted.

    Raises
    ------
    DownloadError
        When a file cannot be downloaded (no network, server error, too slow, too large,
        not the data expected), saying where to put the file by hand.

    Examples
    --------
    >>> from snacks_core.datasets import fetch_libsvm
    >>> a9a = fetch_libsvm("a9a")  # doctest: +SKIP

    Any folder or server holding the same file names serves as a mirror:

    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as mirror:
    ...     _ = Path(mirror, "mushrooms").write_bytes(b"+1 1:1 3:1\n-1 2:1 112:1\n")
    ...     data = fetch_libsvm("mushrooms", base_url=Path(mirror).as_uri(),
    ...                         cache_dir=Path(mirror, "cache"))
    >>> data.X.shape, data.X_test is None
    ((2, 112), True)
    """
    if name not in LIBSVM_DATASETS:
        raise ValueError(f"unknown LIBSVM dataset {name!r}; choose one of "
                         f"{', '.join(LIBSVM_DATASETS)}.")
    source = LIBSVM_DATASETS[name]
    base_url = base_url or os.environ.get("SNACKS_LIBSVM_URL") or LIBSVM_BASE_URL
    folder = libsvm_cache_dir(cache_dir) / name
    downloads = {}
    try:
        parts = []
        for file_name in (f for f in (source.train, source.test) if f):
            target = folder / file_name
            if not target.is_file():
                downloads[target] = _download(base_url, file_name, folder, timeout, deadline,
                                              max_bytes)
            parts.append((downloads.get(target, target), file_name))
        try:
            # What a server sent is not trusted more than an upload: the same caps.  The
            # training and test files are read with one index base.
            read, base = read_libsvm_files([path for path, _ in parts],
                                           n_features=source.n_features,
                                           names=[file_name for _, file_name in parts],
                                           limits=UPLOAD_LIMITS)
            (X, y, _), *test = read
            X_test, y_test = test[0][:2] if test else (None, None)
            dataset = make_dataset(X, y, name, description=f"LIBSVM public dataset: "
                                   f"{source.about}.", X_test=X_test, y_test=y_test,
                                   index_base=base)
        except ValueError as exc:
            if downloads:
                raise DownloadError(f"The download of {name} from {base_url} is not the LIBSVM "
                                    f"data expected ({exc}); nothing was cached. Download the "
                                    f"files by hand into {folder}/.") from None
            raise ValueError(f"{exc} (the cached file in {folder}/ is damaged: delete it to "
                             "download it again)") from None
        for target, part in downloads.items():
            part.replace(target)
        downloads.clear()
    finally:
        for part in downloads.values():
            part.unlink(missing_ok=True)
    return dataset


class _BadDownload(Exception):
    """A response that must not be cached, with the reason."""


def _download(base_url, file_name, folder, timeout, deadline, max_bytes) -> Path:
    """A verified download of ``file_name`` in a temporary file of ``folder``."""
    # The network modules load only for a download (not for every command that reads a file).
    import http.client
    import urllib.error
    import urllib.request

    url = base_url.rstrip("/") + "/" + file_name
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{file_name}.", suffix=".part", dir=folder)
    part = Path(temporary)
    started = time.monotonic()
    try:
        with os.fdopen(handle, "wb") as out, \
                urllib.request.urlopen(url, timeout=min(timeout, deadline)) as response:
            _receive(response, out, file_name, started, deadline, max_bytes)
    except _BadDownload as exc:
        part.unlink(missing_ok=True)
        raise DownloadError(f"{url}: {exc}. Nothing was cached; try again later, or download "
                            f"{file_name} by hand into {folder}/.") from None
    except urllib.error.HTTPError as exc:
        part.unlink(missing_ok=True)
        raise DownloadError(f"The server answered {exc.code} ({exc.reason}) for {url}. Download "
                            f"the file by hand into {folder}/ and load it again.") from None
    except (TimeoutError, urllib.error.URLError, OSError, http.client.HTTPException,
            ValueError) as exc:
        part.unlink(missing_ok=True)
        reason = getattr(exc, "reason", exc)
        if isinstance(exc, TimeoutError) or isinstance(reason, TimeoutError):
            raise DownloadError(f"{url}: the server did not answer within {timeout:g} s. "
                                f"Try again later, or download {file_name} by hand into "
                                f"{folder}/.") from None
        raise DownloadError(f"Could not download {url}: {reason}. There seems to be no network "
                            f"access; download {file_name} by hand into {folder}/, or upload it "
                            "on the Data page.") from None
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return part


def _receive(response, out, file_name, started, deadline, max_bytes):
    """Copy a response into ``out``, checking its type, size, start and the deadline."""
    content_type = response.headers.get("Content-Type", "") or ""
    if "html" in content_type.lower():
        raise _BadDownload(f"the server sent a web page ({content_type}), not the data file")
    announced = response.headers.get("Content-Length")
    try:
        announced = int(announced) if announced is not None else None
    except ValueError:
        announced = None
    if announced is not None and announced > max_bytes:
        raise _BadDownload(f"the file has {announced:,} bytes, more than the limit of "
                           f"{max_bytes:,}")
    read = getattr(response, "read1", response.read)
    size, head = 0, b""
    while chunk := read(1 << 16):
        size += len(chunk)
        if size > max_bytes:
            raise _BadDownload(f"the file is larger than the limit of {max_bytes:,} bytes")
        if time.monotonic() - started > deadline:
            raise _BadDownload(f"the download took longer than {deadline:g} s "
                               f"({size:,} bytes received)")
        if len(head) < 512:
            head += chunk[:512 - len(head)]
        out.write(chunk)
    if announced is not None and size != announced:
        raise _BadDownload(f"the server sent {size:,} of the {announced:,} bytes it announced "
                           "(the connection broke)")
    if size == 0:
        raise _BadDownload("the server sent an empty file")
    start = head.lstrip().lower()
    if start.startswith((b"<!doctype", b"<html", b"<head", b"<?xml", b"<body")):
        raise _BadDownload("the server sent a web page, not the data file")
    if file_name.endswith(".bz2") and not head.startswith(b"BZh"):
        raise _BadDownload("the file is not bz2-compressed data")
