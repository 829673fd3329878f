"""The text of a file, bounded: decompressed (bz2, gzip, xz) in a stream that stops at a size
limit, counted before parsing so that a reader can refuse what it would not fit in memory.

The limits below are what every reader (and every upload to the app) accepts; a crafted file
of a few bytes must not exhaust the server (issue 10: ``tests/test_hostile.py``).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zlib
from pathlib import Path
from typing import BinaryIO, TextIO

from ..validation import check_fits_in_memory

# Limits on what a file can make us read, allocate or compute (README, "Limits").  They hold
# for every reader and for uploads to the app, where a few crafted bytes must not exhaust
# the server: text after decompression, rows, feature columns (LIBSVM indices) and classes.
MAX_TEXT_BYTES = 256 * 2**20
MAX_ROWS = 5_000_000
MAX_FEATURES = 2**21
MAX_CLASSES = 1000
_READ_CHUNK = 1 << 20
# Rows between two checks of the arrays read so far against the memory plan.
PLAN_EVERY = 1 << 16
_MAGIC = ((b"BZh", "bz2"), (b"\x1f\x8b", "gzip"), (b"\xfd7zXZ\x00", "xz"))
SUFFIX_COMPRESSION = {".bz2": "bz2", ".gz": "gzip", ".xz": "xz"}
# Bytes counted in a text before parsing: lines, LIBSVM pairs, CSV separators.
_COUNTED = (b"\n", b":", b",", b";", b"\t")

# What a reader accepts: a path, the bytes of a file, or a file object (binary, or text that
# is read at most max_bytes + 1 characters far).
Source = str | os.PathLike | bytes | bytearray | memoryview | BinaryIO | TextIO


class _ReadError(ValueError):
    """A stream could not deliver its text: corrupt, cut short, or over the size limit."""


class _CappedReader:
    """Reads a (possibly decompressing) stream, refusing to deliver more than ``max_bytes``."""

    def __init__(self, inner, compression, max_bytes):
        self._inner, self._compression, self._max_bytes = inner, compression, max_bytes
        self.count = 0

    def read(self, size):
        try:
            data = self._inner.read(size)
        except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
            what = (f"the {self._compression} data is corrupt or cut short"
                    if self._compression else "the file could not be read")
            raise _ReadError(f"{what} ({exc}) after {self.count:,} bytes of text") from None
        self.count += len(data)
        if self.count > self._max_bytes:
            after = " after decompression" if self._compression else ""
            raise _ReadError(f"the text is larger than {self._max_bytes / 2**20:.0f} MiB{after} "
                             "(snacks_core.datasets.MAX_TEXT_BYTES); use a smaller file or a "
                             "subsample, or pass max_bytes= to the reader")
        return data


class TextFile:
    """The text of a path, bytes or file object, decompressed (bz2, gzip, xz) in a stream that
    stops at ``max_bytes``, then read line by line as UTF-8; errors name the file and line.

    ``count(b":")`` and ``n_lines`` bound what a reader will allocate before it starts.
    """

    def __init__(self, source, max_bytes=MAX_TEXT_BYTES, name=None):
        binary, self.name, owned = _binary_stream(source, max_bytes)
        self.name = name or self.name
        self._counts = dict.fromkeys(_COUNTED, 0)
        try:
            text, ends_line = self._decompress(binary, max_bytes, owned)
        finally:
            for stream in owned:
                stream.close()
        self.n_lines = self._counts[b"\n"] + (not ends_line)
        self._text = io.TextIOWrapper(text, encoding="utf-8-sig", newline="")
        self.line = 0

    def _decompress(self, binary, max_bytes, owned):
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
        binary = _Prefixed(head, binary)
        inner = {"bz2": lambda: bz2.BZ2File(binary), "gzip": lambda: gzip.GzipFile(fileobj=binary),
                 "xz": lambda: lzma.LZMAFile(binary)}.get(compression, lambda: binary)()
        if inner is not binary:
            owned.insert(0, inner)
        reader = _CappedReader(inner, compression, max_bytes)
        # The text is kept (at most max_bytes) and counted as it comes: the counts bound
        # what the readers will allocate before they parse anything.
        text, last = io.BytesIO(), b"\n"
        while True:
            try:
                chunk = reader.read(_READ_CHUNK)
            except _ReadError as exc:
                line = self._counts[b"\n"] + 1
                raise ValueError(f"{self.name}, line {line:,}: {exc}.") from None
            if not chunk:
                text.seek(0)
                return text, last == b"\n"
            for pattern in self._counts:
                self._counts[pattern] += chunk.count(pattern)
            text.write(chunk)
            last = chunk[-1:]

    def count(self, pattern: bytes) -> int:
        """Occurrences of ``pattern`` (one of ``_COUNTED``) in the text."""
        return self._counts[pattern]

    def check_rows(self, max_rows):
        """Refuse, before parsing, text with more lines than ``max_rows`` (+ a header)."""
        if self.n_lines > max_rows + 1:
            raise ValueError(f"{self.name} has {self.n_lines:,} lines, more than the limit of "
                             f"{max_rows:,} rows (snacks_core.datasets.MAX_ROWS); use a "
                             "subsample, or pass max_rows= to the reader.")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._text.close()
        return False

    def lines(self):
        """Every line (with its end), counted in ``self.line``."""
        while True:
            try:
                line = self._text.readline()
            except UnicodeDecodeError:
                raise ValueError(f"{self.name}, line {self.line + 1}: not UTF-8 text; save the "
                                 "file as plain text (CSV or LIBSVM format).") from None
            if not line:
                return
            self.line += 1
            yield line


class _Prefixed(io.RawIOBase):
    """A binary stream with its first bytes, already read to detect the format, put back."""

    def __init__(self, head, stream):
        self._head, self._stream = head, stream

    def readable(self):
        return True

    def readinto(self, buffer):
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n], self._head = self._head[:n], self._head[n:]
            return n
        data = self._stream.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def read(self, size=-1):
        if size is None or size < 0:
            return self.readall()
        head, self._head = self._head[:size], self._head[size:]
        return head + self._stream.read(size - len(head)) if size > len(head) else head


def _binary_stream(source, max_bytes):
    """(binary stream, display name, streams to close) of a path, bytes or file object."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:
            stream = path.open("rb")
        except OSError as exc:
            raise ValueError(f"cannot read {path}: {exc.strerror or exc}.") from None
        return stream, path.name, [stream]
    if isinstance(source, (bytes, bytearray, memoryview)):
        return io.BytesIO(source), "data", []
    name = Path(str(getattr(source, "name", None) or "data")).name
    if isinstance(source, io.TextIOBase):
        return io.BytesIO(source.read(max_bytes + 1).encode("utf-8")), name, []
    return source, name, []


def check_growth(name, line, n_bytes):
    """The memory plan of a reader: what it holds so far, and the matrix built from it."""
    check_fits_in_memory(2 * n_bytes, f"Reading {name} (up to line {line:,})",
                         "Use a smaller file or a subsample of its rows.")
