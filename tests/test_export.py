"""The Playground's export panel: the code it shows runs (in a fresh Python process) for every
kind of dataset and gives the model the app trained; the .npz it offers is the whole
pipeline (scaling included) and predicts on raw rows as the app's model does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from snacks_core.app.state import Keys
from snacks_core.persistence import pipeline_from_npz

pytestmark = pytest.mark.slow  # each test runs the Streamlit app

APP = str(Path(__file__).resolve().parent.parent / "app.py")
ROOT = Path(__file__).resolve().parent.parent

# A CSV whose label is the first column and written as words: the exported code must name
# the label column to read it back.
UPLOAD = ("grade,hours,score\n" + "".join(
    f"{'pass' if a + b > 100 else 'fail'},{a:.3f},{b:.3f}\n"
    for a, b in np.random.default_rng(1).normal(50, 20, size=(160, 2)))).encode()


@pytest.fixture
def downloads(monkeypatch):
    """The bytes of every file the app offers for download, by media file id."""
    files = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def record(self, path_or_data, mimetype, kind, filename=None):
        file_id = original(self, path_or_data, mimetype, kind, filename)
        files[file_id] = path_or_data
        return file_id

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    return files


def downloaded(at, downloads, key):
    """The bytes the download button ``key`` offers, and nothing when there is none."""
    buttons = [b for b in at.get("download_button") if b.proto.id.endswith(key)]
    assert buttons, f"no download button {key}"
    return downloads[buttons[0].proto.url.rsplit("/", 1)[1].split(".")[0]]


def test_the_exported_code_downloads_as_a_python_file(downloads):
    """Beside the code's copy icon, a button saves the same code as a .py file."""
    at = playground(SMALL)
    payload = downloaded(at, downloads, "download_code")
    text = payload.decode() if isinstance(payload, bytes) else payload
    assert text.rstrip("\n") == at.code[0].value.rstrip("\n")
    button = next(b for b in at.get("download_button") if b.proto.id.endswith("download_code"))
    assert button.proto.label.endswith("(.py)")


def playground(settings, upload=None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    # The export is built while its expander is open.
    for name, value in {**settings, Keys.EXPORT: True}.items():
        at.session_state[name] = value
    at.run()
    if upload is not None:
        at.switch_page("app_pages/data.py").run()
        at.file_uploader[0].upload("students.csv", upload, "text/csv").run()
        at.selectbox(key=next(s.key for s in at.selectbox if s.label == "Label column")) \
            .set_value("grade").run()
        at.button(key="use_upload").click().run()
        at.switch_page("app_pages/playground.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def run_exported(code, folder, split_args):
    """Run the exported code alone in ``folder`` and keep its results in .npy files."""
    script = code + (
        "\nimport numpy as np\n"
        f"raw = split_dataset(dataset, {split_args})\n"
        "np.save('test_pred.npy', model.predict(split.X_test))\n"
        "if 'pipeline' in globals():\n"
        "    np.save('raw_pred.npy', pipeline.predict(raw.X_test))\n"
        "    np.save('raw_score.npy', pipeline.decision_function(raw.X_test))\n")
    (folder / "exported.py").write_text(script)
    result = subprocess.run([sys.executable, "exported.py"], cwd=folder, capture_output=True,
                            text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


SMALL = {"n_samples": 200, "m": 20, "max_epochs": 20}


@pytest.mark.parametrize("settings, upload", [
    ({**SMALL}, None),
    ({**SMALL, "dataset": "bundled:breast_cancer", "scaling": "minmax", "pca2d": True}, None),
    ({**SMALL, "dataset": "sample:two_spirals.csv"}, None),
    ({**SMALL, "dataset": "sample:a9a_small.svm"}, None),
    ({**SMALL, "solver": "libsvm", "dataset": "bundled:wine"}, None),
    ({**SMALL}, UPLOAD),
], ids=["synthetic", "bundled-minmax-pca", "sample-csv", "sample-libsvm", "libsvm-multiclass",
        "upload-label-column"])
def test_exported_code_runs_and_gives_the_apps_model(settings, upload, downloads, tmp_path,
                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)
    at = playground(settings, upload)
    if upload is not None:
        assert at.session_state["dataset"].startswith("upload:")
        (tmp_path / "students.csv").write_bytes(upload)
    code = at.code[0].value
    request_seed, test_size = at.session_state["seed"], at.session_state["test_size"]
    split_args = f"test_size={test_size}, scaling='none', random_state={request_seed}"
    stdout = run_exported(code, tmp_path, split_args)

    # The error the code prints is the app's test error.
    printed = float(stdout.split("test error:")[1].split()[0])
    shown = next(m.value for m in at.metric if m.label == "Test error")
    assert f"{100 * printed:.1f} %" == shown

    # The downloaded model (the app's own, with its scaling) predicts on raw rows as the
    # exported pipeline does.
    payload = downloaded(at, downloads, "download_model")
    app_pipeline = pipeline_from_npz(payload)
    exec_globals = {}
    exec(compile(f"from snacks_core.datasets import split_dataset\n"
                 f"{code.split('split = split_dataset')[0]}\n"
                 f"raw = split_dataset(dataset, {split_args})\n", "data", "exec"),
         exec_globals)
    raw_test = exec_globals["raw"].X_test
    np.testing.assert_array_equal(np.load(tmp_path / "raw_pred.npy"),
                                  app_pipeline.predict(raw_test))
    np.testing.assert_allclose(np.load(tmp_path / "raw_score.npy"),
                               app_pipeline.decision_function(raw_test), rtol=1e-7, atol=1e-9)


def test_admm_export_says_why_there_is_no_model_file_and_its_code_runs(downloads, tmp_path):
    at = playground({**SMALL, "solver": "admm"})
    # The code downloads; there is no model file to download.
    assert [b.key for b in at.get("download_button")] == ["download_code"]
    notes = [i.value for i in at.info if "No .npz file for this model" in i.value]
    assert notes and "cluster tree" in notes[0]
    code = at.code[0].value
    assert "model_to_npz" not in code
    stdout = run_exported(code, tmp_path, "test_size=0.3, scaling='none', random_state=0")
    printed = float(stdout.split("test error:")[1].split()[0])
    assert f"{100 * printed:.1f} %" == next(m.value for m in at.metric
                                            if m.label == "Test error")
