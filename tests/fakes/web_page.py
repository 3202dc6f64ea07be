"""A web server on 127.0.0.1 that answers every GET with one HTML page: what a probe meets when
an address it was given is a login page or a proxy instead of an API."""

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def html_page_server(page: bytes = b"<html><body>Login required</body></html>") -> Iterator[str]:
    """The server's base URL while the block runs."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
