"""Output paths, checked before any work and written whole or not at all, and labels written
as the training file had them.

Nothing lost (DESIGN.md): no command writes over one of its own inputs (the same path, or the
same file through a link), and every output is written to a temporary file in the target's
folder, renamed into place only when complete, so that an interrupted run leaves the old file
as it was and no partial file behind.
"""

from __future__ import annotations

import contextlib
import glob
import os
import stat
import tempfile
from pathlib import Path

import numpy as np


def check_writable(path, inputs=()):
    """Refuse an output path that cannot be written, or that is one of the command's
    ``inputs`` (``(option, path)`` pairs, e.g. ``("DATA", "train.svm")``), before any work
    (nothing is created)."""
    target = Path(path)
    folder = target.parent
    for option, given in inputs:
        # A glob (a cluster's DATA) names each file it matches.
        sources = ([] if given is None else glob.glob(str(given)) if glob.has_magic(str(given))
                   else [given])
        source = next((s for s in sources if _same_file(target, Path(s))), None)
        if source is not None:
            raise ValueError(f"cannot write {path}: it is {option} ({source}), an input of this "
                             "command; writing there would destroy it. Choose another output "
                             "file.")
    if target.is_dir():
        problem = "it is a folder"
    elif not folder.is_dir():
        problem = f"there is no folder {folder}"
    elif not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        problem = "permission denied"
    else:
        return
    raise ValueError(f"cannot write {path}: {problem}.")


def _same_file(target, source) -> bool:
    """Whether two paths name one file: the same path once links are resolved, or the same
    inode (a hard link)."""
    try:
        return target.resolve() == source.resolve() or (
            target.exists() and source.exists() and os.path.samefile(target, source))
    except OSError:
        return False


@contextlib.contextmanager
def replaced_when_complete(path, mode="w"):
    """A file object that becomes ``path`` only when the block ends without an error: it is
    written as a temporary file in the same folder (a rename there is atomic), then renamed
    over ``path``; on an error or Ctrl-C the temporary file is removed and ``path`` keeps its
    old content.  A stream (``/dev/stdout``, a FIFO) is written directly."""
    target = Path(path)
    if target.exists() and not stat.S_ISREG(os.stat(target).st_mode):
        # A stream (/dev/stdout, a FIFO, a terminal) is written as it is: it has no old
        # content to keep, and a rename would replace the device's name.
        with open(target, mode) as out:
            yield out
        return
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial",
                                         dir=target.parent)
    try:
        with os.fdopen(handle, mode) as out:
            yield out
        if target.exists():
            # The new file keeps the old one's permissions, as writing over it would.
            os.chmod(temporary, target.stat().st_mode & 0o7777)
        else:
            os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def write_bytes_when_complete(path, data: bytes):
    """``data`` as the file ``path``, written as :func:`replaced_when_complete` writes."""
    with replaced_when_complete(path, "wb") as out:
        out.write(data)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def label_texts(classes) -> list:
    """Each class as a label is written in a LIBSVM file: integral numbers without a decimal
    point ('1', '-1'), other numbers in their shortest exact form, text as it is."""
    if np.asarray(classes).dtype.kind == "f":
        return [str(int(v)) if v.is_integer() else repr(v) for v in classes.tolist()]
    return [str(v) for v in np.asarray(classes).tolist()]
