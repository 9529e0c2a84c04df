"""A read-only web server on 127.0.0.1 (the standard library's), for `armbench dashboard`.

It answers GET and HEAD only, with what `respond` gives for the path, and refuses a request
whose Host header is not this loopback address (a web page elsewhere cannot reach it through
DNS rebinding). Every answer carries the Content-Security-Policy it is given and no caching.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple
from urllib.parse import unquote, urlsplit

from armbench.ledger.errors import Refusal

__all__ = ["Answer", "serve"]

HOST = "127.0.0.1"


class Answer(NamedTuple):
    """One response: status, content type, body."""

    status: int
    content_type: str
    body: bytes


def _handler(respond: Callable[[str], Answer], csp: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "armbench-dashboard"
        sys_version = ""

        def _answer(self, with_body: bool) -> None:
            port = self.server.server_port  # type: ignore[attr-defined]
            if self.headers.get("Host") not in (f"{HOST}:{port}", f"localhost:{port}"):
                got = Answer(403, "text/plain; charset=utf-8", b"Forbidden: not a loopback host\n")
            else:
                try:
                    got = respond(unquote(urlsplit(self.path).path))
                except Exception as exc:  # a page that fails is a 500 with the reason, not a hang
                    print(f"dashboard: {self.path}: {exc}", file=sys.stderr)
                    got = Answer(500, "text/plain; charset=utf-8", b"Internal error\n")
            self.send_response(got.status)
            for name, value in (("Content-Type", got.content_type),
                                ("Content-Length", str(len(got.body))),
                                ("Content-Security-Policy", csp),
                                ("X-Content-Type-Options", "nosniff"),
                                ("Referrer-Policy", "no-referrer"),
                                ("Cache-Control", "no-store")):
                self.send_header(name, value)
            self.end_headers()
            if with_body:
                self.wfile.write(got.body)

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self._answer(True)

        def do_HEAD(self) -> None:  # noqa: N802
            self._answer(False)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

    return Handler


def serve(respond: Callable[[str], Answer], *, port: int, csp: str,
          ready: Callable[[str], None]) -> None:
    """Serve until interrupted; `ready` is told the address once the port is bound."""
    try:
        server = ThreadingHTTPServer((HOST, port), _handler(respond, csp))
    except OSError as exc:
        raise Refusal(f"The dashboard could not listen on {HOST}:{port} ({exc.strerror or exc}). "
                      "Another program (or another dashboard) may hold that port: pick another "
                      "with --port, or --port 0 for any free one.", code="port_unavailable") from None
    server.daemon_threads = True
    try:
        ready(f"http://{HOST}:{server.server_port}/")
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
