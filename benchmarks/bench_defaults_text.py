"""Defaults for text: the scaling rule of ``snacks_core.model.defaults`` on sparse data, against
LinearSVC with C chosen by 3-fold cross-validation, side by side in one run.

``PYTHONPATH=. python benchmarks/bench_defaults_text.py [--quick] [--seeds N]`` trains
``SnacksClassifier`` at the data-aware defaults (``defaults.data_aware_defaults``: λ = 0.02/n,
m = 2√n, rbf with γ 'scale') after each feature scaling (standard, i.e. each column divided
by its spread; none; unit-norm rows) and prints its test error and F1 of the positive class
beside LinearSVC's (C in 10^-2 … 10^2 chosen by 3-fold CV on the training rows), with the
difference in points and the fit-time ratio; ``--seeds N`` first repeats the comparison at
the defaults (and at C = 100) on N draws of the unit-norm set.

Data:

- a SYNTHETIC text set made here (no real corpus is used): 7,000 training and 3,000 test
  documents over 8,000 words, word counts drawn from a Zipf law (a document's length from
  a Poisson law of mean 80), 7 % positives, 15 % of whose words (2 % of a negative's) come
  from a topic of 300 mid-frequency words, Zipf-distributed among them; tf-idf
  (scikit-learn's TfidfTransformer, idf fitted on the training rows) with unit-norm rows,
  as text sets ship, and the same without the row norms (raw tf-idf), where row
  normalisation differs from none;
- w8a (``../shared/data/w8a``, real, sparse binary), when present: its rule must stay
  'none'.  ``--quick`` skips it.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.metrics import f1_score
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.preprocessing import Normalizer, StandardScaler
from sklearn.svm import LinearSVC

from snacks_core import SnacksClassifier
from snacks_core.model import defaults

W8A = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "w8a"
LINEAR_SVC_CS = (0.01, 0.1, 1.0, 10.0, 100.0)
N_WORDS, N_SIGNAL, MEAN_LENGTH, POSITIVE_FRACTION = 8000, 300, 80, 0.07
# The share of a document's words drawn from the topic's 300 words (Zipf among them too).
POSITIVE_TOPIC_SHARE, NEGATIVE_TOPIC_SHARE = 0.15, 0.02


def synthetic_text(n_train=7000, n_test=3000, seed=0):
    """Zipf word counts with a class signal in a few hundred words (see the module doc):
    the count matrices of the training and test documents, and their labels in {0, 1}."""
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    y = (rng.random(n) < POSITIVE_FRACTION).astype(int)
    base = 1.0 / (np.arange(N_WORDS) + 2.7)
    base /= base.sum()
    signal = rng.choice(np.arange(100, 3000), N_SIGNAL, replace=False)
    topic = np.zeros(N_WORDS)
    topic[signal] = 1.0 / (np.arange(N_SIGNAL) + 1.0)
    topic /= topic.sum()
    lengths = np.maximum(rng.poisson(MEAN_LENGTH, n), 5)
    rows, cols = [], []
    for label, share in ((0, NEGATIVE_TOPIC_SHARE), (1, POSITIVE_TOPIC_SHARE)):
        docs = np.flatnonzero(y == label)
        words = rng.choice(N_WORDS, lengths[docs].sum(), p=(1 - share) * base + share * topic)
        rows.append(np.repeat(docs, lengths[docs]))
        cols.append(words)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    counts = sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(n, N_WORDS))
    counts.sum_duplicates()
    return counts[:n_train], counts[n_train:], y[:n_train], y[n_train:]


def tfidf(train_counts, test_counts, norm):
    transformer = TfidfTransformer(norm=norm).fit(train_counts)
    return transformer.transform(train_counts).tocsr(), transformer.transform(test_counts).tocsr()


def scaled(X_train, X_test, scaling):
    """The training and test rows after a scaling: 'standard' (columns divided by their
    spread, no centring on sparse data, as split_dataset does), 'none', or 'rows' (unit
    norm)."""
    if scaling == "none":
        return X_train, X_test
    scaler = StandardScaler(with_mean=False) if scaling == "standard" else Normalizer()
    return scaler.fit_transform(X_train), scaler.transform(X_test)


def measure(model, X_train, X_test, y_train, y_test):
    """Test error (%), F1 of the positive class and fit seconds."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    pred = model.predict(X_test)
    return 100 * np.mean(pred != y_test), f1_score(y_test, pred, pos_label=1), seconds


def linear_svc_cv(X_train, X_test, y_train, y_test):
    search = GridSearchCV(LinearSVC(), {"C": list(LINEAR_SVC_CS)}, cv=3, n_jobs=1)
    error, f1, seconds = measure(search, X_train, X_test, y_train, y_test)
    return error, f1, seconds, search.best_params_["C"]


def compare(name, X_train, X_test, y_train, y_test, scalings):
    n = X_train.shape[0]
    rule = defaults.data_aware_defaults(X_train, n)
    ref_error, ref_f1, ref_seconds, ref_C = linear_svc_cv(X_train, X_test, y_train, y_test)
    print(f"\n### {name}: {n:,} training, {X_test.shape[0]:,} test rows × {X_train.shape[1]:,}"
          f", {100 * np.mean(y_train):.1f} % positives; the rule's scaling: {rule['scaling']}")
    print(f"LinearSVC, C = {ref_C:g} by 3-fold CV: test error {ref_error:.2f} %, "
          f"F1 {ref_f1:.3f}, {ref_seconds:.1f} s (CV included)\n")
    print("| scaling | m | λ (C) | test error % | − LinearSVC (points) | F1 | fit s | "
          "fit s / LinearSVC's CV |")
    print("|---|---|---|---|---|---|---|---|")
    # numba loads its compiled code for sparse rows at the first fit: not a time to show.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        SnacksClassifier(n_components=10, max_epochs=1).fit(X_train[:500], y_train[:500])
    for scaling in scalings:
        A_train, A_test = scaled(X_train, X_test, scaling)
        model = SnacksClassifier(n_components=rule["n_components"], lam=rule["lam"],
                                 random_state=0)
        error, f1, seconds = measure(model, A_train, A_test, y_train, y_test)
        mark = " (the rule)" if scaling == rule["scaling"] else ""
        print(f"| {scaling}{mark} | {rule['n_components']} | {rule['lam']:.3g} (25) | "
              f"{error:.2f} | {error - ref_error:+.2f} | {f1:.3f} | {seconds:.1f} | "
              f"{seconds / ref_seconds:.2f} |")


def over_seeds(seeds, Cs=(25, 100)):
    """The defaults' test error less LinearSVC-CV's on ``seeds`` draws of the synthetic
    unit-norm tf-idf set, at the default C and the other ``Cs``: how much one draw says."""
    print(f"\n### Over {seeds} draws of the SYNTHETIC unit-norm tf-idf set (m, λ, γ the "
          "defaults but C)\n")
    print("| seed | LinearSVC-CV error % | " + " | ".join(f"C = {C} − LinearSVC" for C in Cs)
          + " |")
    print("|---" * (len(Cs) + 2) + "|")
    differences = []
    for seed in range(seeds):
        train_counts, test_counts, y_train, y_test = synthetic_text(seed=seed)
        X_train, X_test = tfidf(train_counts, test_counts, "l2")
        reference = linear_svc_cv(X_train, X_test, y_train, y_test)[0]
        row = []
        for C in Cs:
            model = SnacksClassifier(C=C, random_state=0).fit(X_train, y_train)
            row.append(100 * np.mean(model.predict(X_test) != y_test) - reference)
        differences.append(row)
        print(f"| {seed} | {reference:.2f} | " + " | ".join(f"{d:+.2f}" for d in row) + " |")
    print("| mean | | " + " | ".join(f"{d:+.2f}" for d in np.mean(differences, axis=0))
          + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="skip w8a")
    parser.add_argument("--seeds", type=int, default=0,
                        help="also this many draws of the unit-norm set at C = 25 and 100")
    args = parser.parse_args()
    if args.seeds:
        over_seeds(args.seeds)
    train_counts, test_counts, y_train, y_test = synthetic_text()
    for norm, label in (("l2", "unit-norm rows"), (None, "raw, rows not normalised")):
        X_train, X_test = tfidf(train_counts, test_counts, norm)
        compare(f"SYNTHETIC tf-idf text, {label}", X_train, X_test, y_train, y_test,
                ("standard", "none", "rows"))
    if not args.quick and W8A.exists():
        X, y = load_svmlight_file(str(W8A))
        X_train, X_test, y_train, y_test = train_test_split(
            X.tocsr(), (y > 0).astype(int), test_size=0.3, random_state=0, stratify=y)
        compare("w8a (real, sparse binary; 30 % test, stratified, seed 0)", X_train, X_test,
                y_train, y_test, ("standard", "none"))


if __name__ == "__main__":
    main()
