"""Class labels read from a file: collected one code per row, then typed (integers, numbers
or text) without ever merging two distinct labels."""

from __future__ import annotations

import decimal
import re
from array import array

import numpy as np

from snacks_core.datasets.streams import MAX_CLASSES

# A label names a class; longer text is a wrong column or a crafted file.
MAX_LABEL_CHARS = 200


class LabelCodes:
    """One code per row and the distinct label texts (at most MAX_CLASSES of them)."""

    def __init__(self, name, max_classes=MAX_CLASSES):
        self.name, self.codes, self.texts = name, array("q"), {}
        self.max_classes = max_classes

    def __len__(self):
        return len(self.codes)

    def add(self, text, line):
        code = self.texts.get(text)
        if code is None:
            if len(text) > MAX_LABEL_CHARS:
                raise ValueError(f"{self.name}, line {line}: the label is {len(text):,} "
                                 "characters long; a label names a class. Check the label "
                                 "column.")
            if len(self.texts) >= self.max_classes:
                raise ValueError(f"{self.name}, line {line}: more than {self.max_classes:,} "
                                 "different labels; a classifier needs a column of class "
                                 "labels. Check the label column.")
            code = self.texts[text] = len(self.texts)
        self.codes.append(code)

    def values(self):
        classes = parse_labels(list(self.texts), self.name)
        return classes[np.frombuffer(self.codes, dtype=np.int64)]


def parse_labels(cells, name="data"):
    """Labels as integers (int64) when every one is an integer that fits, as float64 when
    every one is a number, as text otherwise; distinct numbers stay distinct or we refuse."""
    exact = []
    for cell in cells:
        try:
            exact.append(decimal.Decimal(cell.strip()))
        except (decimal.InvalidOperation, ValueError):
            return np.array(cells, dtype=str)
    if not all(value.is_finite() for value in exact):
        try:
            return np.array([float(cell) for cell in cells])
        except ValueError:
            return np.array(cells, dtype=str)
    if all(value.adjusted() < 19 and value == value.to_integral_value() for value in exact):
        integers = [int(value) for value in exact]
        if all(-2**63 <= value < 2**63 for value in integers):
            return np.array(integers, dtype=np.int64)
    values = np.array([float(value) for value in exact])
    seen = {}
    for text, value, number in zip(cells, exact, values, strict=True):
        if not np.isfinite(number) or (_INTEGER.fullmatch(text.strip())
                                       and decimal.Decimal(number) != value):
            raise ValueError(f"{name}: the label {text!r} is too large to keep exactly as a "
                             "64-bit number; use words or smaller numbers as labels.")
        other = seen.setdefault(number, (text, value))
        if other[1] != value:
            raise ValueError(f"{name}: the labels {other[0]!r} and {text!r} differ but are the "
                             "same 64-bit number, so their classes would merge; use words or "
                             "smaller numbers as labels.")
    return values


_INTEGER = re.compile(r"[+-]?[0-9]+")
