"""``snacks datasets``: list the built-in datasets; download public LIBSVM ones."""

from __future__ import annotations

from snacks_core import datasets
from snacks_core.cli.data import A9A_LIKE


def run(args) -> int:
    """List the datasets, or download those named."""
    if args.download:
        names = list(datasets.LIBSVM_DATASETS) if args.download == ["all"] else args.download
        unknown = [n for n in names if n not in datasets.LIBSVM_DATASETS]
        if unknown:
            raise ValueError(f"unknown LIBSVM dataset(s) {', '.join(unknown)}; choose from "
                             f"{', '.join(datasets.LIBSVM_DATASETS)} or 'all'.")
        for name in names:
            data = datasets.fetch_libsvm(name, cache_dir=args.cache_dir)
            test = "" if data.X_test is None else f" + {data.X_test.shape[0]} test rows"
            print(f"{name}: {data.n_samples} rows{test}, {data.n_features} features in "
                  f"{datasets.libsvm_cache_dir(args.cache_dir) / name}")
        return 0
    cached = set(datasets.cached_libsvm_datasets(args.cache_dir))
    print("synthetic (--n-samples rows):  " + ", ".join(datasets.SYNTHETIC))
    print(f"a9a-shaped generator:          {A9A_LIKE}")
    print("bundled with scikit-learn:     " + ", ".join(datasets.BUNDLED))
    print(f"sample files ({datasets.sample_data_dir()}):")
    print("                               " + ", ".join(datasets.sample_files()))
    print(f"public LIBSVM datasets (cache: {datasets.libsvm_cache_dir(args.cache_dir)}):")
    for name, source in datasets.LIBSVM_DATASETS.items():
        mark = "cached" if name in cached else "      "
        print(f"  {mark}  {name:<14} {source.about}")
    print("or the path of a CSV or LIBSVM file; 'snacks datasets --download NAME' fetches one.")
    return 0
