"""Regenerate the files of sample_data/ (fixed seeds: the same bytes every time).

    python sample_data/make_sample_data.py
"""

from snacks_core.datasets import write_sample_data

if __name__ == "__main__":
    for path in write_sample_data():
        print("wrote", path)
