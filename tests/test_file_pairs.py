"""Files read as one run: one LIBSVM index base and one width for a training file, a test
file and files to predict on (scikit-learn's load_svmlight_files as the oracle); files to
predict on with one label or none; gzip files followed by bytes that are not gzip."""

import gzip
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_svmlight_files

from snacks_core import datasets

# A zero-based training file, and a test file of the same columns whose rows lack index 0.
TRAIN_ZERO = b"1 0:1 2:0.5\n-1 1:2\n1 0:3 3:1\n"
TEST_NO_ZERO = b"-1 1:1\n1 2:4 3:1\n"


def _write(tmp_path, name, raw):
    path = tmp_path / name
    path.write_bytes(raw)
    return path


def test_a_test_file_without_index_0_is_read_with_the_training_files_base(tmp_path):
    train, test = (_write(tmp_path, "train.svm", TRAIN_ZERO),
                   _write(tmp_path, "test.svm", TEST_NO_ZERO))
    # Alone, the test file would be read one-based: every column shifted by one.
    assert datasets.load_file(test, purpose="predict").index_base == 1
    read_train, read_test = datasets.load_files([train, test])
    assert read_train.index_base == read_test.index_base == 0
    assert read_test.X.shape == (2, 4) and read_train.X.shape == (3, 4)
    np.testing.assert_array_equal(read_test.X.toarray(), [[0, 1, 0, 0], [0, 0, 4, 1]])
    theirs = load_svmlight_files([str(train), str(test)], zero_based="auto")
    np.testing.assert_array_equal(read_test.X.toarray(), theirs[2].toarray())


@pytest.mark.parametrize("seed", range(6))
def test_the_base_and_width_agree_with_scikit_learn(tmp_path, seed):
    rng = np.random.default_rng(seed)
    paths = []
    for k in range(3):
        X = sp.random(8, 6, density=0.4, random_state=seed * 10 + k, format="csr")
        y = np.where(np.arange(8) % 2, 1, -1)
        paths.append(tmp_path / f"part{k}.svm")
        dump_svmlight_file(X, y, str(paths[-1]), zero_based=bool(rng.integers(2)))
    ours = datasets.load_files(paths)
    theirs = load_svmlight_files([str(p) for p in paths], zero_based="auto")
    for k, data in enumerate(ours):
        np.testing.assert_array_equal(data.X.toarray(), theirs[2 * k].toarray())
        np.testing.assert_array_equal(data.y, theirs[2 * k + 1])
    assert len({data.index_base for data in ours}) == 1


def test_an_index_0_in_a_file_read_one_based_names_the_base_file_and_line(tmp_path):
    path = _write(tmp_path, "train.svm", b"# header\n1 1:1\n-1 2:1\n\n1 0:1 3:2\n")
    with pytest.raises(ValueError, match=r"train.svm, line 5: index 0 in a file read as "
                                         r"one-based; .*index_base=0"):
        datasets.load_file(path, index_base=1)
    with pytest.raises(ValueError, match="train.svm, line 5: index 0"):
        datasets.load_files([_write(tmp_path, "ok.svm", b"1 1:1\n-1 2:1\n"), path],
                            index_base=1)
    zero = datasets.load_file(path, index_base=0)
    assert zero.index_base == 0 and zero.X.shape == (3, 4)
    one = datasets.load_libsvm(b"1 1:1\n-1 3:1\n", index_base=0)
    assert one.index_base == 0 and one.X.shape == (2, 4)


def test_n_features_widens_a_narrower_file_and_refuses_a_wider_one(tmp_path):
    path = _write(tmp_path, "new.svm", b"1 1:1\n-1 2:1\n1 5:1\n")
    assert datasets.load_file(path, n_features=9).X.shape == (3, 9)
    with pytest.raises(ValueError, match=r"new.svm, line 3: feature index 5 is beyond the 4 "
                                         r"features expected"):
        datasets.load_file(path, n_features=4)
    # Read zero-based, index 5 is the sixth column: beyond five.
    with pytest.raises(ValueError, match=r"line 3: feature index 5 is beyond the 5 features "
                                         r"expected \(read zero-based"):
        datasets.load_file(path, n_features=5, index_base=0)
    with pytest.raises(ValueError, match=r"line 3: feature index 5 is beyond the 5 features "
                                         r"expected \(read zero-based"):
        datasets.load_files([_write(tmp_path, "z.svm", b"1 0:1\n-1 1:1\n"), path],
                            n_features=5)
    assert datasets.load_file(path, n_features=5).X.shape == (3, 5)
    with pytest.raises(ValueError, match="n_features must be an integer >= 1"):
        datasets.load_file(path, n_features=0)


def test_files_to_predict_on_may_hold_one_label(tmp_path):
    path = _write(tmp_path, "batch.svm", b"0 1:1\n0 2:1 3:1\n")
    with pytest.raises(ValueError, match="all rows have the same label .*at least two classes"):
        datasets.load_file(path)
    data = datasets.load_file(path, purpose="predict", n_features=4)
    assert data.X.shape == (2, 4) and data.y.tolist() == [0, 0]
    train = _write(tmp_path, "train.svm", b"1 1:1\n-1 2:1\n")
    read_train, read_batch = datasets.load_files([train, path], purpose=("train", "predict"))
    assert read_batch.X.shape == read_train.X.shape == (2, 3)
    with pytest.raises(ValueError, match="at least two classes"):
        datasets.load_files([train, path])
    with pytest.raises(ValueError, match="2 files but 1 purposes"):
        datasets.load_files([train, path], purpose=["train"])
    with pytest.raises(ValueError, match="purpose must be one of"):
        datasets.load_file(path, purpose="score")
    with pytest.raises(ValueError, match="index_base must be 'auto', 0 or 1"):
        datasets.load_file(path, index_base="one")
    with pytest.raises(ValueError, match=r"line 2: the label '2:1' is not a number.* A file to "
                                         r"predict on needs one too: any number, such as 0"):
        datasets.load_libsvm(b"0 1:1\n2:1\n", purpose="predict")
    with pytest.raises(ValueError, match="the data has no labels; a file to train on needs"):
        datasets.make_dataset([[1.0], [2.0]], None, "rows")
    assert datasets.make_dataset([[1.0], [2.0]], None, "rows", purpose="predict").y is None


def test_a_csv_to_predict_on_may_lack_its_label_column(tmp_path):
    for raw in (b"a,b\n1,2\n3,4\n", b"1,2\n3,4\n"):
        path = _write(tmp_path, "new.csv", raw)
        data = datasets.load_file(path, n_features=2, purpose="predict")
        assert data.y is None and data.class_counts() == {} and data.classes.size == 0
        np.testing.assert_array_equal(data.X, [[1, 2], [3, 4]])
        python = datasets.load_csv(raw, n_features=2, purpose="predict")
        assert python.y is None and python.X.tolist() == data.X.tolist()
        with pytest.raises(ValueError, match="new.csv has 2 columns where 2 feature columns "
                                             "and a label column are expected"):
            datasets.load_file(path, n_features=2)
    labelled = _write(tmp_path, "one.csv", b"a,b,label\n1,2,yes\n3,4,yes\n")
    data = datasets.load_file(labelled, n_features=2, purpose="predict")
    assert data.y.tolist() == ["yes", "yes"] and data.label_column == "label"
    with pytest.raises(ValueError, match=r"one.csv has 3 columns where 4 feature columns and "
                                         r"a label column \(or, to predict on, none\)"):
        datasets.load_file(labelled, n_features=4, purpose="predict")
    assert datasets.load_file(labelled, purpose="predict").index_base is None


def test_parquet_and_npy_files_keep_to_the_width_and_the_purpose(tmp_path):
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0], "label": [1, 1]})
    frame.to_parquet(tmp_path / "t.parquet")
    np.save(tmp_path / "t.npy", frame.to_numpy())
    for name in ("t.parquet", "t.npy"):
        data = datasets.load_file(tmp_path / name, purpose="predict", n_features=2)
        assert data.y.tolist() == [1, 1]
        with pytest.raises(ValueError, match=f"{name} has 2 feature columns where 3 are"):
            datasets.load_file(tmp_path / name, purpose="predict", n_features=3)
        with pytest.raises(ValueError, match="at least two classes"):
            datasets.load_file(tmp_path / name)


def _gzip_with_garbage(text, garbage=b"GARBAGE" * 3):
    raw = gzip.compress(text)
    return raw + garbage, len(raw), len(garbage)


@pytest.mark.parametrize("name, text", [("g.svm.gz", b"1 1:1\n-1 2:0.5\n"),
                                         ("g.csv.gz", b"x,y,label\n1,2,a\n3,4,b\n")])
def test_gzip_followed_by_other_bytes_is_read_as_gzip_reads_it(tmp_path, name, text):
    raw, offset, ignored = _gzip_with_garbage(text)
    path = _write(tmp_path, name, raw)
    clean = datasets.load_file(_write(tmp_path, "clean" + name[1:], gzip.compress(text)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = datasets.load_file(path)
    notes = [str(w.message) for w in caught if name in str(w.message)]
    assert notes == [f"{name}: the {ignored} bytes after the gzip data (from byte {offset} of "
                     "the file) are not gzip data and were ignored, as gzip does ('trailing "
                     "garbage ignored')."]
    np.testing.assert_array_equal(np.asarray(sp.csr_matrix(data.X).todense()),
                                  np.asarray(sp.csr_matrix(clean.X).todense()))
    assert data.y.tolist() == clean.y.tolist()


def test_gzip_members_one_after_another_and_gzip_cut_short(tmp_path):
    raw = gzip.compress(b"1 1:1\n") + gzip.compress(b"-1 2:1\n") + bytes(4)
    with pytest.warns(UserWarning, match=r"the 4 bytes after the gzip data"):
        data = datasets.load_libsvm(raw, name="two.svm.gz")
    assert data.y.tolist() == [1, -1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert datasets.load_libsvm(raw[:-4], name="two.svm.gz").n_samples == 2
    with pytest.raises(ValueError, match="cut.svm.gz, line .*gzip data is corrupt or cut short"):
        datasets.load_libsvm(gzip.compress(b"1 1:1\n-1 2:1\n" * 50)[:-12], name="cut.svm.gz")
    with pytest.raises(ValueError, match="crc.svm.gz.*corrupt or cut short"):
        good = gzip.compress(b"1 1:1\n-1 2:1\n")
        datasets.load_libsvm(good[:-8] + bytes(8), name="crc.svm.gz")


def test_a_first_look_at_a_gzip_file_says_nothing_of_its_trailing_bytes():
    raw, _, _ = _gzip_with_garbage(b"x,label\n1,a\n2,b\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert datasets.sniff_format(raw, name="p.csv.gz") == "csv"
        assert datasets.csv_columns(raw) == ["x", "label"]
    with pytest.warns(UserWarning, match="p.csv.gz: the 21 bytes after the gzip data"):
        datasets.load_csv(raw, name="p.csv.gz")
