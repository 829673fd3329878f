"""Points a user draws on a plane: their compact text form, their edits, and the dataset
they make.

A drawing is a list of ``(label, x1, x2)`` with ``label`` one of :data:`CLASSES` and both
coordinates on the plane [-1, 1]² in steps of :data:`STEP`.  Its text form is short enough
for a link: each point is its class letter followed by its coordinates in hundredths, so
``a-50,20b30,-45`` is a point of class A at (-0.5, 0.2) and one of class B at (0.3, -0.45).

The test points are fixed by the drawing itself, not drawn at random: within each class,
every k-th point added (k ≈ 1 / test fraction) is held out.  A point added or erased then
moves no other point between the training and the test part.
"""

from __future__ import annotations

import io
import re

import numpy as np

from snacks_core.datasets.dataset import Dataset, make_dataset
from snacks_core.model.defaults import DEFAULT_TEST_SIZE

CLASSES = ("A", "B")
PLANE = (-1.0, 1.0)
# Coordinates are kept in hundredths: the text form is exact, and a click is finer anyway.
STEP = 0.01
# Enough for any picture drawn by hand; the link stays under ~2,000 characters.
MAX_POINTS = 200
# A click erases the nearest point within this distance (a fortieth of the plane's side).
ERASE_RADIUS = 0.05
# A new drawing starts as two clusters a straight line can separate.
EXAMPLE_POINTS = ("a-60,40a-40,60a-55,15a-25,45a-35,30a-70,60"
                  "b40,-45b60,-20b25,-55b55,-60b35,-30b70,-40")

_POINT = re.compile(r"([ab])(-?\d{1,3}),(-?\d{1,3})")


def _hundredths(value) -> int:
    return int(round(float(value) / STEP))


def encode_points(points) -> str:
    """The text form of a drawing (its points rounded to the plane's hundredths).

    Examples
    --------
    >>> encode_points([("A", -0.5, 0.2), ("B", 0.3, -0.454)])
    'a-50,20b30,-45'
    """
    parts = []
    for label, x1, x2 in points:
        if label not in CLASSES:
            raise ValueError(f"a drawn point's class is one of {CLASSES}, not {label!r}.")
        parts.append(f"{label.lower()}{_hundredths(x1)},{_hundredths(x2)}")
    return "".join(parts)


def decode_points(text) -> list:
    """The drawing of a text form, as a list of ``(label, x1, x2)``; ValueError saying
    what is wrong with malformed text.

    Examples
    --------
    >>> decode_points("a-50,20b30,-45")
    [('A', -0.5, 0.2), ('B', 0.3, -0.45)]
    """
    text = str(text)
    points, position = [], 0
    for match in _POINT.finditer(text):
        if match.start() != position:
            break
        coordinates = (int(match.group(2)), int(match.group(3)))
        if any(abs(c) > round(PLANE[1] / STEP) for c in coordinates):
            raise ValueError(f"point {len(points) + 1} ({match.group(0)!r}) is off the plane: "
                             "coordinates are hundredths between -100 and 100.")
        points.append((match.group(1).upper(), coordinates[0] * STEP, coordinates[1] * STEP))
        position = match.end()
    if position != len(text):
        raise ValueError(f"unreadable drawing at character {position + 1} "
                         f"({text[position:position + 12]!r}): write each point as a or b "
                         "followed by two coordinates in hundredths, as in a-50,20b30,-45.")
    if len(points) > MAX_POINTS:
        raise ValueError(f"{len(points)} drawn points; a drawing holds at most {MAX_POINTS}.")
    return points


def add_point(points, label, x1, x2) -> list:
    """The drawing with a point of class ``label`` added at (x1, x2), clipped to the plane
    and rounded to its hundredths; ValueError when the drawing is full."""
    if label not in CLASSES:
        raise ValueError(f"a drawn point's class is one of {CLASSES}, not {label!r}.")
    if len(points) >= MAX_POINTS:
        raise ValueError(f"the drawing is full ({MAX_POINTS} points): erase some first.")
    low, high = PLANE
    return [*points, (label, *(round(_hundredths(min(max(float(v), low), high)) * STEP, 2)
                               for v in (x1, x2)))]


def erase_nearest(points, x1, x2, radius=ERASE_RADIUS) -> list:
    """The drawing without its point nearest to (x1, x2), when one lies within ``radius``;
    unchanged otherwise."""
    if not points:
        return list(points)
    coordinates = np.array([(p[1], p[2]) for p in points])
    distances = np.hypot(coordinates[:, 0] - x1, coordinates[:, 1] - x2)
    nearest = int(np.argmin(distances))
    if distances[nearest] > radius:
        return list(points)
    return [p for k, p in enumerate(points) if k != nearest]


def holdout_period(test_size) -> int:
    """k: every k-th point of a class is a test point (k = 1 / test fraction, rounded,
    at least 2 so that each class keeps training points)."""
    return max(2, int(round(1.0 / float(test_size))))


def _class_ranks(points) -> np.ndarray:
    """Each point's rank among the points of its class, in the order they were added."""
    labels = np.array([p[0] for p in points])
    rank = np.zeros(len(points), dtype=int)
    for label in CLASSES:
        rows = labels == label
        rank[rows] = np.arange(int(rows.sum()))
    return rank


def ordinal(k) -> str:
    """'2nd', '3rd', '4th', … for the text that says which points are held out."""
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def held_out_mask(points, test_size) -> np.ndarray:
    """True for the drawing's test points: the k-th, 2k-th, … point of each class, with
    k = :func:`holdout_period`."""
    period = holdout_period(test_size)
    return (_class_ranks(points) + 1) % period == 0


def missing_points(points, test_size) -> dict:
    """For each class, how many more points a drawing needs to train and test a model
    (each class needs k points: k − 1 to train on and one held out); empty when ready."""
    period = holdout_period(test_size)
    counts = {label: sum(p[0] == label for p in points) for label in CLASSES}
    return {label: period - count for label, count in counts.items() if count < period}


def drawn_dataset(text, test_size=DEFAULT_TEST_SIZE) -> Dataset:
    """The dataset of a drawing in its text form, its test part fixed by
    :func:`held_out_mask`; ValueError (saying how many points are missing) when a class has
    too few points.

    Examples
    --------
    >>> data = drawn_dataset(EXAMPLE_POINTS, test_size=0.3)
    >>> data.n_samples, data.X_test.shape[0], data.class_counts()
    (8, 4, {'A': 4, 'B': 4})
    """
    points = decode_points(text)
    missing = missing_points(points, test_size)
    if missing:
        raise ValueError(
            "the drawing needs " + " and ".join(f"{n} more point{'s' * (n > 1)} of class "
                                               f"{label}" for label, n in missing.items())
            + f" (every {ordinal(holdout_period(test_size))} point of a class is held out for "
            "the test error): add them on the Playground.")
    X = np.array([(p[1], p[2]) for p in points], dtype=np.float64)
    y = np.array([p[0] for p in points])
    test = held_out_mask(points, test_size)
    return make_dataset(X[~test], y[~test], "drawn points", X_test=X[test], y_test=y[test],
                        feature_names=("x1", "x2"),
                        description=f"{len(points)} points drawn on the plane [-1, 1]²")


def points_csv(points) -> str:
    """The drawing as CSV text (columns x1, x2, label), readable by the CSV loader."""
    out = io.StringIO()
    out.write("x1,x2,label\n")
    for label, x1, x2 in points:
        out.write(f"{x1:g},{x2:g},{label}\n")
    return out.getvalue()


def describe_points(points) -> str:
    """'7 points: 4 of class A, 3 of class B'."""
    counts = [sum(p[0] == label for p in points) for label in CLASSES]
    total = len(points)
    return (f"{total} point{'s' * (total != 1)}: "
            + ", ".join(f"{n} of class {label}" for label, n in zip(CLASSES, counts,
                                                                      strict=True)))
