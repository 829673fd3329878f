"""Output paths, checked before any work, and labels written as the training file had them."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np


def check_writable(path):
    """Refuse an output path that cannot be written, before any work (nothing is created)."""
    target = Path(path)
    folder = target.parent
    if target.is_dir():
        problem = "it is a folder"
    elif not folder.is_dir():
        problem = f"there is no folder {folder}"
    elif not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        problem = "permission denied"
    else:
        return
    raise ValueError(f"cannot write {path}: {problem}.")


def label_texts(classes) -> list:
    """Each class as a label is written in a LIBSVM file: integral numbers without a decimal
    point ('1', '-1'), other numbers in their shortest exact form, text as it is."""
    if np.asarray(classes).dtype.kind == "f":
        return [str(int(v)) if v.is_integer() else repr(v) for v in classes.tolist()]
    return [str(v) for v in np.asarray(classes).tolist()]
