"""The one rule for defaults that fit the data: scaling, λ (or C) and m, and grids around them.

The command line, the library ('auto' values) and the app all start from these: the scaling
by the kind of data (:func:`default_scaling`), γ by the 'scale' rule
(:func:`snacks_core.kernels.functions.resolve_gamma`, which adapts by itself), λ = 0.02/n so that
C = 1/(2nλ) = 25 on any n (:func:`default_lam`) and m = 2√n within bounds, at least 30
landmarks a class for more than two classes (:func:`default_m`).  Grids and searches
centre their axes on these values (:func:`C_values_around_default`,
:func:`gamma_values_around`); a robustness grid's axes are :func:`grid_lam_values`,
:func:`grid_m_values` and :func:`grid_gamma_values`, for the app's Robustness page and
``snacks heatmap`` alike.

Only NumPy, SciPy and :mod:`snacks_core.solvers.objective` (NumPy alone) are imported here, so that
the readers of :mod:`snacks_core.datasets` can resolve ``scaling='auto'`` without pulling in
the estimators.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from snacks_core.solvers.objective import C_to_lam

# The number of landmarks m and the regularisation λ of a setting that names no data (the
# app's settings before a dataset is loaded); a dataset's own defaults are
# :func:`data_aware_defaults`.
DEFAULT_M = 50
DEFAULT_LAM = 1e-3
# λ = DEFAULT_LAM_TIMES_N / n (C = 1/(2nλ) = 25 on any n), and m = 2√n within
# DEFAULT_M_RANGE: measured on 17 real and synthetic sets (BENCHMARKS.md, "Defaults that
# learn"), where a fixed λ lets the hinge terms fade as n grows until the model predicts the
# majority class.
DEFAULT_LAM_TIMES_N = 0.02
DEFAULT_M_RANGE = (50, 500)
# More than two classes on more than two features: at least this many landmarks a class
# (within the range).  'balanced' sampling spreads m evenly over the classes, and 2√n alone
# left 7 a class on digits (m = 71, 10 classes), 17 on pendigits and 10 on a 26-class set.
# 30 a class cut the test error on digits from 3.70 to 2.16 % and on pendigits from 0.60 to
# 0.53 % (SVC(): 1.85 and 0.61 %) at 1.0-1.5x the fit time (BENCHMARKS.md, "Many classes").
# Two classes keep the range's 50: on small binary sets 300 landmarks did not help
# (a9a_small, a generated 10 %-positive set: one to seven test rows worse).
DEFAULT_M_PER_CLASS = 30
# On two features a Gaussian K_mm has numerical rank under 100 at any m (moons, spirals,
# circles, checkerboard at 50,000 rows: 88–99 dimensions kept at m = 300, the same test
# error from m = 50): more landmarks only cost time and hide the picture under stars.
DEFAULT_M_MAX_2D = 100
# Small sets: on at most SMALL_SET_ROWS training rows of more than two features every row
# is a landmark (up to the range's 500), and lam='auto' chooses C from SMALL_SET_C_VALUES by
# a SEARCH_FOLDS-fold cross-validation on the fit's embedding (model.small_sets).  On the 22
# real KEEL sets of 105-1,617 training rows (3 splits) the test error against SVC()'s went
# from a mean of -0.16 points (14 sets over +0.15, heart +4.53) to -1.37 (5 over), the fit
# from 0.4-7.5x SVC()'s milliseconds to 0.9-26x (BENCHMARKS.md, "Small sets: C from the
# data and every row a landmark").  A set is small too where its one-vs-one problems hold
# at most SMALL_SET_PAIR_ROWS rows in all, (K - 1)·n: two classes up to 15,000 rows (where
# the issue's time bar changes from 2x to 1x SVC()'s), three up to 7,500.  On 14 sets of
# 2,100-12,000 training rows this reaches (13 real), the same rule was better or level on
# every one (splice 7.70 -> 3.87 %, SVC() 3.41; ring 2.94 -> 2.30, SVC() 1.91) for
# 0.03-2.25x SVC()'s time, was 0.01-0.45x (BENCHMARKS.md, "Small sets up to 15,000 rows
# over the classes' pairs").
SMALL_SET_ROWS = 2000
SMALL_SET_PAIR_ROWS = 15_000
SMALL_SET_C_VALUES = (1.0, 5.0, 25.0)
# The C = 1/(2nλ) that grids centre on: the default C = 25 on the sliders' 1-2-5 steps.
DEFAULT_C_ON_STEPS = 20.0
# The share of the rows held out for testing when a dataset has no test part: the
# library's splits (split_dataset, drawn points), the command line's --test-size, the app's
# slider and a robustness grid without a test set.
DEFAULT_TEST_SIZE = 0.3
# The default search (snacks search without axes, the app's Auto-tune;
# model.search.search_around_defaults): γ at these factors of the 'scale' value against C
# in SEARCH_C_DECADES decades each side of the default C, by SEARCH_FOLDS-fold shuffled
# stratified CV with successive halving on a stratified subsample of at most
# SEARCH_MAX_ROWS rows at m = at most SEARCH_M, then at the largest γ tied with the best
# (and its C) the default m and 4m (at most SEARCH_MAX_M) while each lowers the CV error,
# the top rung scoring the next γ up as well (BENCHMARKS.md, 'Auto-tune', 'The search's
# survivors' and 'The search's γ step').
SEARCH_GAMMA_FACTORS = (0.1, 0.3, 1.0, 3.0, 10.0)
SEARCH_C_DECADES = 2
SEARCH_FOLDS = 3
SEARCH_MAX_ROWS = 40_000
SEARCH_M = 300
SEARCH_MAX_M = 1500
# On two classes, a choice scored at the ladder's top (short of every row) that lowered the
# CV error there by more than a standard error takes this many times the top's m (on up to
# 1.5x the rows searched, where that refit's embedding costs no more than the top rung's): the
# ladder was still gaining where its cost stopped it, and a rung of twice the top costs
# 3-4x the top's (on the NSW electricity set, 24,000 rows a fold, 11 s a fold at m = 3,000
# against 2.2 s at 1,500).  Measured on three seeded splits of the real two-class sets
# whose choice it grows (BENCHMARKS.md, 'Three real sets from scikit-multiflow'): NSW
# electricity 20.31 -> 20.04, 21.20 -> 21.17, 20.92 -> 20.61 % test error, w8a 1.37 ->
# 1.27, 1.38 -> 1.34, 1.38 -> 1.36 %, magic 11.38 -> 11.38 %.
# More than two classes grow so only where the top's landmarks leave more than
# RANK_UNEXPLAINED of the kernel unexplained: the real MNIST digits (41 % at m = 1,200,
# 4.07 -> 3.93 % test error), not letter (9 %), satimage (16 %), optdigits (19 %).
SEARCH_REFIT_M_FACTOR = 2
# The epoch budget of the default search's fits (at most the estimator's; the refit has
# the estimator's): a setting's CV error settles before its objective does.  On the UCI
# letter set at C = 200, where every column spends its 50 epochs, the 1,500 rung scored
# 4.44 % in 20 epochs against 4.51 % in 50, in half the time; with stage 1 at 20 epochs
# too, the search took 13.8 s against 18.5 s and chose C = 20 (2.43 % test error) where
# it chose C = 2,000 (2.60 %), the other real sets the same settings (BENCHMARKS.md, 'The
# ladder's epochs' and 'The search's γ step').
SEARCH_EPOCHS = 20
# Dense columns share one scale (default_scaling: used as they are, not standardised) when
# the median column spans at least this share of the range all the values lie in: 1.00 on
# digits' pixels and pendigits' coordinates, at most 0.76 on standardised sets and 0.38 or
# less on sets of mixed units (iris, wine, breast cancer).  On digits, standardising gave
# 2.28 % test error against 1.23 % as they are (SVC(): 1.85 and 1.54 %; 3 splits), on
# pendigits 0.51 against 0.52 % (BENCHMARKS.md, "Data on one scale").
SHARED_SCALE_SPAN = 0.9
# n_components: the default rule ('sqrt': default_m), and 'auto', which grows m from it by
# AUTO_M_GROWTH at a time while the held-out error improves by more than its standard error,
# up to AUTO_M_MAX landmarks (the largest m the app's slider offers) and n
# (model.landmark_growth; BENCHMARKS.md, "m from the data").
DEFAULT_N_COMPONENTS = "sqrt"
AUTO_M_GROWTH = 2
# More than two classes, at n_components='sqrt', wherever the landmarks are fewer than the
# rows (beyond a small set, and on a small set of more than 500 rows): the default m is
# doubled, at most RANK_M_DOUBLINGS times (and up to AUTO_M_MAX and n), while the Nyström
# embedding on its landmarks leaves more than RANK_UNEXPLAINED of the kernel's diagonal
# unexplained on the landmarks drawn after them (model.landmark_growth.rank_grown_m): K
# decision functions on a kernel whose rank the landmarks have not reached.  On the
# real MNIST digits (5,000 of them, 784 pixels, 10 classes) the default 300 landmarks left
# 37 % unexplained: 6.33 % mean test error over 3 splits against SVC()'s 5.04 %; at the
# 1,200 the rule reaches, 5.04 % in 0.67x SVC()'s time.  The real letter, covtype,
# pendigits, optdigits and satimage sets leave 3-10 % and keep their m (BENCHMARKS.md,
# "m from the kernel's rank").
RANK_UNEXPLAINED = 0.2
RANK_M_DOUBLINGS = 2
# More than two classes on many rows, at n_components='sqrt': after the rule above, m grows
# as 'auto' grows it (doubling while the held-out error falls by more than its standard
# error, up to AUTO_M_MAX) where the exact SVM's one-vs-one problems cost at least
# HELD_OUT_GROWTH_COST times the embedding at AUTO_M_MAX landmarks: Σ over the pairs of
# classes of (n_a + n_b)² kernel entries of d multiply-adds each (the exact SVM's one pass
# over its pairs' kernel rows) against n·AUTO_M_MAX².  Where a set has many rows in large
# pairs of classes its decision functions gain from more landmarks long after they explain
# the kernel's diagonal: the UCI covtype set (7 classes, 54 columns) at 80,000 training
# rows leaves 4-6 % unexplained at the default 500 landmarks, 23.62 % test error against
# SVC()'s 23.30 % (285 s); grown to 2,000, 20.61 % in 17 s; on all 464,809 training rows
# 22.66 % in 9.7 s against 18.86 % in 103 s.  On 26 small classes (UCI letter, 16,000
# rows: 8 · 10⁹ against the bar's 1.3 · 10¹¹) SVC() takes one second and the rule stays off.  The
# factor 2: SVC()'s seconds per unit of that sum ranged 0.3-2.9 · 10⁻¹⁰ on the sets
# measured, the growth's per n·AUTO_M_MAX² 0.54-0.82 · 10⁻¹⁰, so at the bar the growth
# costs 0.1-1.3x SVC()'s time, less as n grows (BENCHMARKS.md, "m from the held-out error
# on many rows").
HELD_OUT_GROWTH_COST = 2.0
# Two classes beyond the small sets' 2,000 rows grow too, as 'auto' grows them (from
# default_m, C = 25 not chosen: no rank rule first), where the rows are wide: at least this
# many features (a bag of words, a column a word).  On generated tf-idf text shaped like
# the text set (7,770 training rows x 8,315 words; Zipf word counts, a topic of 300
# words a class, two classes of 64 / 36 %) the default 500 landmarks (C by cross-
# validation) missed SVC() by up to 3.1 points, and so did 2,000 landmarks by 0.4 where a
# 7 % class is to be found (the project's text look-alike): grown by the held-out error
# they stayed within 0.36 points of SVC() (better on 6 of 8 draws) in 0.01-0.08x its time,
# and within 0.1 points of the defaults before on the 7 % class (BENCHMARKS.md, "Wide rows
# of two classes").  Narrower two-class sets keep their m: w8a (300 features) gained
# nothing from 'auto' at 2.9x the time, and its default fit is the engine's speed bar.
HELD_OUT_WIDE_FEATURES = 1000
# The range of γ a grid or the default search may reach (the app's γ slider spans it too).
# Down to 1e-8: raw 8-bit pixels used as they are (columns on one scale) have a small
# 'scale' γ, 2.1e-7 on MNIST's 784 pixels of 0-255, and the search looks a decade below
# it; from 1e-5 every γ the search tried there was 1e-5, 50 times 'scale' (10.2 % CV
# error against 5 % at the defaults).
GAMMA_RANGE = (1e-8, 1e3)
# A robustness grid's m axis runs from the default m / GRID_M_SPAN[0] to GRID_M_SPAN[1] × it:
# on real sets the good models lie there, and a grid from m = 5 spends its rows on cells
# that predict the majority class (BENCHMARKS.md, "Robustness grids around the defaults").
GRID_M_SPAN = (2, 4)
# The most landmarks a grid reaches: the largest m the app's slider offers.
GRID_M_MAX = 2000
AUTO_M_MAX = GRID_M_MAX
# γ from 1/100 to 100 times the 'scale' value.
GRID_GAMMA_SPAN = 100.0


def default_lam(n_train) -> float:
    """The regularisation λ = 0.02/n of ``n_train`` training rows (C = 1/(2nλ) = 25)."""
    return DEFAULT_LAM_TIMES_N / max(int(n_train), 1)


def default_m(n_train, n_features=None, n_classes=2) -> int:
    """m = 2√n landmarks, at least 50 and at most 500 (100 on two features or fewer), and
    at most n; more than two classes on more than two features get at least 30 landmarks
    a class (:data:`DEFAULT_M_PER_CLASS`, within the cap).

    Examples
    --------
    >>> default_m(1_257, 64), default_m(1_257, 64, n_classes=10), default_m(16_000, 16, 26)
    (71, 300, 500)
    """
    low, high = DEFAULT_M_RANGE
    if n_features is not None and n_features <= 2:
        high = DEFAULT_M_MAX_2D
    elif n_classes > 2:
        low = max(low, DEFAULT_M_PER_CLASS * int(n_classes))
    return int(min(n_train, high, max(low, round(2 * np.sqrt(n_train)))))


def is_small_set(n_train, n_classes=2) -> bool:
    """Whether a set of ``n_train`` training rows and ``n_classes`` classes is small: at
    most :data:`SMALL_SET_ROWS` rows, or at most :data:`SMALL_SET_PAIR_ROWS` rows in all
    over its one-vs-one problems, (K − 1)·n (each row is in K − 1 of the pairs).

    Examples
    --------
    >>> is_small_set(2_000, 26), is_small_set(15_000), is_small_set(15_001)
    (True, True, False)
    >>> is_small_set(7_500, 3), is_small_set(2_500, 10)
    (True, False)
    """
    pair_rows = (max(int(n_classes), 2) - 1) * n_train
    return n_train <= SMALL_SET_ROWS or pair_rows <= SMALL_SET_PAIR_ROWS


def grows_by_rank(n_components, sampling, n_train, n_classes, m=None) -> bool:
    """Whether a fit at ``n_components`` with landmarks drawn by ``sampling`` on
    ``n_train`` rows of ``n_classes`` classes doubles its m while the landmarks leave more
    than :data:`RANK_UNEXPLAINED` of the kernel unexplained: the default 'sqrt' on more
    than two classes, with the samplings whose draw of 4m rows costs what a draw of m does
    ('balanced', 'uniform'), beyond a small set (:func:`is_small_set`) and, where the
    fit's ``m`` is given, on a small set of more rows than its landmarks
    (:func:`default_fit_m`: every row up to 500; ``m`` < ``n_train``).  Where no fit's m
    is given (the app's sidebar, whose sliders start small sets elsewhere) small sets keep
    their m.

    On a small set it is the sets of many features that grow: on the UCI splice set (2,233
    training rows of 60 DNA letters one-hot, 3 classes) 500 landmarks leave 64 % of the
    kernel unexplained and 2,000 take the test error from 3.87 to 3.38 % (`SVC()` 3.41 %),
    while segment, vowel, vehicle and digits leave 1–7 % and keep their 500
    (BENCHMARKS.md, "m from the kernel's rank").

    Examples
    --------
    >>> grows_by_rank("sqrt", "balanced", 20_000, 3), grows_by_rank("sqrt", "balanced", 20_000, 2)
    (True, False)
    >>> grows_by_rank(300, "balanced", 3_500, 10), grows_by_rank("sqrt", "balanced", 1_500, 10)
    (False, False)
    >>> [grows_by_rank("sqrt", "balanced", n, 10, m=min(n, 500)) for n in (1_500, 400)]
    [True, False]
    >>> grows_by_rank("sqrt", "leverage", 3_500, 10), grows_by_rank("sqrt", "uniform", 3_500, 10)
    (False, True)
    """
    if not (isinstance(n_components, str) and n_components == "sqrt" and n_classes > 2
            and sampling in ("balanced", "uniform")):
        return False
    return not is_small_set(n_train, n_classes) or (m is not None and m < n_train)


def grows_by_held_out(n_components, sampling, class_counts, row_cost,
                      n_features=0) -> bool:
    """Whether a fit at ``n_components`` with landmarks drawn by ``sampling``, on classes of
    ``class_counts`` training rows of ``n_features`` features whose kernel entries cost
    ``row_cost`` multiply-adds each (the features of a dense row, the non-zeros of a
    sparse one), grows m by its held-out error.  More than two classes: after the rank
    rule (:func:`grows_by_rank`), where the exact SVM's one-vs-one kernel rows,
    Σ_(a<b) (n_a + n_b)² · ``row_cost``, cost at least :data:`HELD_OUT_GROWTH_COST` times
    the embedding at :data:`AUTO_M_MAX` landmarks, n · AUTO_M_MAX².  Two classes (the
    caller passes ``n_features``): at the default 'sqrt', with the
    samplings the rank rule takes, on more than :data:`SMALL_SET_ROWS` rows of at least
    :data:`HELD_OUT_WIDE_FEATURES` features, from 'auto''s start.

    Examples
    --------
    >>> covtype = [0.3646, 0.4876, 0.0615, 0.0047, 0.0163, 0.0299, 0.0353]
    >>> [grows_by_held_out("sqrt", "balanced", [n * p for p in covtype], 54)
    ...  for n in (40_000, 80_000)]
    [False, True]
    >>> grows_by_held_out("sqrt", "balanced", [16_000 / 26] * 26, 16)  # UCI letter
    False
    >>> grows_by_held_out(500, "balanced", [40_000] * 3, 54)
    False
    >>> [grows_by_held_out("sqrt", "balanced", [5_000, 2_770], 70, d) for d in (300, 8_315)]
    [False, True]
    """
    counts = np.asarray(class_counts, dtype=np.float64)
    n_train = float(counts.sum())
    if counts.shape[0] == 2:
        return (isinstance(n_components, str) and n_components == "sqrt"
                and sampling in ("balanced", "uniform") and n_train > SMALL_SET_ROWS
                and n_features >= HELD_OUT_WIDE_FEATURES)
    if not grows_by_rank(n_components, sampling, n_train, counts.shape[0]):
        return False
    pairs = (np.sum(np.square(counts[:, None] + counts[None, :]))
             - np.sum(np.square(2.0 * counts))) / 2.0
    return bool(pairs * row_cost >= HELD_OUT_GROWTH_COST * n_train * AUTO_M_MAX**2)


def default_fit_m(n_train, n_features=None, n_classes=2) -> int:
    """The m of a fit at the default ``n_components='sqrt'``: :func:`default_m`, except on
    a small set (:func:`is_small_set`) of more than two features, where every row is a
    landmark, up to 500 (the fit's kernel is then the exact one on up to 500 rows).  The
    app's sliders, the grids' m axes and ``n_components='auto'`` start from
    :func:`default_m`; the default search's m ladder from the estimator's m (this one).

    Examples
    --------
    >>> default_fit_m(400, 13), default_fit_m(1_257, 64, 10), default_fit_m(2_001, 64, 10)
    (400, 500, 300)
    >>> default_fit_m(5_000, 20), default_fit_m(15_001, 20)
    (500, 245)
    >>> default_fit_m(400, 2)
    50
    """
    if is_small_set(n_train, n_classes) and (n_features is None or n_features > 2):
        return int(min(n_train, DEFAULT_M_RANGE[1]))
    return default_m(n_train, n_features, n_classes)


def on_one_scale(minimum, maximum) -> bool:
    """Whether columns with these minima and maxima share one scale: more than two columns,
    and the median column spans at least :data:`SHARED_SCALE_SPAN` of the range all the
    values lie in (pixel intensities, pen coordinates).  Two columns are too few to tell a
    shared unit from a coincidence.

    Examples
    --------
    >>> import numpy as np
    >>> on_one_scale(np.zeros(64), np.r_[np.full(48, 16.0), np.arange(16.0)])  # pixels
    True
    >>> on_one_scale(np.zeros(3), np.array([90.0, 1.0, 2e5]))  # age, a rate, an income
    False
    """
    minimum, maximum = np.asarray(minimum, np.float64), np.asarray(maximum, np.float64)
    if minimum.shape[0] <= 2:
        return False
    span = float(np.max(maximum) - np.min(minimum))
    return bool(span > 0 and np.median(maximum - minimum) >= SHARED_SCALE_SPAN * span)


def default_scaling(X) -> str:
    """The feature scaling for the kind of data X is: 'standard' for dense X, 'none' for
    sparse X and for dense X whose columns share one scale (:func:`on_one_scale`).

    Dense columns on one scale (the pixels of an image, a pen's coordinates) are used as
    they are: their spreads are part of what they say, and standardising makes a rarely
    inked border pixel as loud as the centre of the picture.

    Sparse binary data (one-hot rows) are used as they are: standardising divides each
    column by its spread and so inflates the rare ones.  Sparse non-binary data such as
    tf-idf text are used as they are too, for the same reason (rare words become loud) and
    because their rows are already on one scale (BENCHMARKS.md, "Defaults for text").
    """
    if sp.issparse(X):
        return "none"
    X = np.asarray(X)
    if X.ndim == 2 and X.size and X.dtype.kind in "biuf" and on_one_scale(X.min(axis=0),
                                                                          X.max(axis=0)):
        return "none"
    return "standard"


def scaling_reason(scaling, X) -> str:
    """Why :func:`default_scaling` chose ``scaling`` for X, in words for the user (without
    another pass over X).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.tile(np.arange(17.0), (3, 1)).T
    >>> scaling_reason(default_scaling(X), X)
    'columns on one scale'
    """
    if sp.issparse(X):
        return "sparse rows"
    return "columns on one scale" if scaling == "none" else "columns on different scales"


def resolve_scaling(scaling, X) -> str:
    """``scaling`` itself, or :func:`default_scaling` of X for 'auto'."""
    return default_scaling(X) if scaling == "auto" else scaling


def data_aware_defaults(X, n_train, n_classes=2) -> dict:
    """Settings that learn on this data: ``scaling``, ``lam`` and ``n_components`` (m) for
    ``n_train`` training rows of ``n_classes`` classes of the kind of X (γ stays the
    'scale' rule).

    λ = 0.02/n keeps the hinge terms' weight C = 1/(2nλ) = 25 whatever n, and m = 2√n grows
    the model with the data at a cost that stays interactive (m ≤ 500; ≤ 100 on two
    features, where more adds nothing; at least 30 a class for more than two classes).
    The scaling is :func:`default_scaling`.

    Examples
    --------
    >>> import numpy as np
    >>> d = data_aware_defaults(np.zeros((10, 20)), 35_000)
    >>> d["scaling"], d["n_components"], float(f"{d['lam']:.3g}")
    ('standard', 374, 5.71e-07)
    >>> data_aware_defaults(np.zeros((10, 2)), 35_000)["n_components"]
    100
    """
    return {"scaling": default_scaling(X), "lam": default_lam(n_train),
            "n_components": default_m(n_train, X.shape[1], n_classes)}


def round_125(value) -> float:
    """The nearest (in log scale) of 1, 2 or 5 times a power of ten."""
    exponent = np.floor(np.log10(value))
    candidates = np.array([1.0, 2.0, 5.0, 10.0]) * 10.0**exponent
    return float(f"{candidates[np.argmin(np.abs(np.log(candidates / value)))]:.0e}")


def C_values_around_default(decades_each_side=3) -> tuple:
    """C = 1/(2nλ) values a decade apart, centred on the default C (on the 1-2-5 steps,
    :data:`DEFAULT_C_ON_STEPS`): a λ grid that moves with n as the default does.

    Examples
    --------
    >>> C_values_around_default(2)
    (0.2, 2.0, 20.0, 200.0, 2000.0)
    """
    return _C_decades(-decades_each_side, decades_each_side)


def _C_decades(low, high) -> tuple:
    return tuple(float(f"{DEFAULT_C_ON_STEPS * 10.0**k:.0e}") for k in range(low, high + 1))


def _log_steps(low, high, size, extra):
    """``size`` values from ``low`` to ``high``, evenly spaced on a log scale, and
    ``extra = (below, above)`` more at the same ratio beyond each end."""
    ratio = (high / low) ** (1.0 / (size - 1)) if size > 1 else 2.0
    return low * ratio ** np.arange(-extra[0], size + extra[1], dtype=np.float64)


# Decades by which a grid's λ axis moves toward small λ on sparse non-binary rows such as
# tf-idf text (:func:`grid_lam_values`).
SPARSE_TEXT_LAM_SHIFT = 1


def _sparse_text(X) -> bool:
    """Whether X is sparse with values other than 0 and 1 (tf-idf text, not one-hot rows)."""
    return X is not None and sp.issparse(X) and not np.isin(X.data, (0.0, 1.0)).all()


def grid_lam_values(n_train, size=5, extra=(0, 0), X=None) -> list:
    """A robustness grid's λ axis, ascending: ``size`` values a decade apart around the
    default λ = 0.02/n of ``n_train`` rows, and ``extra = (below, above)`` more decades
    beyond the smallest and the largest λ.

    The values are λ = 1/(2nC) for C a decade apart around :data:`DEFAULT_C_ON_STEPS`
    (:func:`C_values_around_default`; on an even ``size`` the extra decade is on the
    small-λ side, where real sets' good models lie), rounded to 1, 2 or 5 times a power of
    ten for readable axis labels.

    On sparse non-binary rows ``X`` (tf-idf text: unit-norm rows, nearly orthogonal, whose
    kernel values are small), models need a larger C: a grid of three values or more moves
    :data:`SPARSE_TEXT_LAM_SHIFT` decade toward small λ, keeping the default inside (the
    dense rule's largest λ was at the majority class's error on a real text set).

    Examples
    --------
    >>> grid_lam_values(10_000, 5)
    [2e-08, 2e-07, 2e-06, 2e-05, 0.0002]
    >>> grid_lam_values(10_000, 2, extra=(1, 0))
    [2e-08, 2e-07, 2e-06]
    >>> grid_lam_values(10_000, 5, X=sp.csr_matrix([[0.6, 0.8]]))
    [2e-09, 2e-08, 2e-07, 2e-06, 2e-05]
    """
    _check_axis(size, extra)
    shift = SPARSE_TEXT_LAM_SHIFT if size >= 3 and _sparse_text(X) else 0
    Cs = _C_decades(-((size - 1) // 2) - extra[1] + shift, size // 2 + extra[0] + shift)
    return sorted({round_125(C_to_lam(C, max(int(n_train), 1))) for C in Cs})


def grid_m_values(n_fit, n_features=None, size=5, extra=(0, 0), n_classes=2) -> list:
    """A robustness grid's m axis, ascending: ``size`` landmark counts evenly spaced on a
    log scale from :func:`default_m` / 2 to 4 × :func:`default_m` (:data:`GRID_M_SPAN`) for
    ``n_fit`` rows (those a cell trains on) of ``n_classes`` classes, and ``extra = (below,
    above)`` more at the same ratio beyond each end.

    Every value lies in [2, min(n_fit, :data:`GRID_M_MAX`)] (the server's limit on one
    model), rounded to two significant digits; values that coincide after clipping appear
    once, so an extension past a limit adds nothing.

    Examples
    --------
    >>> grid_m_values(20_000, 20)
    [140, 240, 400, 670, 1100]
    >>> grid_m_values(20_000, 20, extra=(0, 2))[-3:]
    [1100, 1900, 2000]
    """
    _check_axis(size, extra)
    n_fit = max(int(n_fit), 2)
    cap = min(n_fit, GRID_M_MAX)
    centre = default_m(n_fit, n_features, n_classes)
    low, high = GRID_M_SPAN
    values = _log_steps(max(2.0, centre / low), min(cap, high * centre), size, extra)
    return sorted({int(min(max(2.0, float(f"{v:.2g}")), cap)) for v in values})


def grid_gamma_values(gamma, size=5, extra=(0, 0)) -> list:
    """A robustness grid's γ axis, ascending: ``size`` values evenly spaced on a log scale
    from ``gamma`` / :data:`GRID_GAMMA_SPAN` to ``gamma`` × :data:`GRID_GAMMA_SPAN` (``gamma``
    the 'scale' value, or the one chosen), and ``extra = (below, above)`` more at the same
    ratio beyond each end, as :func:`gamma_values_around` rounds and bounds them.

    Examples
    --------
    >>> grid_gamma_values(0.5, 3)
    [0.005, 0.5, 50.0]
    """
    _check_axis(size, extra)
    return gamma_values_around(gamma, _log_steps(1.0 / GRID_GAMMA_SPAN, GRID_GAMMA_SPAN,
                                                 size, extra))


def _check_axis(size, extra):
    """Refuse a grid axis of fewer than one value or a negative extension."""
    if size < 1 or min(extra) < 0:
        raise ValueError(f"a grid axis needs size ≥ 1 and extra ≥ 0, got {size}, {extra}.")


def gamma_values_around(gamma, factors) -> list:
    """γ times each factor, rounded to 1, 2 or 5 times a power of ten and kept within
    :data:`GAMMA_RANGE`, sorted without repeats."""
    low, high = GAMMA_RANGE
    return sorted({min(max(round_125(gamma * factor), low), high) for factor in factors})
