"""Progress on stderr: one line per long phase of a fit, and the heatmap's bar of cells."""

from __future__ import annotations

import sys
import time


class Progress:
    """One line per long phase on stderr, redrawn in place at most twice a second:
    ``snacks: embedding  812,000 / 1,400,000 rows  61,200 rows/s  13 s  ~10 s left``
    (for training, the time left at most: the budget of epochs, which a stop rule cuts)."""

    UNITS = {"reading": "rows", "embedding": "rows", "training": "epochs",
             "predicting": "rows"}

    def __init__(self, stream):
        self.stream, self.phase, self.shown = stream, None, 0.0

    @classmethod
    def for_args(cls, args):
        """A progress line for ``--progress`` (auto: when stderr is a terminal), or None."""
        wanted = {"always": True, "never": False}.get(args.progress, sys.stderr.isatty())
        return cls(sys.stderr) if wanted else None

    def reader(self, name):
        """The callback of a file reader: rows so far, bytes of text, bytes of the file."""

        def report(rows, text_bytes, file_bytes):
            fraction = (text_bytes / file_bytes if text_bytes is not None and file_bytes
                        and text_bytes <= file_bytes else None)
            self(f"reading {name}", rows, None, fraction)

        return report

    def __call__(self, phase, done, total, fraction=None):
        now = time.perf_counter()
        if phase != self.phase:
            self.end()
            self.phase, self.start, self.shown = phase, now, 0.0
        if fraction is None and total:
            fraction = done / total
        self.last = (phase, done, total, fraction)
        finished = fraction is not None and fraction >= 1.0
        if now - self.shown < 0.5 and not finished:
            return
        self.shown = now
        self._draw(now, phase, done, total, fraction, finished)

    def _draw(self, now, phase, done, total, fraction, finished):
        elapsed = now - self.start
        unit = self.UNITS.get(phase.split()[0], "rows")
        count = f"{done:,.2f}" if unit == "epochs" else f"{int(done):,}"
        line = f"snacks: {phase}  {count}" + (f" / {total:,.0f}" if total else "") + f" {unit}"
        if elapsed > 0:
            line += f"  {done / elapsed:,.{2 if unit == 'epochs' else 0}f} {unit}/s"
        line += f"  {elapsed:.0f} s"
        if fraction and not finished:
            left = elapsed * (1 - fraction) / fraction
            # Training may stop early (tol, held-out error): its budget only bounds it.
            line += f"  {'at most ' if unit == 'epochs' else '~'}{left:.0f} s left"
        self.stream.write(f"\r{line:<78}")
        self.stream.flush()

    def end(self):
        """Draw the phase's last state and end its line."""
        if self.phase is not None:
            phase, done, total, fraction = self.last
            self._draw(time.perf_counter(), phase, done, total, fraction, True)
            self.stream.write("\n")
            self.stream.flush()
            self.phase = None


class ProgressBar:
    """``[#####.....] 57/156 cells, 12 s, ~9 s left`` redrawn in place on stderr."""

    def __init__(self, stream, on_row=None, width=30):
        self.stream, self.width, self.on_row = stream, width, on_row
        self.start = time.perf_counter()

    def __call__(self, done, total, row):
        if self.on_row is not None:
            self.on_row(row)
        elapsed = time.perf_counter() - self.start
        filled = int(self.width * done / total)
        left = elapsed / done * (total - done)
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} "
                          f"cells, {elapsed:.0f} s, ~{left:.0f} s left ")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


class CompileWatch:
    """numba's compiling, watched while a command runs (a context manager): the first time
    a function of the package is compiled rather than loaded from the cache, one line says so
    on ``stream``; :attr:`seconds` adds up the time spent compiling.  Loading compiled code
    from the cache is not compiling: a warm run prints nothing."""

    MESSAGE = "snacks: compiling (once after installing)…"

    def __init__(self, stream):
        self.stream, self.seconds, self.compiled = stream, 0.0, False
        self._depth, self._started, self._listener = 0, 0.0, None

    def __enter__(self):
        from numba.core import event

        watch = self

        class Listener(event.Listener):
            # Compiling a function compiles the ones it calls inside its own event.
            def on_start(self, event):
                watch._depth += 1
                if watch._depth == 1:
                    watch._started = time.perf_counter()
                    if not watch.compiled:
                        watch.compiled = True
                        watch.stream.write(watch.MESSAGE + "\n")
                        watch.stream.flush()

            def on_end(self, event):
                watch._depth -= 1
                if watch._depth == 0:
                    watch.seconds += time.perf_counter() - watch._started

        self._listener = Listener()
        event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc):
        from numba.core import event

        event.unregister("numba:compile", self._listener)
        return False
