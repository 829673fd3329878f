"""A real HTTP server of a test's own, on the loopback, serving one folder (no mock): the
URLs that fsspec reads in the tests of remote files."""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # the test's output holds the command's lines only
        pass


@contextlib.contextmanager
def serving(folder):
    """``http://127.0.0.1:PORT`` serving the files of ``folder``; the server is shut down
    and its thread joined after the block."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
