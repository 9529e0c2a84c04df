"""A listening socket served on a thread, for tests that check a step cannot reach it (and that
the host, as a control, can): one helper for TCP, filesystem and abstract Unix sockets."""

from __future__ import annotations

import contextlib
import socket
import threading

__all__ = ["serving"]


def serving(server: socket.socket, answer: bytes = b"") -> list[bytes]:
    """Serve a bound, listening `server` on a daemon thread until it is closed: each connection
    is sent `answer`, then noted in the returned list by what it sent first (up to 64 bytes, or
    `(connected)` when it sent nothing within a second) and closed."""
    took: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(1.0)
                sent = b""
                with contextlib.suppress(OSError):
                    if answer:
                        conn.sendall(answer)
                    sent = conn.recv(64)
                took.append(sent or b"(connected)")

    threading.Thread(target=serve, daemon=True).start()
    return took
