"""A stand-in for the internet in tests: an HTTP server on an address of the TEST-NET-2 block
(198.51.100.0/24, never routed), added to the host's loopback interface for the test. A step's
unfiltered private network reaches it as it would reach github.com; nothing else of the host's
loopback is there."""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import secrets
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = ["outside_server"]


@contextlib.contextmanager
def outside_server(serve: Path | type[http.server.BaseHTTPRequestHandler]) -> Iterator[tuple[str, int]]:
    """(address, port) of a server beyond loopback that serves `serve`: a folder's files (a bare
    repository after `git update-server-info` is one git fetches over dumb HTTP) or a handler."""
    assert os.geteuid() == 0, "an address on the host's interface, and a private network, need root"
    address = f"198.51.100.{secrets.randbelow(200) + 20}"
    subprocess.run(["ip", "addr", "add", f"{address}/32", "dev", "lo"], check=True)
    handler = serve if isinstance(serve, type) else functools.partial(_Quiet, directory=str(serve))
    server = http.server.ThreadingHTTPServer((address, 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield address, int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        subprocess.run(["ip", "addr", "del", f"{address}/32", "dev", "lo"], check=False)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        return
