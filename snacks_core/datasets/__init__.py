"""Datasets: synthetic generators, bundled and file datasets, all validated on the way in.

Every source returns a :class:`Dataset`: a numeric ``X`` (dense array or CSR matrix), labels
``y`` (any two or more values; a file read to predict on may hold one, or none), names, and
optionally a predefined test split.  Files are
parsed by our own readers so that an error names the line and says what to do; nothing is
unpickled or evaluated.

One concept a module; everything public is imported from here:

- :mod:`.dataset`: the :class:`Dataset` and :class:`Split` types, :func:`make_dataset`;
- :mod:`.synthetic`: generated problems (toy 2-D shapes, a9a- and SUSY-shaped data);
- :mod:`.bundled`: scikit-learn's bundled datasets;
- :mod:`.drawn`: points a user draws on a plane (the app's Playground), their text form;
- :mod:`.streams`: the decompressed text of a file as a stream of line chunks, and the two
  policies of limits (:data:`UPLOAD_LIMITS` for the app's uploads, :data:`LOCAL_FILE_LIMITS`
  for a user's own files: memory only);
- :mod:`.labels`: class labels read from a file;
- :mod:`.csv_reader`, :mod:`.libsvm_reader` (with its jitted parser
  :mod:`._libsvm_kernels`), :mod:`.columnar` (pyarrow batches, Parquet) and
  :mod:`.npy_reader`: the file formats; :mod:`.files` picks one by the file's name
  (:func:`load_file`), and reads the files of one run (training, test, prediction) with one
  LIBSVM index base and one width (:func:`load_files`);
- :mod:`.sample_data`: the files the project generates and ships in ``sample_data/``;
- :mod:`.download`: public LIBSVM datasets, downloaded and verified before they are cached;
- :mod:`.scaling`: the one feature scaling ('auto' by the kind of data), fitted in memory
  or from per-partition sums, and as a model file stores it;
- :mod:`.split`: train/test split (or a test file's rows), scaling and the 2-D projection.
"""

from snacks_core.datasets.bundled import BUNDLED, load_bundled
from snacks_core.datasets.columnar import load_parquet
from snacks_core.datasets.csv_reader import csv_columns, load_csv
from snacks_core.datasets.dataset import Dataset, FeatureNames, Split, make_dataset
from snacks_core.datasets.download import (
    DOWNLOAD_DEADLINE,
    LIBSVM_BASE_URL,
    LIBSVM_DATASETS,
    MAX_DOWNLOAD_BYTES,
    DownloadError,
    LibsvmSource,
    cached_libsvm_datasets,
    fetch_libsvm,
    libsvm_cache_dir,
)
from snacks_core.datasets.files import file_kind, fingerprint, load_file, load_files, sniff_format
from snacks_core.datasets.libsvm_reader import INDEX_BASES, decide_index_base, load_libsvm
from snacks_core.datasets.npy_reader import load_npy
from snacks_core.datasets.sample_data import sample_data_dir, sample_files, write_sample_data
from snacks_core.datasets.scaling import SCALINGS
from snacks_core.datasets.split import split_dataset, with_test_part
from snacks_core.datasets.streams import (
    LOCAL_FILE_LIMITS,
    MAX_CLASSES,
    MAX_FEATURES,
    MAX_ROWS,
    MAX_TEXT_BYTES,
    UPLOAD_LIMITS,
    ReadLimits,
)
from snacks_core.datasets.synthetic import (
    A9A_GROUP_SIZES,
    MAX_SYNTHETIC_SAMPLES,
    SYNTHETIC,
    make_a9a_like,
    make_susy_like,
    make_synthetic,
)

__all__ = [
    "A9A_GROUP_SIZES",
    "LOCAL_FILE_LIMITS",
    "BUNDLED",
    "DOWNLOAD_DEADLINE",
    "INDEX_BASES",
    "LIBSVM_BASE_URL",
    "LIBSVM_DATASETS",
    "MAX_CLASSES",
    "MAX_DOWNLOAD_BYTES",
    "MAX_FEATURES",
    "MAX_ROWS",
    "MAX_SYNTHETIC_SAMPLES",
    "MAX_TEXT_BYTES",
    "SCALINGS",
    "SYNTHETIC",
    "UPLOAD_LIMITS",
    "Dataset",
    "DownloadError",
    "FeatureNames",
    "LibsvmSource",
    "ReadLimits",
    "Split",
    "cached_libsvm_datasets",
    "csv_columns",
    "fetch_libsvm",
    "file_kind",
    "fingerprint",
    "sniff_format",
    "libsvm_cache_dir",
    "load_bundled",
    "load_csv",
    "load_file",
    "load_files",
    "load_libsvm",
    "decide_index_base",
    "load_npy",
    "load_parquet",
    "make_a9a_like",
    "make_dataset",
    "make_susy_like",
    "make_synthetic",
    "sample_data_dir",
    "sample_files",
    "split_dataset",
    "with_test_part",
    "write_sample_data",
]
