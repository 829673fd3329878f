"""Exact numba kernels that parse LIBSVM/svmlight text: ``label index:value …`` per line.

The kernels handle the lines they are certain about and hand every other line back to a
plain-Python parser, which either accepts it or raises a line-numbered error.  Numbers are
correctly rounded (the same double as Python's ``float(token)``): Clinger's fast path when the
decimal significand and the power of ten are both exact doubles, otherwise the Eisel–Lemire
algorithm with 128-bit truncated powers of five.  Every function is ``nogil`` and allocates
nothing per token, so that threads can parse disjoint pieces of one buffer.

References
----------
W. D. Clinger, "How to read floating point numbers accurately", PLDI 1990.
D. Lemire, "Number parsing at a gigabyte per second", Software: Practice and Experience
51(8), 2021.  N. Mushtak and D. Lemire, "Fast number parsing without fallback", Software:
Practice and Experience 53(6), 2023.
"""

import numpy as np

from snacks_core.core.compiled import njit

# Range of decimal exponents q for which w * 10**q (1 <= w < 2**64) is neither surely zero
# nor surely infinite as a double.
_SMALLEST_POWER_OF_TEN = -342
_LARGEST_POWER_OF_TEN = 308
# 10**19 - 1 < 2**64: up to 19 significant digits fit the uint64 significand exactly.
_MAX_SIGNIFICANT_DIGITS = 19
# 10**18 - 1 < 2**63: an index of up to 18 digits fits int64.
_MAX_INDEX_DIGITS = 18


def _truncated_powers_of_five():
    """5**q for q in [-342, 308] as 128-bit significands (high and low uint64 words).

    The table of fast_float and of Rust's ``core::num::dec2flt``: 5**q shifted so that its
    top bit is bit 127 and truncated for q >= 0; for q < 0, a reciprocal rounded up.
    """
    high = np.empty(_LARGEST_POWER_OF_TEN - _SMALLEST_POWER_OF_TEN + 1, dtype=np.uint64)
    low = np.empty_like(high)
    mask = (1 << 64) - 1
    for i, q in enumerate(range(_SMALLEST_POWER_OF_TEN, _LARGEST_POWER_OF_TEN + 1)):
        if q < 0:
            power = 5**-q
            z = power.bit_length()
            if q >= -27:
                c = 2 ** (z + 127) // power + 1
            else:
                c = 2 ** (2 * z + 128) // power + 1
                c >>= max(c.bit_length() - 128, 0)
        else:
            c = 5**q
            c = c << (128 - c.bit_length()) if c.bit_length() < 128 else c >> (
                c.bit_length() - 128)
        high[i], low[i] = c >> 64, c & mask
    return high, low


_POWERS_OF_FIVE_HIGH, _POWERS_OF_FIVE_LOW = _truncated_powers_of_five()
# 10**k is an exact double for k <= 22 (5**22 < 2**53).
_EXACT_POWERS_OF_TEN = np.array([10.0**k for k in range(23)])

_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_TEN = np.uint64(10)
_LOW_32 = np.uint64(0xFFFFFFFF)
_ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
_SHIFT_32 = np.uint64(32)
_SHIFT_52 = np.uint64(52)
_SHIFT_63 = np.uint64(63)
_TWO_POW_52 = np.uint64(1 << 52)
_TWO_POW_53 = np.uint64(1 << 53)
# Bits below the 55 the rounding needs (52 explicit + hidden + round bit + a leading zero).
_PRECISION_MASK = np.uint64(0xFFFFFFFFFFFFFFFF >> 55)

_NEWLINE, _TAB, _RETURN, _SPACE, _HASH = 10, 9, 13, 32, 35
_PLUS, _MINUS, _DOT, _COLON = 43, 45, 46, 58


@njit(cache=True, nogil=True)
def count_newlines_and_colons(buf):
    """Count the ``\\n`` and ``:`` bytes of a buffer, to size the outputs of :func:`parse_lines`.

    Parameters
    ----------
    buf : ndarray of uint8, shape (n_bytes,)

    Returns
    -------
    n_newlines, n_colons : int
        Rows are at most ``n_newlines + 1`` and index:value pairs at most ``n_colons``.
    """
    n_newlines = 0
    n_colons = 0
    for i in range(buf.shape[0]):
        c = buf[i]
        n_newlines += c == _NEWLINE
        n_colons += c == _COLON
    return n_newlines, n_colons


@njit(cache=True, nogil=True)
def _multiply_128(a, b):
    """The 128-bit product of two uint64 as (high, low) words, from 32-bit halves."""
    a_low, a_high = a & _LOW_32, a >> _SHIFT_32
    b_low, b_high = b & _LOW_32, b >> _SHIFT_32
    low_low = a_low * b_low
    low_high = a_low * b_high
    high_low = a_high * b_low
    middle = (low_low >> _SHIFT_32) + (low_high & _LOW_32) + (high_low & _LOW_32)
    low = (middle << _SHIFT_32) | (low_low & _LOW_32)
    high = a_high * b_high + (low_high >> _SHIFT_32) + (high_low >> _SHIFT_32) + (
        middle >> _SHIFT_32)
    return high, low


@njit(cache=True, nogil=True)
def _leading_zeros(w):
    """Leading zero bits of a non-zero uint64."""
    n = 0
    for width in (32, 16, 8, 4, 2, 1):
        if w < (_ONE << np.uint64(64 - width)):
            w = w << np.uint64(width)
            n += width
    return n


@njit(cache=True, nogil=True)
def _eisel_lemire(w, q):
    """IEEE bits of the double nearest to ``w * 10**q`` (``w`` a non-zero uint64).

    Returns ``(ok, bits)``; ``ok`` is False when the result overflows or the truncated
    powers of five cannot decide the rounding (the caller falls back).  Follows
    ``compute_float`` of fast_float / Rust's ``core::num::dec2flt::lemire``.
    """
    if q < _SMALLEST_POWER_OF_TEN:
        return True, _ZERO
    if q > _LARGEST_POWER_OF_TEN:
        return False, _ZERO
    lz = _leading_zeros(w)
    w = w << np.uint64(lz)
    i = q - _SMALLEST_POWER_OF_TEN
    high, low = _multiply_128(w, _POWERS_OF_FIVE_HIGH[i])
    if (high & _PRECISION_MASK) == _PRECISION_MASK:
        second_high, _ = _multiply_128(w, _POWERS_OF_FIVE_LOW[i])
        low = low + second_high
        if second_high > low:
            high = high + _ONE
    if low == _ALL_ONES and (q < -27 or q > 55):
        return False, _ZERO
    upper_bit = np.int64(high >> _SHIFT_63)
    shift = np.uint64(upper_bit + 9)
    mantissa = high >> shift
    power2 = (((152170 + 65536) * q) >> 16) + 63 + upper_bit - lz + 1023
    if power2 <= 0:
        if -power2 + 1 >= 64:
            return True, _ZERO
        mantissa = mantissa >> np.uint64(-power2 + 1)
        mantissa = (mantissa + (mantissa & _ONE)) >> _ONE
        # Rounding up may carry into the smallest normal exponent: the OR below encodes it.
        power2 = 0 if mantissa < _TWO_POW_52 else 1
        return True, mantissa | (np.uint64(power2) << _SHIFT_52)
    # An exact tie (possible only when 5**|q| fits 64 bits) rounds to even, not up.
    if (low <= _ONE and -4 <= q <= 23 and (mantissa & np.uint64(3)) == _ONE
            and (mantissa << shift) == high):
        mantissa = mantissa & ~_ONE
    mantissa = (mantissa + (mantissa & _ONE)) >> _ONE
    if mantissa >= _TWO_POW_53:
        mantissa = _TWO_POW_52
        power2 += 1
    mantissa = mantissa & ~_TWO_POW_52
    if power2 >= 0x7FF:
        return False, _ZERO
    return True, mantissa | (np.uint64(power2) << _SHIFT_52)


@njit(cache=True, nogil=True)
def _parse_sign(buf, pos, end):
    """Skip an optional ``+`` or ``-`` at ``buf[pos]``: ``(pos after it, negative)``."""
    if pos < end:
        if buf[pos] == _MINUS:
            return pos + 1, True
        if buf[pos] == _PLUS:
            return pos + 1, False
    return pos, False


# inline="always": a piece of _parse_number, cut out for reading, compiled into it as before.
@njit(cache=True, nogil=True, inline="always")
def _parse_exponent(buf, pos, end):
    """Parse the ``[+-]?digits`` after an ``e`` or ``E``: ``(pos after it, ok, exponent)``,
    ``ok`` False without digits."""
    pos, negative = _parse_sign(buf, pos, end)
    exponent = 0
    n_digits = 0
    while pos < end:
        d = np.int64(buf[pos]) - 48
        if d < 0 or d > 9:
            break
        # Beyond this, any non-zero significand is surely zero or infinite.
        if exponent < 100000:
            exponent = exponent * 10 + d
        n_digits += 1
        pos += 1
    return pos, n_digits > 0, -exponent if negative else exponent


@njit(cache=True, nogil=True)
def _parse_number(buf, pos, end, bits, as_float):
    """Parse ``[+-]?(digits[.digits?]|.digits)([eE][+-]?digits)?`` at ``buf[pos:end]``.

    Returns ``(pos after the number, ok, value)``; ``ok`` is False for anything else, a
    non-finite value, more than 19 significant digits (other than trailing zeros) or a
    rounding Eisel–Lemire cannot decide.  ``bits`` (uint64[1]) and ``as_float`` (its
    float64 view) reinterpret IEEE bits.
    """
    pos, negative = _parse_sign(buf, pos, end)
    w = _ZERO
    n_significant = 0
    n_digits = 0
    q = 0
    fraction = False
    while pos < end:
        if buf[pos] == _DOT and not fraction:
            fraction = True
            pos += 1
            continue
        d = np.int64(buf[pos]) - 48
        if d < 0 or d > 9:
            break
        if n_significant < _MAX_SIGNIFICANT_DIGITS:
            if d != 0 or n_significant != 0:
                w = w * _TEN + np.uint64(d)
                n_significant += 1
            if fraction:
                q -= 1
        elif d != 0:
            return pos, False, 0.0
        elif not fraction:
            # A zero of the integer part beyond the kept digits scales the number.
            q += 1
        n_digits += 1
        pos += 1
    if n_digits == 0:
        return pos, False, 0.0
    if pos < end and (buf[pos] | 32) == 101:
        pos, ok, exponent = _parse_exponent(buf, pos + 1, end)
        if not ok:
            return pos, False, 0.0
        q += exponent
    if w == _ZERO:
        value = 0.0
    elif w <= _TWO_POW_53 and -22 <= q <= 22:
        value = np.float64(w)
        if q >= 0:
            value *= _EXACT_POWERS_OF_TEN[q]
        else:
            value /= _EXACT_POWERS_OF_TEN[-q]
    else:
        ok, pattern = _eisel_lemire(w, q)
        if not ok:
            return pos, False, 0.0
        bits[0] = pattern
        value = as_float[0]
    return pos, True, -value if negative else value


@njit(cache=True, nogil=True)
def _skip_blanks(buf, pos, end):
    """Skip spaces, tabs and a ``\\r`` before ``\\n``; a lone ``\\r`` (a line break to
    Python's universal newlines) is left for the caller to reject."""
    while pos < end:
        c = buf[pos]
        if c == _SPACE or c == _TAB:
            pos += 1
        elif c == _RETURN and (pos + 1 == end or buf[pos + 1] == _NEWLINE):
            pos += 1
        else:
            break
    return pos


@njit(cache=True, nogil=True)
def _ends_token(buf, pos, end):
    """Whether a token ends at ``pos``: end, blank, line end or comment."""
    if pos == end:
        return True
    c = buf[pos]
    return c == _SPACE or c == _TAB or c == _RETURN or c == _NEWLINE or c == _HASH


@njit(cache=True, nogil=True)
def _skip_comment(buf, pos, end):
    """Position after the line end of a comment, or -1 for a byte other than printable
    ASCII, tab or ``\\r\\n`` (decoding or line splitting is Python's to judge)."""
    while pos < end:
        c = buf[pos]
        pos += 1
        if c == _NEWLINE:
            return pos
        if c == _RETURN:
            if pos != end and buf[pos] != _NEWLINE:
                return -1
        elif (c < _SPACE and c != _TAB) or c >= 127:
            return -1
    return pos


@njit(cache=True, nogil=True)
def _parse_digits(buf, pos, end):
    """Plain ASCII digits at ``pos``: ``(value, number of digits, pos after)``; the value is
    only meaningful for at most 18 digits."""
    value = 0
    n = 0
    while pos < end:
        d = np.int64(buf[pos]) - 48
        if d < 0 or d > 9:
            break
        if n < _MAX_INDEX_DIGITS:
            value = value * 10 + d
        n += 1
        pos += 1
    return value, n, pos


# inline="always": the inner loop of parse_lines, cut out for reading; as a call it costs
# the parser measurably.
@njit(cache=True, nogil=True, inline="always")
def _parse_pairs(buf, pos, end, nnz, indices, values, max_index, bits, as_float):
    """Parse the ``index:value`` pairs (and ``qid:digits`` fields) of one line, from after
    its label to just after its end: ``(pos, nnz, ok)``.  The pairs are written from
    ``indices[nnz]`` and ``values[nnz]`` on; ``ok`` is False for a line
    :func:`parse_lines` leaves to Python, and ``pos`` and ``nnz`` are then meaningless."""
    previous = -1
    while True:
        pos = _skip_blanks(buf, pos, end)
        if pos == end:
            return pos, nnz, True
        c = buf[pos]
        if c == _NEWLINE or c == _HASH:
            pos = _skip_comment(buf, pos, end)
            return pos, nnz, pos >= 0
        if c == 113 and pos + 3 < end and buf[pos + 1] == 105 and buf[pos + 2] == 100 \
                and buf[pos + 3] == _COLON:
            _, n_digits, pos = _parse_digits(buf, pos + 4, end)
            if n_digits == 0 or n_digits > _MAX_INDEX_DIGITS or not _ends_token(buf, pos, end):
                return pos, nnz, False
            continue
        index, n_digits, pos = _parse_digits(buf, pos, end)
        if (n_digits == 0 or n_digits > _MAX_INDEX_DIGITS or pos == end
                or buf[pos] != _COLON or index <= previous or index > max_index):
            return pos, nnz, False
        pos, ok, value = _parse_number(buf, pos + 1, end, bits, as_float)
        if not ok or not _ends_token(buf, pos, end):
            return pos, nnz, False
        indices[nnz] = index
        values[nnz] = value
        nnz += 1
        previous = index


@njit(cache=True, nogil=True)
def parse_lines(buf, pos, end, row, nnz, labels, label_starts, indptr, indices, values,
                max_index):
    """Parse the LIBSVM lines of ``buf[pos:end]`` into preallocated CSR arrays.

    Row ``r`` gets its label in ``labels[r]``, the offset of the label's first byte in
    ``label_starts[r]``, its pairs in ``indices[indptr[r]:indptr[r + 1]]`` (as written) and
    ``values[...]``; the caller sets ``indptr[0]``.  Blank and comment-only lines give no row;
    ``#`` starts a comment, ``qid:digits`` fields are skipped, ``\\r\\n`` ends a line.

    Parameters
    ----------
    buf : ndarray of uint8
    pos : int
        Start of the first line to parse.
    end : int
        ``len(buf)`` or a position just after a ``\\n``.
    row, nnz : int
        Rows and pairs already written.
    labels : ndarray of float64
    label_starts : ndarray of int64
    indptr : ndarray of int64
    indices : ndarray of int64
    values : ndarray of float64
        Outputs, large enough for ``buf[pos:end]`` (see :func:`count_newlines_and_colons`).
    max_index : int
        Largest index accepted.

    Returns
    -------
    pos, row, nnz, status : int
        ``status`` 0: every line up to ``end`` was parsed (``pos == end``).  ``status`` 1:
        ``pos`` is the start of a line this kernel does not handle (malformed, or valid but
        beyond its exact fast paths: ``inf``, over 19 significant digits, an index with more
        than 18 digits or above ``max_index``, non-ASCII, a lone ``\\r`` …); every row before
        it is written and nothing of it.  The caller parses that line in Python and resumes
        after it.
    """
    bits = np.empty(1, dtype=np.uint64)
    as_float = bits.view(np.float64)
    while pos < end:
        line_start = pos
        row_nnz = nnz
        pos = _skip_blanks(buf, pos, end)
        if pos == end:
            break
        c = buf[pos]
        if c == _NEWLINE:
            pos += 1
            continue
        if c == _HASH:
            pos = _skip_comment(buf, pos, end)
            if pos < 0:
                return line_start, row, row_nnz, 1
            continue
        label_start = pos
        pos, ok, label = _parse_number(buf, pos, end, bits, as_float)
        if not ok or not _ends_token(buf, pos, end):
            return line_start, row, row_nnz, 1
        pos, nnz, ok = _parse_pairs(buf, pos, end, nnz, indices, values, max_index, bits,
                                    as_float)
        if not ok:
            return line_start, row, row_nnz, 1
        labels[row] = label
        label_starts[row] = label_start
        row += 1
        indptr[row] = nnz
    return pos, row, nnz, 0


def parse_buffer(buf, max_index):
    """Parse a whole buffer (tests' convenience): ``(labels, label_starts, indptr, indices,
    values)``, or ValueError naming the first line :func:`parse_lines` does not handle."""
    buf = np.frombuffer(buf, dtype=np.uint8) if isinstance(buf, bytes) else buf
    n_newlines, n_colons = count_newlines_and_colons(buf)
    labels = np.empty(n_newlines + 1)
    label_starts = np.empty(n_newlines + 1, dtype=np.int64)
    indptr = np.zeros(n_newlines + 2, dtype=np.int64)
    indices = np.empty(n_colons, dtype=np.int64)
    values = np.empty(n_colons)
    pos, row, nnz, status = parse_lines(buf, 0, len(buf), 0, 0, labels, label_starts, indptr,
                                        indices, values, max_index)
    if status:
        line = int(np.count_nonzero(buf[:pos] == _NEWLINE)) + 1
        raise ValueError(f"line {line} is not handled by the fast LIBSVM parser.")
    return labels[:row], label_starts[:row], indptr[:row + 1], indices[:nnz], values[:nnz]
