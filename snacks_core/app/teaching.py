"""The explorer's teaching text: control help, figure captions and one-click lessons."""

from __future__ import annotations

from dataclasses import dataclass

from snacks_core.app.explorer import MAX_UPLOAD_MB
from snacks_core.model.defaults import (
    DEFAULT_LAM_TIMES_N,
    GRID_GAMMA_SPAN,
    GRID_M_MAX,
    GRID_M_SPAN,
    SEARCH_C_DECADES,
    SEARCH_FOLDS,
    SEARCH_MAX_M,
    SEARCH_MAX_ROWS,
    C_values_around_default,
)

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
               "features on different scales need it. By default, features already on one "
               "scale (pixels) and sparse rows are used as they are.",
    "pca2d": "Project data with more than two features onto its first two principal "
             "components, to draw a decision boundary. The model then learns from the "
             "projection only.",
    "kernel": "The similarity k(x, x') the SVM works with; rbf (Gaussian) is the usual choice.",
    "gamma_scale": "Use scikit-learn's rule γ = 1/(d · Var X), which adapts to the number and "
                   "scale of the features. Turn off to set γ by hand.",
    "gamma": "Kernel width: larger γ means a narrower kernel (σ = 1/√(2γ)), so more wiggly "
             "boundaries that need more landmarks.",
    "degree": "Degree p of the polynomial kernel (γ⟨x, x'⟩ + c₀)^p.",
    "coef0": "Offset c₀ of the polynomial kernel.",
    "m": "Number m of Nyström landmarks: the model lives in the span of k(·, x̃ⱼ) for these m "
         "points. Too few and the boundary is too simple; more cost O(n·m) time and memory.",
    "sampling": "How landmarks are chosen: balanced (uniformly within each class, the same "
                "number per class, so a rare class gets its share), uniformly over all rows "
                "(the Snacks paper's choice), by approximate ridge leverage scores (favours "
                "points the kernel sees as unusual), or by k-means++ seeding.",
    "lam": "Regularization λ of F(w) = (1/n) Σ hinge + λ‖w‖²: larger λ, smoother boundary and "
           "larger margin. LIBSVM's C = 1/(2nλ) is the same knob, inverted. Each dataset "
           "starts at λ ≈ 0.02/n (C ≈ 25): a fixed λ would weigh the hinge terms less and "
           "less as n grows.",
    "reg_by": "Set the regularization as λ (the Snacks paper's, on the averaged hinge loss) "
              "or as C (LIBSVM's and scikit-learn's SVC, on the summed hinge loss); the other "
              "one is shown as derived, C = 1/(2nλ).",
    "C": "C of F(w) = ½‖w‖² + C Σ hinge (LIBSVM, scikit-learn's SVC): larger C, fewer "
         "margin violations, a boundary that follows the data more closely. The model "
         "trains with λ = 1/(2nC).",
    "solver": "Snacks: accelerated stochastic subgradient (restarts with shrinking steps). "
              "Pegasos: plain stochastic subgradient with step 1/(2λt). LIBLINEAR: dual "
              "coordinate descent. LIBSVM: the exact kernel SVM, no Nyström (the reference).",
    "max_epochs": "Budget in passes over the training data (iterations for LIBLINEAR).",
    "class_weight": "'balanced' weighs each class's hinge terms by n / (2·count): helps the "
                    "minority class of imbalanced data.",
    "seed": "One seed for the data generation, the split, the landmarks and the solver: the "
            "same seed gives the same result.",
    "conv_solvers": "Solvers to overlay; all run on the same embedding with the same λ, so "
                    "they minimise the same F(w).",
    "conv_axis": "Iterations count stochastic steps (one per row; LIBLINEAR counts outer "
                 "passes), epochs count passes over the data, time is wall time without "
                 "the evaluation of the checkpoints.",
    "spec_factors": "Bandwidths to compare, as multiples of the γ chosen in the sidebar.",
    "spec_max_m": "Number of landmarks of the spectrum, and the largest m of the error curve.",
    "d_eff": "Σ μᵢ/(μᵢ + mλ) over the eigenvalues μᵢ of K_mm: roughly how many directions "
             "the regularised SVM can use at this λ. m well above d_eff is wasted work; m "
             "below it loses accuracy.",
    "rob_grid": "m × λ: the Snacks paper's Fig. 2. γ × λ: the classic LIBSVM grid search "
                "(and the HSS paper's (h, C) maps).",
    "rob_size": "Values per axis, log-spaced around the data-aware defaults: λ a decade "
                f"apart around {DEFAULT_LAM_TIMES_N:g}/n (C = "
                f"{1 / (2 * DEFAULT_LAM_TIMES_N):g}), m from 1/{GRID_M_SPAN[0]} to "
                f"{GRID_M_SPAN[1]} times the default m (at most the rows a cell trains on, "
                f"and {GRID_M_MAX}), γ from 1/{GRID_GAMMA_SPAN:g} to {GRID_GAMMA_SPAN:g} "
                "times the sidebar's γ. When the best cell is on an edge, the page offers "
                "to extend the grid that way.",
    "rob_seeds": "Fits per cell with different seeds (landmarks and solver): the spread shows "
                 "how much the result depends on luck.",
    "rob_select": "Cross-validation scores each cell on held-out parts of the training "
                  "rows and chooses without the test rows, which then measure the chosen "
                  "model once. Test error scores each cell on the test rows: choosing the "
                  "lowest one flatters it (the page measures by how much).",
    "auto_tune": f"The library's default search, as `snacks search` runs it: "
                 f"{SEARCH_FOLDS}-fold shuffled stratified cross-validation on the training "
                 f"rows (at most {SEARCH_MAX_ROWS:,} of them), γ around the 'scale' rule "
                 f"against C from {min(C_values_around_default(SEARCH_C_DECADES)):g} to "
                 f"{max(C_values_around_default(SEARCH_C_DECADES)):,g} (successive halving), "
                 f"then, at the largest γ within a standard error of the best, m as set "
                 f"and 4× (at most {SEARCH_MAX_M:,}) while more landmarks lower the CV error. "
                 "The best setting goes "
                 "into the sidebar and is trained at once on every training row. The test "
                 "rows are not used.",
    "watch_learning": "Replay the training: the decision boundary at each checkpoint the "
                      "solver recorded, with the test error beside it.",
    "paper_table": "Which of the paper's Tables III–VII to show; each is one dataset.",
    "cmp_solvers": "Solvers in the table; each is trained once (cached) with the sidebar's "
                   "settings.",
    "upload": f"Up to {MAX_UPLOAD_MB} MB, any file name (.csv, .t, .trn, .scale, none…): the "
              "format is detected from the content, gzip/bz2/xz included. CSV: comma, "
              "semicolon or tab separated, optional header, one label column (numbers or "
              "words). LIBSVM: 'label index:value …' per line.",
    "upload_label": "The column holding the class labels; every other column must be numeric.",
    "f1": "Harmonic mean of precision and recall of one class: by default the minority class "
          "of the training labels (F1 of a 90 % majority class says little); the macro "
          "average over classes for multiclass data.",
    "embedding_time": "Landmark selection, K_mm eigendecomposition and Z = K_nm K_mm^{-1/2} "
                      "(for ADMM: compressing and factorising the kernel).",
    "objective": "F(w) = (1/n) Σ hinge + λ‖w‖² of the weights the solver returns (mean over "
                 "the two-class problems: each pair of classes for the solvers on the "
                 "embedding, each class against the rest for LIBSVM and ADMM, which report "
                 "their own kernel problem's value, with a bias).",
    "live": "Retrain on every change (results are cached, so going back is instant). Turn off "
            "for large data and click Train instead.",
    "draw_mode": "Add a point of class A (blue) or B (red) where you click, or erase the "
                 "point nearest to the click.",
}

SOLVER_LABELS = {"snacks": "Snacks (ASSG)", "pegasos": "Pegasos", "liblinear": "LIBLINEAR",
                 "smoothed_newton": "SmSVM (smoothed Newton)", "admm": "ADMM (HSS kernel)",
                 "libsvm": "LIBSVM (exact)"}


def solver_label(name) -> str:
    """Display name of a solver (its registry name for solvers added later)."""
    return SOLVER_LABELS.get(name, name)


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
        {"dataset": "synthetic:checkerboard", "n_samples": 1000, "noise": 0.1,
         "gamma_scale": False, "gamma": 2.0,
         "m": 10, "lam": 1e-4, "solver": "snacks", "kernel": "rbf", "pca2d": False,
         "sampling": "uniform"},
        "playground",
        "With m = 10 landmarks the model can only combine 10 kernel bumps (the gold stars), "
        "far too few for 16 squares: the boundary misses most squares and the error is high. "
        "Raise m to 100 in the sidebar and watch the checkerboard appear (the test error "
        "drops); the Robustness page shows the whole trade-off.",
    ),
    "large_lambda": Lesson(
        "λ too large",
        {"dataset": "synthetic:moons", "n_samples": 400, "noise": 0.2, "gamma_scale": False,
         "gamma": 1.0, "m": 50,
         "lam": 0.2, "solver": "snacks", "kernel": "rbf", "pca2d": False},
        "playground",
        "λ = 0.2 (C ≈ 0.009) makes the norm penalty dominate the hinge loss: the decision "
        "function f(x) stays between −1 and +1 everywhere, so no margin line f = ±1 appears "
        "and every point pays a hinge loss; the colours are pale and the boundary underfits. "
        "Lower λ step by step: the colours deepen and the dashed margins f = ±1 appear.",
    ),
    "race": Lesson(
        "Snacks vs Pegasos race",
        {"dataset": "synthetic:classification", "n_samples": 5000, "noise": 0.2,
         "n_features": 10, "gamma_scale": True, "m": 200, "lam": 1e-5, "kernel": "rbf",
         "conv_solvers": ("snacks", "pegasos"), "max_epochs": 50, "pca2d": False},
        "convergence",
        "The paper's Fig. 1: with a small λ Pegasos' step 1/(2λt) starts huge and decays "
        "slowly, so its objective comes down slowly and wanders; Snacks restarts from averaged "
        "iterates with a step and a ball that shrink geometrically: by epoch 5 its objective "
        "is below Pegasos', and it ends lower. The metrics under the figure say what "
        "stopped each solver.",
    ),
    "peeking": Lesson(
        "Choosing on the test set",
        {"dataset": "synthetic:moons", "n_samples": 400, "noise": 0.3, "gamma_scale": True,
         "kernel": "rbf", "rob_grid": "gamma", "rob_size": 6, "rob_seeds": 1,
         "rob_select": "test", "pca2d": False},
        "robustness",
        "Run the sweep: each of the 36 cells is scored on the same test rows and the lowest "
        "error is reported. That number is the smallest of 36 noisy measurements, so it "
        "flatters the chosen cell: the warning under the heatmap measures by how much, by "
        "choosing on one half of the test rows and scoring on the other. Then switch "
        "'Choose the best cell by' to cross-validation and run it again: the cell is chosen "
        "on the training rows alone, and the test rows measure the chosen model once.",
    ),
    "bandwidth": Lesson(
        "Bandwidth and spectrum",
        {"dataset": "synthetic:spirals", "n_samples": 1000, "noise": 0.1, "gamma_scale": False,
         "gamma": 1.0,
         "m": 100, "kernel": "rbf", "spec_factors": (0.1, 1.0, 10.0), "pca2d": False},
        "spectrum",
        "A wide kernel (small γ) has a fast-decaying spectrum: a few landmarks capture it. A "
        "narrow kernel (large γ) spreads its energy over many eigenvalues, so its curve stays "
        "high. The effective dimension at λ = 0.001 is the number of landmarks worth paying "
        "for.",
    ),
}


# Train and test errors this close (underfitting) or this far apart (overfitting) turn the
# Playground's hints from experiments into fixes.
UNDERFIT_GAP = 0.02
OVERFIT_GAP = 0.05


def try_this(settings, learned_little=False) -> str:
    """Suggestions for the Playground that make sense from the current settings (with
    ``lam`` the λ trained with, also when the sidebar sets C, ``n_train`` the training
    rows, which bound m, and the run's ``train_error`` and ``test_error``).

    ``learned_little``: the model is within a point of the majority class, so only what
    makes it richer is suggested, with Auto-tune first.  A model whose training error is
    as high as its test error underfits (regularise less, more landmarks); one whose test
    error is far above its training error overfits (the reverse); otherwise the hints are
    experiments that show what each knob does.
    """
    by_C = settings.get("reg_by") == "C"
    less = ("Raise **C** (smaller λ)" if by_C else "Lower **λ** (larger C)")
    more = ("Lower **C** (larger λ)" if by_C else "Raise **λ** (smaller C)")
    n_train = settings.get("n_train", 100)
    if learned_little:
        hints = ["Click **Auto-tune**: a quick cross-validated search of γ, λ and m on the "
                 "training rows.",
                 less + ": the model may follow the data more closely.",
                 "Raise **m**: more landmarks, a richer boundary."]
        if settings["class_weight"] == "none":
            hints.append("Set **class weight** to 'balanced': a rare class then weighs as "
                         "much as a common one.")
        return "\n".join(f"- {hint}" for hint in hints)
    hints = []
    solver = settings["solver"]
    gap = settings.get("test_error", 0.0) - settings.get("train_error", 0.0)
    underfits = settings.get("train_error", 0.0) > UNDERFIT_GAP and gap < UNDERFIT_GAP
    overfits = gap > OVERFIT_GAP
    if solver in ("libsvm", "admm"):
        hints.append("Switch the **solver** back to Snacks: the Nyström model with m landmarks "
                     "this one is the reference for.")
    elif underfits and settings["m"] < n_train:
        hints.append(f"Raise **m** to {min(4 * settings['m'], n_train)}: the training error "
                     "is as high as the test error, so either the model is too simple or the "
                     "classes overlap (an error no model removes); more landmarks tell which.")
    elif settings["m"] > 10 and not underfits:
        hints.append("Slide **m** down to 5: the boundary can only bend around a few "
                      "landmarks.")
    elif settings["m"] < n_train:
        hints.append(f"Raise **m** to {min(100, n_train)}: with more "
                     "landmarks the boundary can follow the data.")
    if underfits:
        hints.append(less + ": with the training error as high as the test error, the "
                     "model can afford to follow the data more closely.")
    elif overfits:
        hints.append(more + ": the test error is far above the training error, so a "
                     "smoother boundary may generalise better.")
    elif settings["lam"] < 0.05:
        hints.append(more + ": wider margins, smoother boundary, more training error.")
    else:
        hints.append(less + ": the margins tighten and the boundary follows the data.")
    if settings["kernel"] != "linear":
        if settings["gamma_scale"]:
            hints.append("Turn off **γ from the data** and raise γ by hand: narrow kernels "
                         "follow every point, then overfit.")
        else:
            hints.append("Raise **γ** further: narrow kernels follow every point, then overfit.")
    if solver not in ("libsvm", "admm"):
        hints.append("Switch the **solver** to LIBSVM: the exact kernel SVM, the target Nyström "
                     "approximates.")
    hints.append("Open **Lessons** in the sidebar for guided experiments.")
    return "\n".join(f"- {hint}" for hint in hints)


CAPTIONS = {
    "margins": "Decision values f(x) of the test points by true class: a good model puts "
               "each class on its own side of 0, most of them beyond the margin ±1. "
               "Multiclass: the predicted class's value; one-vs-one (the solvers on the "
               "embedding), its smallest against each other class, so beyond +1 where it "
               "wins every pair by the margin.",
    "heatmap": "Colour and text: mean {value} (%); hover for the standard deviation over "
               "{spread} and the fit time. ★ marks the best cell. A broad bright (yellow) "
               "region means the method is robust to its settings; with too few landmarks "
               "no λ helps.",
    "heatmap_gamma": "Colour and text: mean {value} (%); hover for the standard deviation "
                     "over {spread} and the fit time. ★ marks the best cell. Too large a γ "
                     "(a narrow kernel) memorises the training points and too small a γ "
                     "cannot bend; λ trades the two off. A broad bright (yellow) region means "
                     "the method is robust to its settings.",
    "solvers": "Times are one run in this app's process, not a benchmark (see BENCHMARKS.md "
               "for side-by-side ratios). The embedded solvers share the embedding, so their "
               "objectives are comparable; LIBSVM's objective is the exact kernel problem's "
               "(with a bias), a reference the embedded ones approach as m grows.",
    "spectrum": "Eigenvalues μᵢ of K_mm divided by the largest, on a log scale, for the same "
                "landmarks at several bandwidths (the HSS paper's Fig. 1). Wide kernels "
                "(small γ) decay fast: a low-rank approximation is accurate. Eigenvalues "
                "below the dashed line mλ are damped away by the regularization; below about "
                "10⁻¹³ of the largest the computed values are round-off, not the kernel's, and "
                "are not drawn.",
    "spectrum_polynomial": "Eigenvalues μᵢ of K_mm divided by the largest, on a log scale, "
                           "for the same landmarks at several values of γ (the scale of "
                           "⟨x, x'⟩). A polynomial kernel of degree p on d features has rank "
                           "at most C(d + p, p), so the curve ends in round-off (below about "
                           "10⁻¹³ of the largest, not drawn) after that many eigenvalues. "
                           "Eigenvalues below the dashed line mλ are damped away by the "
                           "regularization.",
    "approximation": "Relative error ‖K − ZZᵀ‖_F / ‖K‖_F (Frobenius norms) on up to 600 "
                     "training rows, mean and spread over 3 seeds (the tutorial paper's "
                     "comparison). Nyström adapts to the data and its error falls with the "
                     "spectrum; random Fourier features ignore the data and fall like 1/√m.",
    "approximation_polynomial": "Relative error ‖K − ZZᵀ‖_F / ‖K‖_F (Frobenius norms) on up "
                                "to 600 training rows, mean and spread over 3 seeds, for "
                                "Nyström with three landmark choices (random Fourier features "
                                "exist only for shift-invariant kernels, not the polynomial "
                                "one). Once m exceeds the kernel's rank the error is "
                                "round-off.",
    "convergence": "Top: the primal objective. Middle: its excess over the best value any "
                   "solver reached, on a log scale (dotted: Snacks' certified duality gap, "
                   "an upper bound on the excess over the optimum). Bottom: test error. "
                   "Pegasos' step 1/(2λt) is huge early when λ is small, so it wanders before "
                   "it converges; Snacks averages its iterates and restarts each stage with the "
                   "step and the search ball divided by ω (its first 3 epochs), then polishes "
                   "with dual coordinate ascent until its certified gap is below tol; right "
                   "after the switch its objective can rise for a few epochs (the dual "
                   "method's first points), and the fit returns its best point.",
    "learning": "The weights {solver} held at each checkpoint it recorded while training "
                "(the slider names each one's epoch, passes over the data so far), on the "
                "same landmarks: press ▶ Play, ❚❚ Pause, "
                "or click a step of the slider to move one checkpoint at a time. Right: the "
                "test error measured at that checkpoint during training. The first frame is "
                "w = 0 (f = 0 everywhere: no prediction yet, counted as all wrong).",
    "paper": "The paper's times are training times on an 18-core workstation, averaged over "
             "10 runs, with the kernel matrix precomputed (its time is in the table's title); "
             "ours are one run on this machine, the embedding time apart. The paper tuned γ "
             "and λ by grid search with LibSVM and ran Pegasos and Snacks to a primal "
             "accuracy of 1e-6; here γ, λ and the stopping rules are the sidebar's. "
             "ThunderSVM solves the exact kernel SVM: its row here is LIBSVM (exact)'s, "
             "which solves it too.",
    "animation": "Press play to replay the decision function f(x) at the solver's checkpoints "
                 "(lines: f = −1, 0, +1). Early checkpoints show a rough boundary that the "
                 "later ones refine.",
    "boundary": "Colour is the decision function f(x): red where the model predicts the "
                "+1 class, blue for −1. The solid line is the boundary f = 0, dashed lines "
                "the margins f = ±1: training points inside them pay a hinge loss. Gold stars "
                "are the Nyström landmarks; crosses mark misclassified points.",
    "boundary_multiclass": "Shaded regions show the predicted class. The solvers on the "
                           "embedding train one-vs-one, a problem per pair of classes: "
                           "the class with the most pairwise votes wins. LIBSVM and ADMM "
                           "train one-vs-rest: the largest per-class decision function "
                           "wins.",
    "drawing": "Circles train the model; every {period} point you add to a class is held "
               "out as a test point (diamond). The model learns on the points scaled as the "
               "sidebar says; the plane shows them where you drew them.",
    "drawing_boundary": "Colour is the decision function f(x): red where the model predicts "
                        "class B, blue for class A. The solid line is the boundary f = 0, "
                        "dashed lines the margins f = ±1: training points inside them pay a "
                        "hinge loss. Gold stars are the Nyström landmarks; crosses mark "
                        "misclassified points.",
}

# Why a solve stopped (snacks_core.solvers.base.STOP_REASONS), completing "it stopped …".
STOP_REASON_WORDS = {
    "tol_gap": "when its certified duality gap reached the tolerance",
    "max_epochs": "when its budget of epochs ran out",
    "max_iter": "when its budget of iterations ran out",
    "early_stopping": "when its held-out error stopped improving",
    "tol_objective": "when its objective stopped decreasing (the stochastic noise floor)",
    "converged": "when its convergence test held",
}
