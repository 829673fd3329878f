"""The Streamlit app through ``streamlit.testing.v1.AppTest``: every page on small data."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from snacks_core.app import sidebar
from snacks_core.datasets import fingerprint

pytestmark = pytest.mark.slow  # each test runs the Streamlit app

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 120


def run_app(query_params=None, **settings) -> AppTest:
    """The app after its first run, with URL parameters and session settings applied."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if query_params:
        at.query_params = dict(query_params)
    for name, value in settings.items():
        at.session_state[name] = value
    return at.run()


def assert_clean(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def figure_data(chart):
    """The traces of a plotly chart element."""
    return json.loads(chart.proto.spec)["data"]


def plotly_array(value):
    """A plotly JSON array, plain or typed ({'dtype', 'bdata', 'shape'})."""
    if not isinstance(value, dict):
        return np.asarray(value)
    shape = [int(k) for k in str(value.get("shape", "-1")).split(",")]
    return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).reshape(shape)


SMALL = {"n_samples": 200, "m": 20}


def test_playground_trains_and_draws_the_boundary():
    at = run_app(**SMALL)
    assert_clean(at)
    assert at.title[0].value == "Playground"
    assert float(metric(at, "Test error").rstrip(" %")) < 20
    charts = [chart.key for chart in at.get("plotly_chart")]
    assert charts == ["boundary"]
    names = [trace.get("name", "") for trace in figure_data(at.get("plotly_chart")[0])]
    assert any(name.startswith("landmarks (m = 20)") for name in names)
    assert "margins f = ±1" in names


@pytest.mark.parametrize("setting, value", [("solver", "pegasos"), ("solver", "libsvm"),
                                            ("m", 5), ("lam", 0.1)])
def test_playground_results_follow_the_settings(setting, value):
    at = run_app(**SMALL)
    before = metric(at, "Objective F(w)")
    widget = at.select_slider(key=setting) if setting in ("m", "lam") else at.selectbox(key=setting)
    widget.set_value(value).run()
    assert_clean(at)
    assert metric(at, "Objective F(w)") != before


def test_playground_changes_dataset():
    at = run_app(**SMALL)
    at.selectbox(key="dataset").set_value("synthetic:xor").run()
    assert_clean(at)
    assert at.query_params["dataset"] == "synthetic:xor"
    assert [chart.key for chart in at.get("plotly_chart")] == ["boundary"]


def test_query_parameters_round_trip():
    at = run_app({"m": "20", "lam": "0.01", "solver": "pegasos", "dataset": "synthetic:circles",
                  "n_samples": "200"})
    assert_clean(at)
    assert at.session_state["m"] == 20
    assert at.session_state["lam"] == 0.01
    assert at.session_state["solver"] == "pegasos"
    at.select_slider(key="m").set_value(30).run()
    assert at.query_params["m"] == "30"
    assert at.query_params["dataset"] == "synthetic:circles"
    shared = dict(at.query_params)
    again = run_app(shared)
    assert again.session_state["m"] == 30
    assert again.session_state["solver"] == "pegasos"


def test_bad_query_parameters_are_reported_and_replaced():
    at = run_app({"gamma": "-3", "solver": "magic", "n_samples": "200"})
    assert not at.exception
    assert any("invalid" in w.value for w in at.warning)
    assert at.session_state["gamma"] == 1.0
    assert at.session_state["solver"] == "snacks"


def test_manual_training_waits_for_the_button():
    at = run_app(live=False, **SMALL)
    assert not at.metric
    at.button(key="train_playground").click().run()
    assert_clean(at)
    assert at.metric


def open_page(name, **settings):
    at = run_app(**{**SMALL, **settings})
    at.switch_page(f"app_pages/{name}.py").run()
    assert_clean(at)
    return at


def test_convergence_overlays_solvers_and_animates():
    at = open_page("convergence", conv_solvers=["snacks", "pegasos"])
    charts = at.get("plotly_chart")
    assert len(charts) == 2
    names = {trace.get("name") for trace in figure_data(charts[0])}
    assert {"Snacks (ASSG)", "Pegasos"} <= names
    assert json.loads(charts[1].proto.spec).get("frames")
    at.segmented_control(key="conv_axis").set_value("time").run()
    assert_clean(at)


def test_spectrum_shows_decay_and_approximation_error():
    at = open_page("spectrum", spec_max_m=50, spec_factors=[0.1, 1.0])
    charts = at.get("plotly_chart")
    assert len(charts) == 2
    assert len(figure_data(charts[0])) == 2
    methods = {trace["name"] for trace in figure_data(charts[1])}
    assert any("random Fourier" in name for name in methods)
    assert any("leverage" in name for name in methods)
    assert float(metric(at, "Effective dimension d_eff(λ)")) > 0


def test_spectrum_measures_the_hss_compression_on_click():
    at = open_page("spectrum", spec_max_m=50, spec_factors=[1.0])
    assert not at.dataframe
    next(b for b in at.button if b.label == "Measure the HSS compression").click().run()
    assert_clean(at)
    table = at.dataframe[0].value
    assert list(table["target accuracy"]) == [1e-2, 1e-3, 1e-4]
    assert (table["memory (MB)"] > 0).all() and (table["mean rank"] >= 1).all()
    assert (table["dense kernel (MB)"] == table["dense kernel (MB)"].iloc[0]).all()


@pytest.mark.parametrize("page, setting", [("convergence", "conv_solvers"),
                                           ("solvers", "cmp_solvers")])
def test_pages_ask_for_a_solver_when_none_is_chosen(page, setting):
    at = open_page(page, **{setting: []})
    assert [info.value for info in at.info] == ["Choose at least one solver."]
    assert not at.get("plotly_chart") and not at.metric
    at.multiselect(key=setting).set_value(["pegasos"]).run()
    assert_clean(at)
    assert not at.info and at.get("plotly_chart")


def test_robustness_sweep_fills_the_heatmap():
    """By default cells are scored by cross-validation and only the chosen cell's model
    meets the test rows; scored on the test rows, the page measures how much the choice
    flatters itself."""
    at = open_page("robustness", rob_size=2, rob_seeds=1)
    assert not at.get("plotly_chart")
    at.button(key="run_sweep").click().run()
    assert_clean(at)
    heatmap = figure_data(at.get("plotly_chart")[0])[0]
    assert heatmap["type"] == "heatmap"
    assert heatmap["z"]["shape"] == "2, 2"
    assert "CV error" in heatmap["colorbar"]["title"]["text"]
    chosen = at.success[0].value
    assert chosen.startswith("Chosen by 3-fold cross-validation") and "**test error**" in chosen
    assert "★" in "".join(values_text(heatmap["text"]))
    at.segmented_control(key="rob_select").set_value("test").run()
    assert not at.get("plotly_chart")
    at.button(key="run_sweep").click().run()
    assert_clean(at)
    assert at.success[0].value.startswith("Lowest test error")
    warning = next(w.value for w in at.warning if "flatters" in w.value)
    assert "on that half" in warning and "other half" in warning
    at.segmented_control(key="rob_grid").set_value("gamma").run()
    assert_clean(at)
    assert not at.get("plotly_chart")


def test_solver_comparison_table_and_chart():
    at = open_page("solvers", cmp_solvers=["snacks", "liblinear", "libsvm"])
    table = at.dataframe[0].value
    assert list(table["solver"]) == ["Snacks (ASSG)", "LIBLINEAR", "LIBSVM (exact)"]
    assert (table["test error"] < 0.3).all()
    # Two tables that fit a 1024 px screen: the results, then how each solver ran.
    assert {"F1", "objective"} <= set(table.columns) and "stopped by" not in table.columns
    assert list(at.dataframe[1].value.columns) == ["solver", "embedding time (s)", "epochs",
                                                   "iterations", "stopped by"]
    assert len(at.get("plotly_chart")) == 1


def test_data_page_shows_the_dataset():
    at = open_page("data", dataset="bundled:iris")
    assert_clean(at)
    assert metric(at, "Classes") == "3"
    assert len(at.get("plotly_chart")) == 2


def test_multiclass_and_pca_on_the_playground():
    at = run_app(dataset="bundled:wine", pca2d=True, m=20)
    assert_clean(at)
    data = figure_data(at.get("plotly_chart")[0])
    assert data[0]["type"] == "heatmap"
    # The projection is named above the figure, not in a title that would run into the legend.
    assert any("PCA projection" in m.value for m in at.markdown)
    assert not json.loads(at.get("plotly_chart")[0].proto.spec)["layout"].get("title")


def test_lesson_sets_up_the_experiment():
    at = run_app(**SMALL)
    at.button(key="lesson_large_lambda").click().run()
    assert_clean(at)
    assert at.session_state["lam"] == 0.2
    assert any("λ too large" in m.value for m in at.markdown)


def test_playground_without_two_features_shows_margins():
    at = run_app(dataset="bundled:breast_cancer", m=20)
    assert_clean(at)
    assert any("30 features" in i.value for i in at.info)
    assert figure_data(at.get("plotly_chart")[0])[0]["type"] == "histogram"


GOOD_CSV = ("a,b,label\n" + "".join(
    f"{x:.3f},{(x * 7) % 3:.3f},{'yes' if x > 1.5 else 'no'}\n"
    for x in [i / 20 for i in range(60)])).encode()


def test_csv_upload_is_used_and_survives_navigation():
    at = open_page("data")
    at.file_uploader[0].upload("mine.csv", GOOD_CSV, "text/csv").run()
    assert_clean(at)
    at.button(key="use_upload").click().run()
    assert_clean(at)
    assert at.session_state["dataset"].startswith("upload:")
    assert "uploaded · mine.csv" in at.subheader[0].value
    at.switch_page("app_pages/playground.py").run()
    assert_clean(at)
    assert at.session_state["dataset"].startswith("upload:")
    assert at.metric


@pytest.mark.parametrize("name, content, kind", [
    ("ijcnn1.trn", b"".join(f"{1 if i % 3 else -1} 1:{i / 40:.3f} 2:{(i * 7) % 5 / 5:.2f}\n"
                           .encode() for i in range(80)), "LIBSVM"),
    ("mine.t", GOOD_CSV, "CSV"),
])
def test_an_upload_is_read_by_its_content_whatever_its_name(name, content, kind):
    """LIBSVM files end in .t, .trn, .scale or nothing: the content decides."""
    at = open_page("data")
    at.file_uploader[0].upload(name, content).run()
    assert_clean(at)
    assert any(f"Read as **{kind}**" in c.value for c in at.caption)
    assert bool(at.selectbox(key=f"upload_label_{fingerprint(content)}")) if kind == "CSV" \
        else not any(s.label == "Label column" for s in at.selectbox)
    at.button(key="use_upload").click().run()
    assert_clean(at)
    assert at.session_state["dataset"].startswith("upload:")
    assert f"uploaded · {name}" in at.subheader[0].value


@pytest.mark.parametrize("name, content, message", [
    ("ragged.csv", b"a,b,label\n1,2,x\n3,4\n5,6,y\n", "line 3: expected 3 fields"),
    ("words.csv", b"a,b,label\n1,2,x\n3,red,y\n", "line 3, column 'b'"),
    ("bad.svm", b"+1 1:1\n-1 1:x\n", "line 2"),
    ("model.csv", b"\x80\x04\x95pickle", "UTF-8"),
])
def test_bad_upload_shows_an_error_and_the_app_survives(name, content, message):
    at = open_page("data")
    at.file_uploader[0].upload(name, content).run()
    if not at.error:
        at.button(key="use_upload").click().run()
    assert not at.exception
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert at.session_state["dataset"] == "synthetic:moons"
    at.switch_page("app_pages/playground.py").run()
    assert_clean(at)


@pytest.mark.parametrize("uploader", [0, 1], ids=["training file", "test file"])
def test_an_upload_over_the_cap_is_refused_with_a_message(uploader):
    """Over the app's cap a file is refused in words, not by a red mark on its chip:
    Streamlit's own limit (.streamlit/config.toml) is set above ours, so ours answers."""
    import tomllib

    from snacks_core.app.explorer import MAX_UPLOAD_MB
    config = tomllib.loads((Path(APP).parent / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] > MAX_UPLOAD_MB
    too_big = GOOD_CSV + b"0,0,no\n" * ((MAX_UPLOAD_MB * 2**20) // 7 + 10)
    at = open_page("data")
    at.file_uploader[uploader].upload("big.csv", too_big, "text/csv").run()
    assert not at.exception
    assert any(f"over the {MAX_UPLOAD_MB} MB" in e.value and "big.csv" in e.value
               for e in at.error), [e.value for e in at.error]
    assert not [b for b in at.button if b.key == "use_upload"]
    assert at.session_state["dataset"] == "synthetic:moons"


def test_a_stopped_sweep_says_which_cells_are_partial_or_missing():
    """Stopped during its second fold, a cross-validated sweep has every cell's first fold:
    the message says the cells are partial (not 'empty cells were not computed' over a
    grid of numbers), and the cells left out are counted as not computed."""
    import pandas as pd

    from snacks_core.app.explorer import stopped_sweep_cells
    rows = [{"m": m, "lam": lam, "seed": 0, "fold": fold}
            for fold in range(2) for m in (10, 20, 40) for lam in (1e-4, 1e-3)]
    table = pd.DataFrame(rows[:9])  # fold 0 whole, fold 1: three cells
    partial, note = stopped_sweep_cells(table, "m", [10, 20, 40], [1e-4, 1e-3],
                                        fits_per_cell=3, done=9, total=18)
    assert partial.shape == (3, 2) and partial.sum() == 6
    assert "Sweep stopped after 9 of 18 fits" in note
    assert "6 of the 6 cells" in note and "fewer than their 3 fits" in note
    assert "not computed" not in note
    partial, note = stopped_sweep_cells(table.iloc[:4], "m", [10, 20, 40], [1e-4, 1e-3],
                                        fits_per_cell=1, done=4, total=6)
    assert partial.sum() == 0
    assert "2 of the 6 cells were not computed (empty)" in note


def typed(at, label):
    return next(t for t in at.sidebar.text_input if t.label == label)


def test_a_typed_seed_in_scientific_notation_is_that_seed():
    """'1e9' is the seed 1,000,000,000, not 1 (an integer field read only its first digit)."""
    at = open_page("data")
    typed(at, "Seed").input("1e9").run()
    assert_clean(at)
    assert at.session_state["seed"] == 1_000_000_000
    assert typed(at, "Seed").value == "1000000000"


@pytest.mark.parametrize("label, name, text, words", [
    ("Seed", "seed", "5e10", "0 to 2147483647"),
    ("Seed", "seed", "1.5", "whole number"),
    ("Degree p", "degree", "12", "1 to 10"),
    ("c₀", "coef0", "-20", "-10 to 10"),
])
def test_a_typed_value_that_cannot_be_used_says_so(label, name, text, words):
    """Out of range or not a number: the field keeps what was typed, a message under it says
    why and which value is still used; the setting does not change."""
    at = open_page("data", kernel="polynomial")
    before = at.session_state[name]
    typed(at, label).input(text).run()
    assert not at.exception
    assert at.session_state[name] == before
    assert typed(at, label).value == text
    messages = [e.value for e in at.sidebar.warning]
    assert any(words in m and f"still {before:g}" in m for m in messages), messages
    # A valid value clears the message.
    typed(at, label).input("3").run()
    assert at.session_state[name] == 3 and not at.sidebar.warning


def test_libsvm_download_without_network_is_explained(monkeypatch, tmp_path):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("SNACKS_LIBSVM_URL", f"http://127.0.0.1:{port}/")
    monkeypatch.setenv("SNACKS_DATA_HOME", str(tmp_path))
    at = open_page("data")
    at.button(key="download_libsvm").click().run()
    assert not at.exception
    assert any("no network access" in e.value for e in at.error)
    assert at.session_state["dataset"] == "synthetic:moons"


def test_live_training_pauses_on_large_problems():
    at = run_app(n_samples=50000, m=750)
    assert_clean(at)
    assert any("Live training paused" in i.value for i in at.info)
    assert not at.metric
    exact = run_app(n_samples=10000, m=20, solver="libsvm")
    assert any("exact LIBSVM" in i.value for i in exact.info)


def test_lesson_opens_its_page():
    at = run_app(**SMALL)
    at.button(key="lesson_race").click().run()
    assert_clean(at)
    assert at.title[0].value == "Convergence"
    assert at.session_state["lam"] == 1e-5
    assert at.query_params["dataset"] == "synthetic:classification"
    names = {trace.get("name") for trace in figure_data(at.get("plotly_chart")[0])}
    assert {"Snacks (ASSG)", "Pegasos"} <= names


def values(array):
    """A plotly array from a chart's JSON: a list, or a typed array (dtype + base64 bdata)."""
    if isinstance(array, dict) and "bdata" in array:
        import base64

        import numpy as np
        data = np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"])
        shape = array.get("shape")
        if shape:
            data = data.reshape([int(s) for s in str(shape).split(",")])
        return data
    import numpy as np
    return np.asarray(array, dtype=float)


def metric_element(at, label):
    return next(m for m in at.metric if m.label == label)


@pytest.mark.parametrize("solver", ["libsvm", "admm"])
def test_exact_solvers_show_no_nan_no_landmarks_and_no_m(solver):
    at = run_app(solver=solver, **SMALL)
    # (The export panel's note that HSS models cannot be saved as .npz is not our concern.)
    assert not at.exception
    assert all("nan" not in m.value for m in at.metric)
    assert metric(at, "Iterations") and not any(m.label == "Epochs" for m in at.metric)
    names = [t.get("name", "") for t in figure_data(at.get("plotly_chart")[0])]
    assert not any(name.startswith("landmarks") for name in names)
    assert at.select_slider(key="m").disabled
    assert not any("nan" in m.value for m in at.markdown)


def test_times_from_the_cache_are_labelled():
    at = run_app(seed=4242, **SMALL)     # a setting no other test trained
    assert metric_element(at, "Embedding").delta in (None, "")
    at.run()
    assert metric_element(at, "Embedding").delta == "from cache"
    assert metric_element(at, "Training").delta == "from cache"


def test_majority_baseline_and_a_one_class_model_is_flagged():
    at = run_app({"dataset": "sample:a9a_small.svm", "lam": "0.001", "scaling": "standard"})
    assert_clean(at)
    assert metric_element(at, "Test error").delta == "majority 23.3 %"
    assert metric(at, "Test error") == "23.3 %"
    assert any("predicts one class" in w.value for w in at.warning)


def test_data_aware_defaults_give_a_sensible_first_model():
    at = run_app({"dataset": "sample:a9a_small.svm"})
    assert_clean(at)
    assert at.session_state["scaling"] == "none" and at.session_state["lam"] == 1e-5
    assert not any("predicts one class" in w.value for w in at.warning)
    assert float(metric(at, "Test error").rstrip(" %")) < 23.3


def test_m_is_clamped_to_the_data_and_any_m_in_a_link_is_accepted():
    at = run_app({"n_samples": "100", "m": "2000"})
    assert_clean(at)
    assert at.session_state["m"] == 70
    assert max(at.select_slider(key="m").options) == "70"
    assert not any("larger than the number of samples" in w.value for w in at.warning)
    linked = run_app({"m": "37", "n_samples": "200"})
    assert linked.session_state["m"] == 37 and not linked.warning
    facts = next(m.value for m in linked.markdown if "training rows" in m.value)
    # moons (labels −1 and 1): 37 landmarks balanced over the two classes.
    assert re.search(r"m = 37 landmarks balanced over the classes \((18 of class -1, 19 of "
                     r"class 1|19 of class -1, 18 of class 1)\)", facts), facts


def test_dropped_eigenvalues_are_explained():
    at = run_app(n_samples=1000, m=700, sampling="uniform")
    assert_clean(at)
    facts = next(m.value for m in at.markdown if "training rows" in m.value)
    assert "m = 700 uniform landmarks" in facts
    assert "eigenvalues of K_mm are below" in facts


def test_deep_link_errors_say_what_is_wrong():
    at = run_app({"dataset": "synthetic:nonsense", "n_samples": "200"})
    message = " ".join(w.value for w in at.warning)
    assert "no synthetic dataset is called 'nonsense'" in message
    assert "uploads" not in message
    at = open_page("robustness")
    at.segmented_control(key="rob_grid").set_value("gamma").run()
    assert at.query_params["rob_grid"] == "gamma"


def test_try_this_respects_the_state_and_live_mode_has_no_train_button():
    at = run_app(**SMALL)
    hints = next(m.value for m in at.markdown if "Lessons" in m.value and "- " in m.value)
    assert "Switch the **solver** to LIBSVM" in hints
    assert not any(b.key == "train_playground" for b in at.button)
    at = run_app(solver="libsvm", m=5, **{k: v for k, v in SMALL.items() if k != "m"})
    hints = next(m.value for m in at.markdown if "Lessons" in m.value and "- " in m.value)
    assert "to LIBSVM" not in hints and "Slide **m** down to 5" not in hints
    assert "back to Snacks" in hints


def test_gamma_heatmap_caption_is_about_gamma():
    at = open_page("robustness", rob_size=2, rob_seeds=1, rob_grid="gamma", rob_select="test")
    at.button(key="run_sweep").click().run()
    assert_clean(at)
    caption = " ".join(c.value for c in at.caption)
    assert "Too large a γ" in caption and "too few landmarks" not in caption
    heatmap = figure_data(at.get("plotly_chart")[0])[0]
    assert "±" not in "".join(values_text(heatmap["text"]))


def values_text(text):
    return [cell for row in text for cell in row]


def test_polynomial_spectrum_captions_are_about_the_polynomial_kernel():
    at = open_page("spectrum", kernel="polynomial", spec_max_m=50, spec_factors=[1.0])
    caption = " ".join(c.value for c in at.caption)
    assert "rank" in caption and "random Fourier features exist only" in caption
    assert "Wide kernels" not in caption and "fall like 1/√m" not in caption


def test_a_lesson_resets_what_it_does_not_set():
    at = run_app(max_epochs=5, class_weight="balanced", lam=0.5, **SMALL)
    at.button(key="lesson_bandwidth").click().run()
    assert_clean(at)
    assert at.session_state["max_epochs"] == 50
    assert at.session_state["class_weight"] == "none"
    assert at.session_state["lam"] == 1e-3     # d_eff no longer depends on the last lesson


def test_lesson_few_landmarks_text_is_true():
    at = run_app(**SMALL)
    at.button(key="lesson_few_landmarks").click().run()
    assert_clean(at)
    assert any("m = 10 landmarks" in m.value for m in at.markdown)
    few = float(metric(at, "Test error").rstrip(" %"))
    at.select_slider(key="m").set_value(100).run()
    many = float(metric(at, "Test error").rstrip(" %"))
    assert few > 20 and many < few - 10


def test_lesson_large_lambda_text_is_true():
    at = run_app(**SMALL)
    at.button(key="lesson_large_lambda").click().run()
    assert_clean(at)
    text = next(m.value for m in at.markdown if "λ too large" in m.value)
    assert "stays between −1 and +1 everywhere" in text
    fill = figure_data(at.get("plotly_chart")[0])[0]
    assert fill["name"] == "f(x)" and abs(values(fill["z"])).max() < 1
    at.select_slider(key="lam").set_value(1e-3).run()
    fill = figure_data(at.get("plotly_chart")[0])[0]
    assert abs(values(fill["z"])).max() > 1    # the margins appear once λ is lowered


def test_lesson_race_text_is_true():
    at = run_app(**SMALL)
    at.button(key="lesson_race").click().run()
    assert_clean(at)
    curves = {t["name"]: (values(t["x"]), values(t["y"]))
              for t in figure_data(at.get("plotly_chart")[0])
              if t.get("yaxis", "y") == "y" and t.get("name") in ("Snacks (ASSG)", "Pegasos")}
    (sx, sy), (px, py) = curves["Snacks (ASSG)"], curves["Pegasos"]
    assert sy[sx >= 5][0] < py[px >= 5][0]      # by epoch 5 Snacks is below Pegasos
    assert sy[-1] < py[-1]                      # and it ends lower
    assert any("stopped by" in (m.delta or "") for m in at.metric)


def test_lesson_bandwidth_text_is_true():
    at = run_app(**SMALL)
    at.button(key="lesson_bandwidth").click().run()
    assert_clean(at)
    import numpy as np
    curves = {t["name"]: np.nan_to_num(values(t["y"]))
              for t in figure_data(at.get("plotly_chart")[0]) if t.get("name")}
    wide = next(v for k, v in curves.items() if k.endswith("(×0.1)"))
    narrow = next(v for k, v in curves.items() if k.endswith("(×10)"))
    assert wide[20] < narrow[20]


def test_data_page_builds_only_the_columns_it_shows():
    # Binary one-hot rows up to column 100,000: the table shows 30 columns, not 100,000.
    content = b"".join(f"{'+1' if i % 2 else '-1'} {i % 7 + 1}:1 {100000 - i}:1\n".encode()
                       for i in range(40))
    at = open_page("data")
    at.file_uploader[0].upload("wide.svm", content).run()
    at.button(key="use_upload").click().run()
    assert_clean(at)
    frame = at.dataframe[0].value
    assert list(frame.columns) == ["label"] + [f"x{j}" for j in range(1, 31)]
    assert any("first 30 of 100,000 columns" in e.label for e in at.expander)


def test_watch_it_learn_replays_the_boundary_and_the_error_per_checkpoint():
    at = run_app(**SMALL)
    assert_clean(at)
    assert not any(c.proto.id.endswith("-learning") for c in at.get("plotly_chart"))
    at.toggle(key="watch_learning").set_value(True).run()
    assert_clean(at)
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith("-learning"))
    spec = json.loads(chart.proto.spec)
    frames = spec["frames"]
    names = [frame["name"] for frame in frames]
    assert len(frames) > 2 and names[0] == "epoch 0"
    # Each frame moves the error marker to that checkpoint's recorded test error; the last
    # one is the returned model's test error (shown in the metrics).
    markers = [frame["data"][-1] for frame in frames]
    last = markers[-1]
    assert f"{last['y'][0]:.1f} %" == metric(at, "Test error")
    assert [f"epoch {m['x'][0]:.3g}" for m in markers] == names
    assert markers[0]["y"][0] == 100.0
    buttons = [b["label"] for b in spec["layout"]["updatemenus"][0]["buttons"]]
    assert buttons == ["▶ Play", "❚❚ Pause"]
    assert len(spec["layout"]["sliders"][0]["steps"]) == len(frames)


def test_watch_it_learn_is_only_for_two_features():
    at = run_app(dataset="bundled:breast_cancer", m=20)
    assert_clean(at)
    assert not any(t.key == "watch_learning" for t in at.toggle)


def test_paper_page_shows_the_published_table_beside_our_run():
    from snacks_core.app.paper_tables import PAPER_TABLES
    from snacks_core.app.state import PAPER_DATASETS
    from snacks_core.datasets import load_bundled, split_dataset
    from snacks_core.model import evaluation

    assert tuple(PAPER_TABLES) == PAPER_DATASETS
    at = open_page("paper", dataset="bundled:breast_cancer")
    table = at.dataframe[0].value
    # Table III as published (Tanji et al.), row by row.
    # Six short columns, so that the table fits a 1024 px screen (one solver column: the
    # paper's names; ThunderSVM's row is LIBSVM here, as the caption says).
    assert list(table.columns) == ["solver", "paper: time", "paper: test error",
                                   "here: training", "here: embedding", "here: test error"]
    assert table["solver"].tolist() == ["LibLinear", "ThunderSVM", "Pegasos", "Snacks"]
    assert table["paper: time"].tolist() == ["39.0 s", "2.97 s", "52.0 s", "1.01 s"]
    assert table["paper: test error"].tolist() == ["15.8 %", "15.6 %", "20.0 %", "15.2 %"]
    assert any("Optimal (LibSVM on the full problem): 15.1 %" in md.value for md in at.markdown)
    # Ours: the same solvers with the paper's m = 800, clamped to the training rows.
    split = split_dataset(load_bundled("breast_cancer"), test_size=0.3, scaling="standard",
                          random_state=0)
    n = split.X_train.shape[0]
    assert any(f"the paper's 800, clamped to the {n:,} training rows" in md.value
               for md in at.markdown)
    # λ: the sidebar's data-aware default for these training rows.
    lam = sidebar.defaults_for(load_bundled("breast_cancer"), 0.3)["lam"]
    params = {"kernel": "rbf", "gamma": "scale", "n_components": n, "lam": lam,
              "sampling": "uniform", "max_epochs": 50, "class_weight": None,
              "random_state": 0}
    for paper_name, solver in [("Snacks", "snacks"), ("LibLinear", "liblinear")]:
        error = evaluation.train(split, {**params, "solver": solver}).metrics["test_error"]
        row = table[table["solver"] == paper_name].iloc[0]
        assert row["here: test error"] == f"{100 * error:.1f} %"
    assert any("Choose **sklearn · breast cancer**" not in i.value and "a9a" in i.value
               for i in at.info)


def test_paper_page_mnist_bin_reports_f1():
    at = open_page("paper", dataset="bundled:digits7", paper_table="mnist-bin", m=20)
    table = at.dataframe[0].value
    assert table["paper: F1"].tolist() == ["0.995", "0.995", "0.982", "0.985"]
    assert "here: F1" in table.columns and not at.info
    assert any("F1 of class 1 (the smaller)" in md.value for md in at.markdown)


def test_auto_tune_sets_the_sidebar_to_its_choice():
    at = run_app(**SMALL, lam=0.5)
    assert_clean(at)
    before = metric(at, "Test error")
    at.button(key="auto_tune").click().run()
    assert_clean(at)
    tuned = at.session_state["_auto_tune"]
    for name, value in tuned["values"].items():
        assert at.session_state[name] == value, name
    assert tuned["values"]["lam"] < 0.5 and at.session_state["gamma_scale"] is False
    caption = next(c.value for c in at.caption if c.value.startswith("Auto-tune scored"))
    assert "the sidebar holds them" in caption
    assert len(tuned["results"]) >= 10 and float(metric(at, "Test error")[:-2]) <= float(
        before[:-2])
    # The table's caption names the m it scored: stage 1's, then each rung of the ladder.
    scored = sorted(tuned["results"]["m"].unique())
    assert len(scored) >= 2
    assert any(f"(m scored: {', '.join(f'{m:,}' for m in scored)})" in c.value
               for c in at.caption)
    # Its ladder reached its top here, where it scored the next γ up as well: the caption
    # says which, and the table holds it at that m.
    gamma, m, _ = tuned["gamma_step"]
    assert any(f"at m = {m:,} also γ = {gamma:.4g}" in c.value for c in at.caption)
    top = tuned["results"][tuned["results"]["m"] == m]
    assert gamma in top["gamma"].tolist() and gamma > tuned["ladder"]["gamma"]


def test_auto_tune_says_when_its_choice_takes_more_landmarks_than_it_was_scored_at():
    """Two classes whose ladder still gained at its top (m = 80 from the slider's 20, short
    of the 700 training rows) by more than a standard error: the sidebar gets twice that m,
    the headline gives the CV error at the m it was measured at, the table stars the setting
    scored, and the caption says why the m differs."""
    at = run_app(dataset="synthetic:classification", n_samples=1000, m=20, lam=0.5)
    at.button(key="auto_tune").click().run()
    assert_clean(at)
    tuned = at.session_state["_auto_tune"]
    assert tuned["scored_m"] == 80 and at.session_state["m"] == tuned["values"]["m"] == 160
    headline = next(c.value for c in at.caption if c.value.startswith("Auto-tune scored"))
    assert "m = 160 (CV error" in headline and " at m = 80)" in headline
    starred = tuned["results"][tuned["results"]["chosen"]]
    assert starred["m"].tolist() == [80]
    chosen = next(m.value for m in at.markdown if m.value.startswith("Chosen: CV error"))
    assert "on the training rows at m = 80; test error" in chosen
    assert any("The choice was scored at the ladder's top, m = 80, where it lowered the CV "
               "error by more than a standard error: its model takes m = 160" in c.value
               for c in at.caption)


def test_lesson_peeking_text_is_true():
    """36 cells scored on the same test rows; the choice flatters itself, as measured."""
    at = run_app()
    at.button(key="lesson_peeking").click().run()
    at.button(key="run_sweep").click().run()
    assert_clean(at)
    heatmap = figure_data(at.get("plotly_chart")[0])[0]
    assert heatmap["z"]["shape"] == "6, 6"
    warning = next(w.value for w in at.warning if "flatters" in w.value)
    gap = float(re.search(r"([+-][0-9.]+) points", warning).group(1))
    assert gap > 0, warning
    at.segmented_control(key="rob_select").set_value("cv").run()
    at.button(key="run_sweep").click().run()
    assert_clean(at)
    assert at.success[0].value.startswith("Chosen by 3-fold cross-validation")


def test_a_model_that_learned_little_is_said_and_auto_tune_fixes_it():
    """10 % positives (as ijcnn1) with the previous fixed λ = 1e-3 from a link: the model
    predicts about the majority class; the page says so, its hints point the right way (λ
    down, not up), and Auto-tune's choice learns (here to the exact SVC's best error on
    this split, 7.3 %)."""
    at = run_app({"lam": "0.001", "m": "50"}, dataset="synthetic:classification",
                 n_samples=2000, positive_fraction=0.1)
    assert at.session_state["lam"] == 1e-3 and at.session_state["m"] == 50
    assert_clean(at)
    warning = next(w.value for w in at.warning if "learned" in w.value)
    assert "**Auto-tune**" in warning
    hints = next(m.value for m in at.markdown if "Click **Auto-tune**" in m.value)
    assert "Lower **λ**" in hints and "Raise **λ**" not in hints
    at.button(key="auto_tune").click().run()
    assert_clean(at)
    assert not any("learned" in w.value for w in at.warning)
    error = float(metric(at, "Test error")[:-2])
    majority = float(next(m.delta for m in at.metric if m.label == "Test error").split()[1])
    assert error < majority - 1.0


def heatmap_cells(at):
    """The heatmap's clickable cells: (row value, λ, spread, seconds, value in %) each."""
    cells = next(t for t in figure_data(at.get("plotly_chart")[0]) if t.get("name") == "cells")
    return plotly_array(cells["customdata"])


def cell_text(at, name):
    return next(md.value for md in at.markdown if md.value.startswith(f"**Cell {name} ="))


@pytest.mark.parametrize("settings, expected", [
    ({}, "cell_boundary"),
    ({"dataset": "bundled:breast_cancer"}, "cell_margins"),
    ({"rob_grid": "gamma"}, "cell_boundary"),
])
def test_a_clicked_heatmap_cell_shows_the_model_the_sweep_scored(settings, expected):
    """Scored on the test rows with one seed: every cell, clicked, shows the sweep's own
    model, whose test error (measured by the page on its predictions) is the heatmap's
    value, with that model's convergence."""
    at = open_page("robustness", rob_size=2, rob_seeds=1, rob_select="test", **settings)
    at.button(key="run_sweep").click().run()
    assert_clean(at)
    cells = heatmap_cells(at)
    # One clickable marker per cell, carrying the cell's (m or γ, λ) and its test error.
    assert len(cells) == 4
    assert any("Click a cell" in i.value for i in at.info)
    name = "γ" if settings.get("rob_grid") == "gamma" else "m"
    for row, lam, _, _, error in cells:
        # What the page's on_select callback stores for a click (the browser test clicks).
        at.session_state["_heatmap_cell"] = (row, lam)
        at.run()
        assert_clean(at)
        text = cell_text(at, name)
        assert f"{name} = {row:g}, λ = {lam:g}**: the model the sweep trained with seed 0" \
            in text
        assert f"**test error {error:.1f} %** (the cell's value in the heatmap)" in text, text
        assert "retrained" not in text
        charts = {c.proto.id.split("-")[-1]: c for c in at.get("plotly_chart")}
        assert expected in charts and "cell_convergence" in charts
        curve = figure_data(charts["cell_convergence"])
        assert curve and curve[0]["name"].startswith("Snacks")
    assert not any("can differ" in c.value for c in at.caption)
    started = [c.value for c in at.caption if c.value.startswith("Its solver")]
    assert started and ("warm-started from its solution at λ" in started[0]
                        or "started from w = 0" in started[0])


def test_a_clicked_cross_validated_cell_shows_its_first_folds_model():
    """With cross-validation the cell shows fold 1's model: its validation error on the
    rows that fold held out is the sweep's entry for it, and the text gives the cell's mean
    over folds as the heatmap does."""
    at = open_page("robustness", rob_size=2, rob_seeds=1)
    at.button(key="run_sweep").click().run()
    row, lam, spread, _, error = heatmap_cells(at)[0]
    at.session_state["_heatmap_cell"] = (row, lam)
    at.run()
    assert_clean(at)
    table = at.session_state["_grid_result"]["table"]
    fold = table[(table.m == row) & (table.lam == lam) & (table.fold == 0)].iloc[0]
    text = cell_text(at, "m")
    assert "the sweep's model for fold 1 of 3 (seed 0)" in text
    assert f"**validation error is {100 * fold.test_error:.1f} %**" in text, text
    assert f"mean over the 3 folds: {error:.1f} % ± {spread:.1f} %" in text
    boundary = next(c for c in at.get("plotly_chart") if c.proto.id.endswith("cell_boundary"))
    names = [t.get("name", "") for t in figure_data(boundary)]
    assert any(n.startswith("validation ·") for n in names)
    assert not any(n.startswith("test ·") for n in names)


@pytest.mark.parametrize("select", ["test", "cv"])
def test_small_multiples_draw_every_cells_scored_model(select):
    """The thumbnails open on demand, one per cell laid out as the heatmap (largest m on
    top), each titled with the error of the model drawn, the best cell starred."""
    at = open_page("robustness", rob_size=2, rob_seeds=1, rob_select=select)
    at.button(key="run_sweep").click().run()
    assert_clean(at)
    expander = next(e for e in at.expander if e.label.startswith("Decision boundaries of"))
    assert expander.label == "Decision boundaries of the 4 cells, side by side"
    assert not any(c.proto.id.endswith("cell_thumbnails_chart") for c in at.get("plotly_chart"))
    at.session_state["cell_thumbnails"] = True
    at.run()
    assert_clean(at)
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith("cell_thumbnails_chart"))
    spec = json.loads(chart.proto.spec)
    titles = [a["text"] for a in spec["layout"]["annotations"]]
    table = at.session_state["_grid_result"]["table"]
    drawn = table[table.fold == 0] if select == "cv" else table
    ms, lams = sorted(drawn.m.unique(), reverse=True), sorted(drawn.lam.unique())
    expected = [f"{100 * drawn[(drawn.m == m) & (drawn.lam == lam)].test_error.iloc[0]:.1f} %"
                for m in ms for lam in lams]
    assert [t.removeprefix("★ ") for t in titles] == expected
    assert sum(t.startswith("★ ") for t in titles) == 1
    layout = spec["layout"]
    assert layout["yaxis"]["title"]["text"] == f"m = {ms[0]:g}"
    assert layout["xaxis3"]["title"]["text"] == f"λ = {lams[0]:g}"
    heatmap_best = next(i for i, cell in enumerate(values_text(
        figure_data(at.get("plotly_chart")[0])[0]["text"])) if cell.startswith("★"))
    # The heatmap's rows run bottom to top, the thumbnails' top to bottom.
    i, j = divmod(heatmap_best, 2)
    assert titles[(1 - i) * 2 + j].startswith("★ ")


def test_small_multiples_are_for_two_features_only():
    at = open_page("robustness", dataset="bundled:breast_cancer", rob_size=2, rob_seeds=1,
                   rob_select="test")
    at.button(key="run_sweep").click().run()
    assert_clean(at)
    assert not any(e.label.startswith("Decision boundaries of") for e in at.expander)


def test_every_dataset_starts_from_defaults_that_learn():
    """λ ≈ 0.02/n and m ≈ 2√n follow the data: on the data where a fixed λ = 1e-3 learned
    nothing (10 % positives), the defaults learn; a size change moves the settings still
    automatic, never one the user set; a new dataset gets its own defaults again."""
    at = run_app(dataset="synthetic:classification", n_samples=2000, positive_fraction=0.1)
    assert_clean(at)
    n_train = 1400
    assert at.session_state["lam"] == 2e-5 and at.session_state["m"] == 75
    assert not any("learned" in w.value for w in at.warning)
    error = float(metric(at, "Test error")[:-2])
    majority = float(next(m.delta for m in at.metric if m.label == "Test error").split()[1])
    # 8.2 % against 11.2 % for the majority and 7.3 % for the exact SVC at its best C: 77 %
    # of the kernel SVM's gain.
    assert error < majority - 2.5
    assert any(f"with n = {n_train:,} training rows; λ ≈ 0.02/n" in c.value for c in at.caption)
    at.select_slider(key="n_samples").set_value(5000).run()
    assert (at.session_state["lam"], at.session_state["m"]) == (5e-6, 100)
    at.select_slider(key="lam").set_value(1e-3).run()
    at.select_slider(key="n_samples").set_value(2000).run()
    assert (at.session_state["lam"], at.session_state["m"]) == (1e-3, 75)
    assert not any("λ ≈ 0.02/n" in c.value for c in at.caption)
    at.selectbox(key="dataset").set_value("bundled:breast_cancer").run()
    assert_clean(at)
    assert (at.session_state["lam"], at.session_state["m"]) == (5e-5, 50)


def test_a_link_keeps_its_own_lambda():
    at = run_app({"lam": "0.01", "dataset": "bundled:wine"})
    assert_clean(at)
    # m stays the data's default: 30 landmarks a class of wine's 3 is 90, the slider's
    # step below it 75.
    assert at.session_state["lam"] == 0.01 and at.session_state["m"] == 75
    assert at.session_state["C"] == 20.0


def test_c_as_the_sidebar_control():
    """With C chosen, the model trains with λ = 1/(2nC), the sidebar shows λ as derived,
    the hints speak of C, and switching back keeps the nearest λ."""
    at = run_app(dataset="bundled:breast_cancer")
    n_train = 398
    at.segmented_control(key="reg_by").set_value("C").run()
    assert_clean(at)
    assert at.session_state["C"] == 20.0  # C = 1/(2nλ) of λ = 5e-5 is 25.1
    assert not any(s.key == "lam" for s in at.select_slider)
    at.select_slider(key="C").set_value(0.5).run()
    assert_clean(at)
    lam = 1 / (2 * n_train * 0.5)
    assert any(f"λ = 1/(2nC) = **{lam:.3g}** with n = {n_train}" in c.value for c in at.caption)
    assert metric(at, "Objective F(w)")
    hints = next(m.value for m in at.markdown if "**C**" in m.value)
    assert "**λ**" not in hints.split("**C**")[0].splitlines()[-1]
    at.segmented_control(key="reg_by").set_value("lam").run()
    assert at.session_state["lam"] == 2e-3


def test_the_session_keeps_the_first_seeds_models_within_a_memory_cap(monkeypatch):
    """The page keeps one model per cell (the first seed's) apart from the table, and none
    when their embeddings would take more than the cap."""
    from sklearn.datasets import make_moons

    from snacks_core.app import heatmap
    from snacks_core.datasets import Split
    from snacks_core.model.estimator import SnacksClassifier
    from snacks_core.model.sweeps import GridSchedule, robustness_grid

    X, y = make_moons(200, noise=0.2, random_state=0)
    table = robustness_grid(
        X[:150], y[:150], X[150:], y[150:], m=[10, 20], lam=[1e-2, 1e-3], gamma=1.0,
        seeds=[3, 4], estimator=SnacksClassifier(max_epochs=5),
        schedule=GridSchedule(keep_models=heatmap.sweep_models_to_keep(3)))
    split = Split(X_train=X[:150], y_train=y[:150], X_test=X[150:], y_test=y[150:],
                  name="moons", feature_names=("x1", "x2"))
    result = heatmap.grid_result("key", table, "m", split)
    assert "model" not in result["table"] and len(result["table"]) == 8
    assert sorted(result["models"]) == [(10.0, 1e-3), (10.0, 1e-2), (20.0, 1e-3), (20.0, 1e-2)]
    assert result["models_seed"] == 3
    # The cells' models read prefixes of one group's embedding (m = 20 nests m = 10):
    # counted once.
    whole = result["models"][(10.0, 1e-3)].embedding_.embedding
    assert all(model.embedding_.embedding is whole for model in result["models"].values())
    assert result["models_bytes"] == whole.components_.nbytes + whole.landmarks_.nbytes
    monkeypatch.setattr(heatmap, "KEPT_MODELS_MAX_BYTES", result["models_bytes"] - 1)
    capped = heatmap.grid_result("key", table, "m", split)
    assert capped["models"] == {} and capped["models_bytes"] == result["models_bytes"]
    # An extension's block (smaller than the cap alone) is counted with the earlier ones,
    # whose models were dropped: the grid's bytes stay over the cap (the page then says
    # so) and no model comes back for only some cells.
    block = robustness_grid(
        X[:150], y[:150], X[150:], y[150:], m=[5], lam=[1e-2, 1e-3], gamma=1.0,
        seeds=[3, 4], estimator=SnacksClassifier(max_epochs=5),
        schedule=GridSchedule(keep_models=heatmap.sweep_models_to_keep(3)))
    extended = heatmap.grid_result("key2", block, "m", split, previous=capped)
    assert extended["models"] == {} and len(extended["table"]) == 12
    assert extended["models_bytes"] > heatmap.KEPT_MODELS_MAX_BYTES


def test_an_edge_cell_is_said_and_one_click_extends_the_grid_reusing_its_cells():
    """On a 2 × 2 grid every cell is on an edge; on spirals the error still falls towards
    the best cell's two edges: the page says which, and its button adds one step beyond
    the one that can grow (m is already all the 140 training rows), computing only the new
    cells (the old ones keep their values)."""
    at = open_page("robustness", dataset="synthetic:spirals", rob_size=2, rob_seeds=1,
                   rob_select="test")
    at.button(key="run_sweep").click().run()
    assert_clean(at)
    before = figure_data(at.get("plotly_chart")[0])[0]
    warning = next(w.value for w in at.warning if "best cell is at" in w.value)
    assert "the good models may lie beyond the grid" in warning
    extend = at.button(key="extend_grid")
    assert extend.label == "Extend the grid: smaller λ"
    extend.click().run()
    assert_clean(at)
    after = figure_data(at.get("plotly_chart")[0])[0]
    old, new = plotly_array(before["z"]), plotly_array(after["z"])
    assert new.size > old.size
    rows = [after["y"].index(y) for y in before["y"]]
    cols = [after["x"].index(x) for x in before["x"]]
    np.testing.assert_array_equal(new[np.ix_(rows, cols)], old)
    grown = [name for name in ("rob_lam_below", "rob_lam_above", "rob_axis_below",
                               "rob_axis_above") if at.session_state[name] == 1]
    assert grown == ["rob_lam_below"], grown
    assert "smallest λ tried" in warning and "largest m tried" in warning
    assert "m cannot go higher here (m is at most the 140 rows a cell trains on" in warning
    assert new.shape == (2, 3) and "Default axes" in [b.label for b in at.button]
    assert not any("Click **Run sweep**" in info.value for info in at.info)


def test_an_edge_extended_the_most_steps_offers_no_button_and_says_why(monkeypatch):
    """At GRID_EXTRA_MAX steps an edge cannot grow (the page probes the clamped step, as the
    button sets it): the warning says why, and the button offers only the other edge."""
    from types import SimpleNamespace

    from snacks_core.app import heatmap

    shown = {"warning": [], "button": []}
    monkeypatch.setattr(heatmap, "st", SimpleNamespace(
        warning=lambda text, **_: shown["warning"].append(text),
        button=lambda label, **_: shown["button"].append(label)))
    extras = dict.fromkeys(heatmap.EXTENSION_SETTINGS.values(), 0)
    extras["rob_lam_below"] = heatmap.GRID_EXTRA_MAX
    axes = ([10.0, 20.0], [1e-3, 1e-2])
    grown = {"rob_axis_above": ([10.0, 20.0, 40.0], axes[1])}
    heatmap.edge_warning([("lam", 0), ("axis", 1)], "m", axes,
                         lambda setting: grown.get(setting, axes), "rows", extras)
    [warning] = shown["warning"]
    assert "λ cannot go lower here (the grid is already 6 steps beyond its default" in warning
    assert shown["button"] == ["Extend the grid: larger m"]
    assert heatmap.one_more_step(heatmap.GRID_EXTRA_MAX) == heatmap.GRID_EXTRA_MAX == 6


def test_an_upload_of_many_classes_gets_the_grown_default_m_and_says_why():
    """Ten classes of 3,429 rows on 30 features: the sidebar's m starts at 1,200, the
    default rule's 300 doubled twice as a default fit's is, and the caption under the
    slider says why; moving the slider removes it."""
    from sklearn.datasets import make_classification

    X, y = make_classification(3429, 30, n_informative=20, n_redundant=0, n_classes=10,
                               n_clusters_per_class=1, random_state=3)
    rows = np.column_stack([X, y])
    content = ("".join(f"x{j}," for j in range(30)) + "label\n" + "".join(
        ",".join(f"{v:.4f}" for v in row[:-1]) + f",{int(row[-1])}\n" for row in rows)).encode()
    at = open_page("data")
    at.file_uploader[0].upload("ten.csv", content, "text/csv").run()
    at.button(key="use_upload").click().run()
    at.switch_page("app_pages/playground.py").run()
    assert_clean(at)
    assert at.session_state["m"] == 1200
    captions = [c.value for c in at.sidebar.caption]
    assert any(c.startswith("m = 1,200: the rule's 300 doubled") for c in captions)
    at.select_slider(key="m").set_value(300).run()
    assert not any("doubled" in c.value for c in at.sidebar.caption)
