"""The explorer's teaching text: control help, figure captions and one-click lessons."""

from __future__ import annotations

from dataclasses import dataclass

HELP = {
    "dataset": "Which data to learn from. Synthetic 2-D sets show the decision boundary; "
               "upload your own CSV or LIBSVM file on the Data page.",
    "n_samples": "Number of generated points (train and test together).",
    "noise": "How much the generated points are jittered: more noise, more overlap between "
             "the classes, and a higher best possible error.",
    "n_features": "Number of columns of the make_classification-style data.",
    "positive_fraction": "Share of the +1 class: lower it to see why F1 matters on "
                         "imbalanced data.",
    "test_size": "Share of the rows held out to measure the test error.",
    "scaling": "Feature scaling fitted on the training rows: kernels compare distances, so "
               "features on different scales need it.",
    "pca2d": "Project data with more than two features onto its first two principal "
             "components, to draw a decision boundary. The model then learns from the "
             "projection only.",
    "kernel": "The similarity k(x, x') the SVM works with; rbf (Gaussian) is the usual choice.",
    "gamma": "Kernel width: larger γ means a narrower kernel (σ = 1/√(2γ)), so more wiggly "
             "boundaries that need more landmarks.",
    "degree": "Degree p of the polynomial kernel (γ⟨x, x'⟩ + c₀)^p.",
    "coef0": "Offset c₀ of the polynomial kernel.",
    "m": "Number m of Nyström landmarks: the model lives in the span of k(·, x̃ⱼ) for these m "
         "points. Too few and the boundary is too simple; more cost O(n·m) time and memory.",
    "sampling": "How landmarks are chosen: uniformly, by approximate ridge leverage scores "
                "(favours points the kernel sees as unusual), or by k-means++ seeding.",
    "lam": "Regularization λ of F(w) = (1/n) Σ hinge + λ‖w‖²: larger λ, smoother boundary and "
           "larger margin. LIBSVM's C = 1/(2nλ) is the same knob, inverted.",
    "solver": "Snacks: accelerated stochastic subgradient (restarts with shrinking steps). "
              "Pegasos: plain stochastic subgradient with step 1/(λt). LIBLINEAR: dual "
              "coordinate descent. LIBSVM: the exact kernel SVM, no Nyström (the reference).",
    "max_epochs": "Budget in passes over the training data (iterations for LIBLINEAR).",
    "class_weight": "'balanced' weighs each class's hinge terms by n / (2·count): helps the "
                    "minority class of imbalanced data.",
    "seed": "One seed for the data generation, the split, the landmarks and the solver: the "
            "same seed gives the same result.",
    "live": "Retrain on every change (results are cached, so going back is instant). Turn off "
            "for large data and click Train instead.",
}

SOLVER_LABELS = {"snacks": "Snacks (ASSG)", "pegasos": "Pegasos", "liblinear": "LIBLINEAR",
                 "libsvm": "LIBSVM (exact)"}


@dataclass(frozen=True)
class Lesson:
    """A preset: the settings it applies, the page it opens and what to look at."""

    title: str
    settings: dict
    page: str
    text: str


LESSONS = {
    "few_landmarks": Lesson(
        "Too few landmarks",
        {"dataset": "synthetic:checkerboard", "n_samples": 1000, "noise": 0.1, "gamma": 2.0,
         "m": 10, "lam": 1e-4, "solver": "snacks", "kernel": "rbf", "pca2d": False,
         "sampling": "uniform"},
        "playground",
        "With m = 10 landmarks the model can only combine 10 kernel bumps (the gold stars), "
        "far too few for 16 squares: the boundary is blurry and the error high. Raise m to "
        "100 in the sidebar and watch the checkerboard appear; the Robustness page shows "
        "the whole trade-off.",
    ),
    "large_lambda": Lesson(
        "λ too large",
        {"dataset": "synthetic:moons", "n_samples": 400, "noise": 0.2, "gamma": 1.0, "m": 50,
         "lam": 0.2, "solver": "snacks", "kernel": "rbf", "pca2d": False},
        "playground",
        "λ = 0.2 (C ≈ 0.009) makes the norm penalty dominate the hinge loss: the decision "
        "function stays close to zero, the margins f = ±1 swallow most points and the "
        "boundary underfits. Lower λ step by step and watch the margins tighten.",
    ),
    "race": Lesson(
        "Snacks vs Pegasos race",
        {"dataset": "synthetic:classification", "n_samples": 5000, "noise": 0.2,
         "n_features": 10, "gamma": 0.1, "m": 200, "lam": 1e-5, "kernel": "rbf",
         "conv_solvers": ("snacks", "pegasos"), "max_epochs": 50, "pca2d": False},
        "convergence",
        "The paper's Fig. 1: with a small λ Pegasos' step 1/(λt) starts huge and decays slowly, "
        "so its objective wanders; Snacks restarts from averaged iterates with a step and a "
        "ball that shrink geometrically, and reaches a small gap in a few epochs.",
    ),
    "bandwidth": Lesson(
        "Bandwidth and spectrum",
        {"dataset": "synthetic:spirals", "n_samples": 1000, "noise": 0.1, "gamma": 1.0,
         "m": 100, "kernel": "rbf", "spec_factors": (0.1, 1.0, 10.0), "pca2d": False},
        "spectrum",
        "A wide kernel (small γ) has a fast-decaying spectrum: a few landmarks capture it. A "
        "narrow kernel (large γ) spreads its energy over many eigenvalues, so the Nyström "
        "error falls slowly with m. The effective dimension at your λ is the number of "
        "landmarks worth paying for.",
    ),
}

CAPTIONS = {
    "boundary": "Colour is the decision function f(x): red where the model predicts the "
                "+1 class, blue for −1. The solid line is the boundary f = 0, dashed lines "
                "the margins f = ±1: training points inside them pay a hinge loss. Gold stars "
                "are the Nyström landmarks; crosses mark misclassified points.",
    "boundary_multiclass": "Shaded regions show the predicted class (one-vs-rest: the "
                           "largest of the per-class decision functions wins).",
}
