"""``make run``: the Streamlit server, with the solvers' warm-up started at the same time.

``streamlit run app.py`` runs nothing of the app before the first visitor arrives, so that
visitor would wait while the solvers load (or compile, on a fresh checkout).  This starts
the warm-up (by importing :mod:`snacks_core.app.server`) in the server's own process, then
runs Streamlit's command line as ``streamlit run app.py`` with the arguments given
(``python -m snacks_core.app.launch --server.port 8502``); the app shares the warm-up
because it imports the same module.
"""

from __future__ import annotations

import sys
from pathlib import Path

from streamlit.web import cli

from snacks_core.app import server  # noqa: F401 (imported for what importing it starts)

APP = Path(__file__).resolve().parent.parent.parent / "app.py"


def main(argv=None) -> None:
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
