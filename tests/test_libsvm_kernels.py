"""The numba LIBSVM kernels against a plain-Python reference parser and ``float()``.

Oracles: ``float(token)`` (correctly rounded) for every number, bit for bit; a reference
parser (``str.split``, ``float``, ``int``) for whole files, with the lines the kernel hands
back parsed by the reference as the real driver does; ``sklearn.datasets.load_svmlight_file``
for one file.  Hypothesis draws files, digit strings and doubles.
"""

import io
import math
import struct
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_svmlight_file

from snacks_core.datasets._libsvm_kernels import (
    count_newlines_and_colons,
    parse_buffer,
    parse_lines,
)

FUZZ = settings(max_examples=150, deadline=None, derandomize=True)
MAX_INDEX = 50


def reference_line(line, max_index=MAX_INDEX):
    """``(label, offset of the label, [(index, value), …])`` of one line, or None if it has
    no row; ValueError for anything the format does not allow."""
    content = line.split(b"#", 1)[0].decode("ascii")
    fields = content.split()
    if not fields:
        return None
    label = float(fields[0])
    pairs = []
    previous = -1
    for field in fields[1:]:
        key, sep, value = field.partition(":")
        if key == "qid" and sep:
            continue
        index, number = int(key), float(value)
        if not (key.isdigit() and previous < index <= max_index and math.isfinite(number)):
            raise ValueError(f"bad field {field!r}")
        pairs.append((index, number))
        previous = index
    if not math.isfinite(label):
        raise ValueError(f"bad label {fields[0]!r}")
    return label, len(content) - len(content.lstrip()), pairs


def reference_parse(text, max_index=MAX_INDEX):
    """``(labels, label_starts, indptr, indices, values)`` of a whole text."""
    labels, label_starts, indptr, indices, values = [], [], [0], [], []
    offset = 0
    for line in text.split(b"\n"):
        row = reference_line(line, max_index)
        if row is not None:
            labels.append(row[0])
            label_starts.append(offset + row[1])
            indices += [index for index, _ in row[2]]
            values += [value for _, value in row[2]]
            indptr.append(len(indices))
        offset += len(line) + 1
    return (np.array(labels, dtype=np.float64), np.array(label_starts, dtype=np.int64),
            np.array(indptr, dtype=np.int64), np.array(indices, dtype=np.int64),
            np.array(values, dtype=np.float64))


def allocate(buf):
    n_newlines, n_colons = count_newlines_and_colons(buf)
    return (np.empty(n_newlines + 1), np.empty(n_newlines + 1, dtype=np.int64),
            np.zeros(n_newlines + 2, dtype=np.int64), np.empty(n_colons, dtype=np.int64),
            np.empty(n_colons))


def parse_with_fallback(text, max_index=MAX_INDEX, pieces=(None,)):
    """Parse like the real driver: the kernel over each piece (ends at line starts), every
    line it hands back by :func:`reference_line`.  Returns the arrays and those lines."""
    buf = np.frombuffer(text, dtype=np.uint8)
    labels, label_starts, indptr, indices, values = allocate(buf)
    pos = row = nnz = 0
    handed_back = []
    for end in pieces:
        end = len(buf) if end is None else end
        while True:
            pos, row, nnz, status = parse_lines(buf, pos, end, row, nnz, labels, label_starts,
                                                indptr, indices, values, max_index)
            if status == 0:
                assert pos == end
                break
            line_end = text.find(b"\n", pos, end) + 1 or end
            handed_back.append(text[pos:line_end])
            parsed = reference_line(text[pos:line_end].rstrip(b"\n"), max_index)
            if parsed is not None:
                labels[row], label_starts[row] = parsed[0], pos + parsed[1]
                for index, value in parsed[2]:
                    indices[nnz], values[nnz] = index, value
                    nnz += 1
                row += 1
                indptr[row] = nnz
            pos = line_end
    arrays = labels[:row], label_starts[:row], indptr[:row + 1], indices[:nnz], values[:nnz]
    return arrays, handed_back


def assert_same(actual, expected):
    for a, e in zip(actual, expected, strict=True):
        assert a.dtype == e.dtype and a.shape == e.shape
        assert np.array_equal(a.view(np.uint64) if a.dtype == np.float64 else a,
                              e.view(np.uint64) if e.dtype == np.float64 else e)


def significant_digits(token):
    """Significant digits of a decimal token, trailing zeros excluded."""
    mantissa = token.lstrip("+-").lower().split("e")[0].replace(".", "")
    return len(mantissa.strip("0"))


def parse_one(token):
    """Status and (label, value) of the line ``token 1:token``."""
    buf = np.frombuffer(f"{token} 1:{token}\n".encode(), dtype=np.uint8)
    labels, label_starts, indptr, indices, values = allocate(buf)
    pos, row, nnz, status = parse_lines(buf, 0, len(buf), 0, 0, labels, label_starts, indptr,
                                        indices, values, MAX_INDEX)
    assert (status, pos, row, nnz) in ((0, len(buf), 1, 1), (1, 0, 0, 0))
    return status, labels[0], values[0]


def check_number(token, must_accept):
    status, label, value = parse_one(token)
    expected = float(token)
    if not math.isfinite(expected):
        assert status == 1
        return
    if must_accept:
        assert status == 0, token
    if status == 0:
        bits = struct.pack("<d", expected)
        assert struct.pack("<d", label) == bits, token
        assert struct.pack("<d", value) == bits, token


# ---- files ----

_FORMATS = [repr, "%.17g".__mod__, "%.18e".__mod__, "%g".__mod__, "%.3f".__mod__]
numbers = st.one_of(
    st.builds(lambda x, form: form(x), st.floats(allow_nan=False, allow_infinity=False),
              st.sampled_from(_FORMATS)),
    st.integers(-10**6, 10**6).map(str),
    st.integers(0, 10**6).map(lambda i: f"+{i}"),
    st.integers(0, 999).map(lambda i: f".{i}"),
    st.integers(0, 999).map(lambda i: f"-{i}."),
    st.builds(lambda m, e, mark: f"{m}{mark}{e}", st.integers(-999, 999),
              st.integers(0, 30), st.sampled_from(["e", "E", "e+", "E-", "e-"])),
)
labels_strategy = st.one_of(st.sampled_from(["+1", "-1", "1", "0", "3", "1e30", "0.5", "-0"]),
                            numbers)
blanks = st.sampled_from([" ", "\t", "  ", " \t "])


@st.composite
def data_lines(draw):
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from(["", "   ", "# a comment", "\t# x: 1:2", " \t"]))
    indices = sorted(draw(st.sets(st.integers(0, MAX_INDEX), max_size=8)))
    fields = [draw(labels_strategy)]
    if draw(st.integers(0, 9)) == 0:
        fields.append(f"qid:{draw(st.integers(0, 10**6))}")
    fields += [f"{index}:{draw(numbers)}" for index in indices]
    line = draw(st.sampled_from(["", " ", "\t"])) + "".join(
        field + draw(blanks) for field in fields[:-1]) + fields[-1]
    if draw(st.integers(0, 4)) == 0:
        line += draw(st.sampled_from([" ", "#", "  # comment 1:2"]))
    return line


@st.composite
def files(draw):
    lines = draw(st.lists(data_lines(), max_size=30))
    text = "".join(line + draw(st.sampled_from(["\n", "\r\n"])) for line in lines)
    if draw(st.booleans()):
        text += draw(data_lines())
    return text.encode()


@FUZZ
@given(files())
def test_generated_files_match_reference(text):
    """Bit-identical arrays; only lines with over 19 significant digits go to Python."""
    actual, handed_back = parse_with_fallback(text)
    assert_same(actual, reference_parse(text))
    for line in handed_back:
        tokens = [t.partition(b":")[2] or t for t in line.split(b"#")[0].split()]
        assert max(significant_digits(t.decode()) for t in tokens) > 19, line


@FUZZ
@given(files(), st.data())
def test_pieces_parse_like_the_whole(text, data):
    """Threads parse pieces that end at line starts: the counters carry over."""
    starts = [0] + [i + 1 for i, byte in enumerate(text) if byte == ord("\n")]
    middle = data.draw(st.sampled_from(starts))
    actual, _ = parse_with_fallback(text, pieces=(middle, None))
    assert_same(actual, reference_parse(text))


@FUZZ
@given(st.binary(max_size=200))
def test_count_newlines_and_colons(data):
    buf = np.frombuffer(data, dtype=np.uint8)
    assert count_newlines_and_colons(buf) == (data.count(b"\n"), data.count(b":"))


def test_layout_comments_qid_blank_lines_and_line_ends():
    text = (b"# header\n\n  \r\n+1 qid:3 1:0.5\t3:-2e-3 # note 7:1\r\n"
            b"\t-1\n0 2:.5 qid:4 4:5.#x\n   #\n3.5 10:1e3")
    labels, label_starts, indptr, indices, values = parse_buffer(text, MAX_INDEX)
    assert labels.tolist() == [1.0, -1.0, 0.0, 3.5]
    assert label_starts.tolist() == [text.index(b"+1"), text.index(b"-1"),
                                     text.index(b"0 2"), text.index(b"3.5")]
    assert indptr.tolist() == [0, 2, 2, 4, 5]
    assert indices.tolist() == [1, 3, 2, 4, 10]
    assert values.tolist() == [0.5, -2e-3, 0.5, 5.0, 1000.0]
    assert_same(parse_buffer(text, MAX_INDEX), reference_parse(text))


def test_negative_zero_and_empty_buffer():
    labels, _, _, _, values = parse_buffer(b"-0 1:-0 2:-0.0e5 3:0e999\n", MAX_INDEX)
    assert math.copysign(1, labels[0]) == -1
    assert [math.copysign(1, v) for v in values] == [-1, -1, 1]
    assert [a.size for a in parse_buffer(b"", MAX_INDEX)] == [0, 0, 1, 0, 0]


@pytest.mark.parametrize("line", [
    b"1 1:inf", b"1 1:nan", b"inf 1:1", b"1 1:1_0", b"x 1:1", b"1 2:1 1:3", b"1 1:1 1:2",
    b"1 a:1", b"1 1:", b"1 :1", b"1 " + b"1" * 19 + b":1", b"1 51:1", b"1 1:1e400",
    b"1 1:-1e400", b"1e400 1:1", b"1:1", b"1 1:1:2", b"1 -1:2", b"1 1:.", b"1 1:1e",
    b"1 1:1e+", b"1 1:--1", b"1 1:0x10", b"1 1:1.2.3", b"1 1:2\r2:3", b"\r1 1:2",
    b"1 1:5 # caf\xc3\xa9", b"1 1:1\x0b", b"1 1:\xef\xbc\x91", b"1 qid:x 1:1", b"1 qid: 1:1",
    b"1 1:1.00000000000000000001", b"1 1:1 # a\rb", b"\xef\xbb\xbf1 1:1", b"1 1:1e-99999x",
])
def test_hands_back_exactly_the_line_it_does_not_handle(line):
    before, after = b"1 1:1\n", b"\n3 1:2\n"
    text = before + line + after
    buf = np.frombuffer(text, dtype=np.uint8)
    labels, label_starts, indptr, indices, values = allocate(buf)
    pos, row, nnz, status = parse_lines(buf, 0, len(buf), 0, 0, labels, label_starts, indptr,
                                        indices, values, MAX_INDEX)
    assert (pos, row, nnz, status) == (len(before), 1, 1, 1)
    assert indptr[1] == 1 and values[0] == 1.0
    resume = len(before) + len(line) + 1
    pos, row, nnz, status = parse_lines(buf, resume, len(buf), row, nnz, labels, label_starts,
                                        indptr, indices, values, MAX_INDEX)
    assert (pos, row, nnz, status) == (len(buf), 2, 2, 0)
    assert labels[1] == 3.0 and label_starts[1] == resume
    with pytest.raises(ValueError, match="line 2 "):
        parse_buffer(text, MAX_INDEX)


def test_index_limits():
    eighteen = b"9" * 18
    assert parse_buffer(b"1 " + eighteen + b":1", 10**18)[3].tolist() == [10**18 - 1]
    assert parse_buffer(b"1 0:1 007:2", 7)[3].tolist() == [0, 7]


# ---- numbers ----

@FUZZ
@given(st.text("0123456789", min_size=1, max_size=25), st.integers(0, 25),
       st.integers(-330, 310), st.sampled_from(["", "-", "+"]),
       st.sampled_from(["e", "E", "e+"]))
def test_digit_strings_are_correctly_rounded(digits, point, exponent, sign, mark):
    point = min(point, len(digits))
    mantissa = f"{digits[:point]}.{digits[point:]}" if point < len(digits) else digits
    token = f"{sign}{mantissa}{mark}{exponent}".replace("e+-", "e-")
    check_number(token, must_accept=significant_digits(token) <= 19)


doubles = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(0, 2**64 - 1).map(lambda b: struct.unpack("<d", struct.pack("<Q", b))[0])
    .filter(math.isfinite),
    st.floats(min_value=0, max_value=1e-300, allow_subnormal=True),
)


@FUZZ
@given(doubles, st.sampled_from([repr, "%.17g".__mod__, "%.18e".__mod__, "%.16e".__mod__]))
def test_printed_doubles_read_back_exactly(x, form):
    check_number(form(x), must_accept=True)


@FUZZ
@given(st.integers(2**52, 2**70), st.integers(0, 3))
def test_halfway_cases_round_to_even(m, halvings):
    """Exact decimal forms of m / 2**k: many lie halfway between two doubles."""
    token = format(Decimal(m) / Decimal(2**halvings), "f")
    check_number(token, must_accept=significant_digits(token) <= 19)


@pytest.mark.parametrize("token", [
    "0.1", "1e23", "9007199254740993", "9007199254740995", "4503599627370496.5",
    "4503599627370497.5", "18446744073709551615", "2.2250738585072011e-308",
    "2.2250738585072012e-308", "2.2250738585072014e-308", "4.9406564584124654e-324",
    "2.4703282292062327e-324", "2.4703282292062328e-324", "1.7976931348623157e308",
    "1.7976931348623158e308", "1.7976931348623159e308", "8.98846567431158e307", "1e-400",
    "-1e-400", "0e999999999999", "7.2057594037927933e16", "0.30000000000000004",
    "3.0000000000000000000000000e-1", "1" + "0" * 30, "0." + "0" * 30 + "1", "5e-324",
    "1e-330", "-9.99e-330", "1e-342", "1e-343", "9999999999999999999e-343", "2e-324", "3e-324",
])
def test_hard_numbers(token):
    check_number(token, must_accept=significant_digits(token) <= 19)


# ---- against sklearn ----

def test_matches_sklearn_load_svmlight_file():
    rng = np.random.default_rng(0)
    lines = []
    for row in range(60):
        indices = np.flatnonzero(rng.random(20) < 0.4) + 1
        pairs = " ".join(f"{j}:{float(rng.standard_normal() * 10.0**rng.integers(-5, 5))!r}"
                         for j in indices)
        lines.append(f"{'+1' if row % 2 else '-1'} {pairs}")
    text = "\n".join(lines).encode()
    X, y = load_svmlight_file(io.BytesIO(text), n_features=20, zero_based=False)
    labels, _, indptr, indices, values = parse_buffer(text, 20)
    assert np.array_equal(y, labels)
    assert np.array_equal(X.indptr, indptr)
    assert np.array_equal(X.indices, indices - 1)
    assert np.array_equal(X.data.view(np.uint64), values.view(np.uint64))
