"""The text of a file as a stream: decompressed (bz2, gzip, xz) as it is read, under the
limits of one of two policies, and cut into chunks of whole lines for the parsers.

Two policies, stated here and nowhere else (DESIGN.md, "Bad input"):

- :data:`UPLOAD_LIMITS`: a file uploaded to the app comes from an untrusted user of a shared
  server; a crafted file of a few bytes must not exhaust it, so its text, rows, features
  and classes have fixed caps (``tests/test_hostile.py``).
- :data:`LOCAL_FILE_LIMITS`: a user's own file, read by the library or the ``snacks``
  command line, has no cap on its size or rows: it is streamed in chunks, and what limits
  it is the memory its arrays need, checked as they grow (:func:`check_growth`).
"""

from __future__ import annotations

import bz2
import io
import lzma
import os
import queue
import stat
import threading
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TextIO

from snacks_core.core.memory import check_fits_in_memory

# The caps of an upload to the app: text after decompression, rows, feature columns (a
# LIBSVM index or a CSV's columns) and classes.
MAX_TEXT_BYTES = 256 * 2**20
MAX_ROWS = 5_000_000
MAX_FEATURES = 2**21
MAX_CLASSES = 1000
# The widest local file: column indices of a CSR matrix are int32.
MAX_LOCAL_FEATURES = 2**31 - 1
# The longest line of text, under either policy: far beyond a real row (a million dense
# features of 60 characters), and what stops a file without line ends (or an endless one)
# from being read until memory runs out.
MAX_LINE_BYTES = 64 * 2**20

# Bytes of text handed to a parser at once: large enough that parsing it in threads costs far
# more than starting them, small enough that the read-ahead holds little.
CHUNK_BYTES = 1 << 25
# Rows between two checks of the arrays read so far against the memory plan.
PLAN_EVERY = 1 << 16
# Text read from the (decompressing) stream at once.
_READ_PIECE_BYTES = 1 << 22
# Compressed bytes handed to zlib at once.
_GZIP_INPUT_BYTES = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"
_MAGIC = ((b"BZh", "bz2"), (_GZIP_MAGIC, "gzip"), (b"\xfd7zXZ\x00", "xz"))
SUFFIX_COMPRESSION = {".bz2": "bz2", ".gz": "gzip", ".xz": "xz"}


@dataclass(frozen=True)
class ReadLimits:
    """What one file may make a reader read and allocate.

    Attributes
    ----------
    max_bytes : int or None
        Text after decompression; None: no cap.
    max_rows : int or None
        Data rows; None: no cap.
    max_features : int
        Largest feature index of a LIBSVM file, or columns of a CSV file.
    max_classes : int
        Different labels.
    policy : str
        Named in messages (which policy refused the file).
    max_line_bytes : int
        The longest line of text (:data:`MAX_LINE_BYTES`).
    """

    max_bytes: int | None = None
    max_rows: int | None = None
    max_features: int = MAX_LOCAL_FEATURES
    max_classes: int = MAX_CLASSES
    policy: str = "a local file"
    max_line_bytes: int = MAX_LINE_BYTES


UPLOAD_LIMITS = ReadLimits(MAX_TEXT_BYTES, MAX_ROWS, MAX_FEATURES, MAX_CLASSES,
                           "the app's upload limit")
LOCAL_FILE_LIMITS = ReadLimits()

# What a reader accepts: a path, the bytes of a file, or a file object (binary, or text).
Source = str | os.PathLike | bytes | bytearray | memoryview | BinaryIO | TextIO


class _ReadError(ValueError):
    """A stream could not deliver its text: corrupt, cut short, or over the size limit;
    ``partial`` is the text read before the error in the same call."""

    partial = b""


class _CappedReader:
    """Reads a (possibly decompressing) stream, refusing to deliver more than the limit."""

    def __init__(self, inner, compression, limits):
        self._inner, self._compression, self._limits = inner, compression, limits
        self.count = 0

    def read(self, size):
        # In pieces, so that text decompressed before an error is counted and handed on with
        # it (the error then names the line, and the bytes, where the data is cut short).
        parts, wanted = [], size
        try:
            while wanted > 0:
                data = self._inner.read(min(wanted, _READ_PIECE_BYTES))
                if not data:
                    break
                parts.append(data)
                wanted -= len(data)
                self._count(len(data))
        except (OSError, EOFError, RuntimeError, ValueError, zlib.error,
                lzma.LZMAError) as exc:
            if isinstance(exc, _ReadError):
                raise
            what = (f"the {self._compression} data is corrupt or cut short"
                    if self._compression else "the file could not be read")
            detail = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
            error = _ReadError(f"{what} ({detail}) after {self.count:,} bytes of text")
            error.partial = b"".join(parts)
            raise error from None
        return b"".join(parts) if len(parts) != 1 else parts[0]

    def _count(self, n_bytes):
        self.count += n_bytes
        limit = self._limits.max_bytes
        if limit is not None and self.count > limit:
            after = " after decompression" if self._compression else ""
            raise _ReadError(f"the text is larger than {limit / 2**20:.0f} MiB{after} "
                             f"({self._limits.policy}, snacks_core.datasets.MAX_TEXT_BYTES); "
                             "use a smaller file or a subsample, or load it with the library "
                             "or the snacks command line, which read files of any size")


class TextStream:
    """The decompressed bytes of a path, bytes or file object, read under ``limits``.

    bz2, gzip and xz are recognised by their first bytes (a ``.bz2``, ``.gz`` or ``.xz``
    name must match them); a path's bz2 text is decompressed by several threads
    (indexed_bzip2, faster than Python's bz2), anything else by Python's modules (rapidgzip
    was slower than zlib and returned a cut-short gzip file's first half without an error:
    BENCHMARKS.md, "Large files").  Use as a context manager; :meth:`chunks` cuts the
    text into whole lines, :meth:`lines` reads it line by line.  Bytes after gzip data that
    are not gzip are ignored with a warning, unless ``peek`` (a first look at the head, read
    again after): the reading that follows gives it.
    """

    def __init__(self, source: Source, limits: ReadLimits = LOCAL_FILE_LIMITS,
                 name: str | None = None, *, peek: bool = False):
        self.limits, self._peek = limits, peek
        self._chunks, self._closed, self._gzip = None, False, None
        binary, default_name, self._owned = _binary_stream(source, limits)
        self.name = name or default_name
        try:
            self._reader = self._open(binary, source)
        except BaseException:
            self.close()
            raise
        self.size = _size_of(source)

    def _open(self, binary, source):
        head = binary.read(6)
        if isinstance(head, str):
            raise ValueError(f"{self.name}: open the file in binary mode ('rb').")
        if head.startswith(b"PK\x03\x04"):
            raise ValueError(f"{self.name} is a ZIP archive; unzip it and load the CSV or "
                             "LIBSVM file inside.")
        compression = next((kind for magic, kind in _MAGIC if head.startswith(magic)), None)
        expected = SUFFIX_COMPRESSION.get(Path(self.name).suffix.lower())
        if expected and compression != expected:
            raise ValueError(f"{self.name} is not {expected}-compressed data (it does not start "
                             f"as {expected} files do); the file is damaged or misnamed.")
        self.compression = compression
        inner = None
        if compression == "bz2" and isinstance(source, (str, os.PathLike)):
            inner = _parallel_bz2(source)
        if inner is None:
            prefixed = _Prefixed(head, binary)
            inner = {"bz2": lambda: bz2.BZ2File(prefixed),
                     "gzip": lambda: _GzipMembers(prefixed, self.name),
                     "xz": lambda: lzma.LZMAFile(prefixed)}.get(compression, lambda: prefixed)()
        if inner is not binary:
            self._owned.insert(0, inner)
        self._gzip = inner if isinstance(inner, _GzipMembers) else None
        return _CappedReader(inner, compression, self.limits)

    def read(self, size: int) -> bytes:
        """Up to ``size`` bytes of text (b'' at the end); errors name the file."""
        try:
            data = self._reader.read(size)
        except _ReadError as exc:
            raise ValueError(f"{self.name}: {exc}.") from None
        if not data:
            self._warn_ignored()
        return data

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def bytes_read(self) -> int:
        """Bytes of text delivered so far."""
        return self._reader.count

    def chunks(self, chunk_bytes: int | None = None):
        """The text as chunks of whole lines (the last may lack its line end), read ahead by
        one thread while the caller parses: ``(chunk, number of its first line)``."""
        self._chunks = _read_ahead(self._line_chunks(chunk_bytes or CHUNK_BYTES))
        return self._then_warn(self._chunks)

    def _then_warn(self, chunks):
        yield from chunks
        self._warn_ignored()

    def _warn_ignored(self):
        """Say, once, what the gzip stream ignored after its data."""
        if self._gzip is not None and self._gzip.note is not None and not self._peek:
            warnings.warn(self._gzip.note, UserWarning, stacklevel=3)
            self._gzip.note = None

    def _line_chunks(self, chunk_bytes):
        line, rest = 1, b""
        while True:
            try:
                data = self._reader.read(chunk_bytes)
            except _ReadError as exc:
                at = line + rest.count(b"\n") + exc.partial.count(b"\n")
                raise ValueError(f"{self.name}, line {at:,}: {exc}.") from None
            if not data:
                if rest:
                    yield rest, line
                return
            data = rest + data if rest else data
            end = data.rfind(b"\n") + 1
            if end == 0:
                rest = data
                self._check_line_length(len(rest), line)
                continue
            chunk, rest = (data, b"") if end == len(data) else (data[:end], data[end:])
            yield chunk, line
            line += chunk.count(b"\n")

    def _check_line_length(self, n_bytes, line):
        """Refuse line ``line`` once it holds more than the longest line allowed."""
        limit = self.limits.max_line_bytes
        if n_bytes > limit:
            raise ValueError(f"{self.name}, line {line:,}: longer than {limit / 2**20:g} MiB "
                             "without a line end (snacks_core.datasets.MAX_LINE_BYTES); no row "
                             "is that long: this is not a CSV or LIBSVM text file, or its lines "
                             "do not end in newlines.")

    def lines(self):
        """Every line of the text as str (with its end); ``self.line`` counts them."""
        self.line = 0
        text = io.TextIOWrapper(_RawText(self), encoding="utf-8-sig", newline="")
        # A line's characters are at most its bytes: one character more is a line too long.
        longest = self.limits.max_line_bytes
        while True:
            try:
                line = text.readline(longest + 1)
                if len(line) > longest:
                    self._check_line_length(len(line.encode("utf-8")), self.line + 1)
            except UnicodeDecodeError:
                raise ValueError(f"{self.name}, line {self.line + 1}: not UTF-8 text; save the "
                                 "file as plain text (CSV or LIBSVM format).") from None
            except ValueError as exc:
                raise ValueError(str(exc).replace(f"{self.name}:",
                                                  f"{self.name}, line {self.line + 1}:", 1)
                                 ) from None
            if not line:
                return
            self.line += 1
            yield line

    def close(self):
        # The read-ahead thread stops before the streams it reads are closed.
        if self._chunks is not None:
            self._chunks.close()
        for stream in self._owned:
            stream.close()
        self._owned, self._closed = [], True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class _ReadableRaw(io.RawIOBase):
    """A raw binary stream defined by its ``read(size)``."""

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


class _RawText(_ReadableRaw):
    """A :class:`TextStream` as a raw binary stream, for io.TextIOWrapper."""

    def __init__(self, stream):
        self._stream = stream

    def read(self, size=-1):
        if size is None or size < 0:
            return self.readall()  # RawIOBase's: read(DEFAULT_BUFFER_SIZE) to the end
        return self._stream.read(size)


class _Prefixed(_ReadableRaw):
    """A binary stream with its first bytes, already read to detect the format, put back."""

    def __init__(self, head, stream):
        self._head, self._stream = head, stream

    def read(self, size=-1):
        if size is None or size < 0:
            return self._head + self._stream.read()
        head, self._head = self._head[:size], self._head[size:]
        return head + self._stream.read(size - len(head)) if size > len(head) else head


class _GzipMembers(_ReadableRaw):
    """gzip data read as gzip(1) reads it: members one after another, then bytes that are not
    gzip data (what ``gzip -t`` calls "trailing garbage") ignored with a warning that says how
    many and from which byte of the file.  Python's GzipFile refuses such a file ("Not a
    gzipped file") as if its text were not there.  Each member's CRC and length are checked
    by zlib; a member cut short is an EOFError.  The warning is :attr:`note`, given by the
    :class:`TextStream` in its caller's thread (this one may run in the read-ahead thread)."""

    def __init__(self, stream, name):
        self._stream, self._name = stream, name
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._input, self._consumed, self._done = b"", 0, False
        self.note = None

    def read(self, size=-1):
        if size is None or size < 0:
            return b"".join(iter(lambda: self.read(_GZIP_INPUT_BYTES), b""))
        # As GzipFile does, deliver ``size`` bytes unless the text ends first: the parsers'
        # chunks stay large enough to be parsed in threads.
        parts, wanted = [], size
        while wanted > 0 and not self._done:
            if self._inflate.eof:
                self._next_member()
                continue
            data = self._inflate.unconsumed_tail or self._input or self._compressed()
            self._input = b""
            if not data:
                if parts:
                    break  # the text before the cut first; the next read raises
                raise EOFError("the last gzip member is cut short")
            text = self._inflate.decompress(data, wanted)
            parts.append(text)
            wanted -= len(text)
        return b"".join(parts)

    def _compressed(self):
        data = self._stream.read(_GZIP_INPUT_BYTES)
        self._consumed += len(data)
        return data

    def _next_member(self):
        """Start the next member, or end at the file's end or at bytes that are not gzip."""
        rest = self._inflate.unused_data
        while len(rest) < len(_GZIP_MAGIC):
            more = self._compressed()
            if not more:
                break
            rest += more
        if rest.startswith(_GZIP_MAGIC):
            self._inflate, self._input = zlib.decompressobj(16 + zlib.MAX_WBITS), rest
            return
        self._done = True
        if rest:
            offset = self._consumed - len(rest)
            ignored = len(rest) + sum(len(block) for block in iter(self._compressed, b""))
            self.note = (f"{self._name}: the {ignored:,} bytes after the gzip data (from byte "
                         f"{offset:,} of the file) are not gzip data and were ignored, as gzip "
                         "does ('trailing garbage ignored').")


def _parallel_bz2(path):
    """indexed_bzip2 on a path, with every core; None when it is not installed."""
    try:
        import indexed_bzip2
    except ImportError:
        return None
    return indexed_bzip2.open(os.fspath(path), parallelization=os.cpu_count() or 1)


def _binary_stream(source, limits):
    """(binary stream, display name, streams to close) of a path, bytes or file object."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        check_regular_file(path)
        try:
            stream = path.open("rb")
        except OSError as exc:
            raise ValueError(f"cannot read {path}: {exc.strerror or exc}.") from None
        return stream, path.name, [stream]
    if isinstance(source, (bytes, bytearray, memoryview)):
        return io.BytesIO(source), "data", []
    name = Path(str(getattr(source, "name", None) or "data")).name
    if isinstance(source, io.TextIOBase):
        size = -1 if limits.max_bytes is None else limits.max_bytes + 1
        return io.BytesIO(source.read(size).encode("utf-8")), name, []
    return source, name, []


def check_regular_file(path, what="data file"):
    """Refuse a path that is not a regular file before opening it: a folder, a FIFO (opening
    it waits for a writer), a device such as /dev/zero (endless) or a socket.

    Examples
    --------
    >>> from snacks_core.datasets.streams import check_regular_file
    >>> check_regular_file("/dev/zero")
    Traceback (most recent call last):
    ...
    ValueError: cannot read /dev/zero: it is a device, not a regular file; ...
    """
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}.") from None
    if stat.S_ISREG(mode):
        return
    kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a device")
    raise ValueError(f"cannot read {path}: it is {kind}, not a regular file; a {what} must be "
                     "a file on disk (write a stream to a file first, e.g. with "
                     "'cat > file').")


def _size_of(source):
    """Bytes of the file (compressed, as stored) when known: the progress line's total."""
    if isinstance(source, (str, os.PathLike)):
        try:
            return os.path.getsize(source)
        except OSError:
            return None
    if isinstance(source, (bytes, bytearray, memoryview)):
        return len(source)
    return None


def _read_ahead(generator, depth=2):
    """The items of ``generator``, produced by a thread up to ``depth`` ahead of the caller:
    reading and decompressing overlap parsing.  Errors reach the caller in order."""
    items = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def produce():
        try:
            for item in generator:
                while not stop.is_set():
                    try:
                        items.put((item, None), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            items.put((done, None))
        except BaseException as exc:  # handed to the consumer, raised there
            items.put((done, exc))

    thread = threading.Thread(target=produce, daemon=True, name="snacks-read-ahead")
    thread.start()
    try:
        while True:
            item, error = items.get()
            if error is not None:
                raise error
            if item is done:
                return
            yield item
    finally:
        stop.set()
        while thread.is_alive():
            try:
                items.get(timeout=0.1)
            except queue.Empty:
                pass
        thread.join()


def check_growth(name, line, n_bytes):
    """The memory plan of a reader: what it holds so far, and the matrix built from it."""
    check_fits_in_memory(2 * n_bytes, f"Reading {name} (up to line {line:,})",
                         "Use a smaller file or a subsample of its rows.")


def check_rows(name, line, rows, limits):
    """Refuse a row beyond the policy's row cap, naming its line."""
    if limits.max_rows is not None and rows > limits.max_rows:
        raise ValueError(f"{name}, line {line:,}: more than the limit of {limits.max_rows:,} "
                         f"rows ({limits.policy}, snacks_core.datasets.MAX_ROWS); use a "
                         "subsample, or load it with the library or the snacks command line.")
