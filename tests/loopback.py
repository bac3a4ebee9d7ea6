"""A threaded HTTP server on a free loopback port, for tests that serve something of their own."""

from __future__ import annotations

import contextlib
import http.server
import threading


@contextlib.contextmanager
def served(handler):
    """Serve ``handler`` on 127.0.0.1 (a free port) in a thread; yields the base URL, no trailing slash.
    The server is shut down and closed on exit."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
