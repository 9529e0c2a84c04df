"""What a trial's tool reaches beyond its forwarded loopback ports: an allowlisting proxy.

A tool step's private network (`edge.usernet`) is, when filtered, a namespace with no way out
at all: its interface is never configured, so there is no route, no DNS and no address but
loopback. The only doors are the forwarded host loopback ports: the model endpoint's, and this
module's proxy, which armbench runs in its own process, outside every sandbox. The tool gets
`HTTPS_PROXY` and `HTTP_PROXY` naming it (and `NO_PROXY` for loopback), and the proxy opens a
connection only to a host on the step's allowlist: `CONNECT host:port` for TLS, an absolute
`http://host/...` request for plain HTTP. A host not on it gets `403` with a line saying which
host and how to allow it (`trial.egress`). A tool that ignores the proxy variables reaches
nothing: the filter fails closed.

The allowlist is names (`api.anthropic.com`, `*.example.com` for every name below it) or
addresses; a name is resolved by the proxy, never by the step. One proxy serves every step with
the same allowlist, for the life of the process, so a pooled namespace that forwards its port
stays reusable. Where armbench itself must go through a proxy (`HTTPS_PROXY` in its own
environment), this one chains to it.
"""

from __future__ import annotations

import atexit
import contextlib
import ipaddress
import os
import selectors
import socket
import socketserver
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["HEAD_MAX", "Proxy", "allowed", "close", "normal_hosts", "origin_form", "proxy_env", "proxy_for"]

HEAD_MAX = 64 * 1024
"""The longest request head the proxy reads before it refuses the request."""
_CONNECT_S = 15.0
"""How long opening a connection to an allowed host may take."""
_IDLE_S = 600.0
"""How long a relayed connection may stay silent both ways before it is closed."""
_LOOPBACK = "localhost,127.0.0.1,::1"


def normal_hosts(hosts: Iterable[str]) -> tuple[str, ...]:
    """An allowlist's entries as the proxy compares them: lower case, no trailing dot, no
    brackets around an IPv6 address, each once, sorted."""
    found = {h.strip().lower().rstrip(".").strip("[]") for h in hosts}
    return tuple(sorted(h for h in found if h))


def allowed(host: str, hosts: Iterable[str]) -> bool:
    """Whether `host` (a name or an address, as a request names it) is on the allowlist `hosts`:
    equal to an entry, or below a `*.` entry's name. Pure."""
    host = host.lower().rstrip(".").strip("[]")
    for entry in hosts:
        if entry.startswith("*."):
            if host.endswith(entry[1:]) and host != entry[2:]:
                return True
        elif host == entry:
            return True
    return False


def proxy_env(port: int) -> dict[str, str]:
    """The variables that send a step's HTTP and HTTPS through the proxy on `port` (both cases:
    curl reads only the lower-case `http_proxy`, some runtimes only the upper), loopback direct."""
    url = f"http://127.0.0.1:{port}"
    env: dict[str, str] = {}
    for name, value in (("https_proxy", url), ("http_proxy", url), ("all_proxy", url),
                        ("no_proxy", _LOOPBACK)):
        env[name] = env[name.upper()] = value
    return env


@dataclass(frozen=True)
class _Upstream:
    """A proxy armbench itself must go through (its own `HTTPS_PROXY`)."""

    host: str
    port: int

    @classmethod
    def of(cls, environ: Mapping[str, str]) -> _Upstream | None:
        for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
            if value := environ.get(name):
                try:
                    url = urlsplit(value if "://" in value else f"http://{value}")
                    if url.hostname and url.scheme == "http":
                        return cls(url.hostname, url.port or 80)
                except ValueError:
                    return None
        return None


class Proxy:
    """One allowlist's proxy on a host loopback port, serving until `close`."""

    def __init__(self, hosts: tuple[str, ...], upstream: _Upstream | None = None) -> None:
        self.hosts, self.upstream = hosts, upstream
        self.denied: dict[str, int] = {}
        """Hosts refused, with how often: for messages and tests."""
        self._lock = threading.Lock()
        proxy = self

        class _Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy._serve(self.request)

        class _Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = _Server(("127.0.0.1", 0), _Handler)
        self.port: int = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, name=f"egress-{self.port}",
                         daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _serve(self, client: socket.socket) -> None:
        client.settimeout(30.0)
        try:
            head = _read_head(client)
        except (OSError, ValueError):
            return
        if head is None:
            _reply(client, 400, "armbench: the request head is too long or malformed.")
            return
        request, rest = head
        try:
            method, target, host, port = _target(request)
        except ValueError as exc:
            _reply(client, 400, f"armbench: {exc}.")
            return
        if not allowed(host, self.hosts) and not _is_literal_in(host, self.hosts):
            with self._lock:
                self.denied[host] = self.denied.get(host, 0) + 1
            _reply(client, 403, f"armbench: {host} is not among the hosts this trial's tool may "
                   f"reach ({', '.join(self.hosts) or 'none but its model endpoint'}); list it in "
                   "the suite's trial.egress, or set trial.egress: any.")
            return
        try:
            upstream = self._open(method, host, port)
        except OSError as exc:
            _reply(client, 502, f"armbench: could not reach {host}:{port}: {exc}.")
            return
        with upstream:
            if method == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
            else:  # an origin gets the origin form (`GET /path`), an upstream proxy the absolute
                upstream.sendall((request if self.upstream is not None else origin_form(request)) + rest)
            _relay(client, upstream)

    def _open(self, method: str, host: str, port: int) -> socket.socket:
        if self.upstream is None:
            return socket.create_connection((host, port), timeout=_CONNECT_S)
        sock = socket.create_connection((self.upstream.host, self.upstream.port), timeout=_CONNECT_S)
        if method == "CONNECT":
            sock.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            got = _read_head(sock)
            status = got[0].split(b" ", 2)[1:2] if got is not None else []
            if status != [b"200"]:
                sock.close()
                raise OSError("the upstream proxy refused the connection")
        return sock


def _is_literal_in(host: str, hosts: Iterable[str]) -> bool:
    """An IPv6 address written differently from its allowlist entry (`::1` and `0:0::1`)."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    for entry in hosts:
        with contextlib.suppress(ValueError):
            if ipaddress.ip_address(entry) == address:
                return True
    return False


def _read_head(sock: socket.socket) -> tuple[bytes, bytes] | None:
    """The request (or response) head through its blank line, and what came after it; None
    when it is longer than HEAD_MAX or the peer closed first."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > HEAD_MAX:
            return None
        chunk = sock.recv(16384)
        if not chunk:
            return None
        data += chunk
    end = data.index(b"\r\n\r\n") + 4
    return data[:end], data[end:]


def _target(request: bytes) -> tuple[str, str, str, int]:
    """(method, target, host, port) of a request head; ValueError naming what is wrong."""
    line = request.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    if len(parts) != 3:
        raise ValueError(f"a request line should be METHOD TARGET VERSION, not {line[:80]!r}")
    method, target, _ = parts
    if method == "CONNECT":
        url = urlsplit(f"//{target}")
    elif target.startswith("http://"):
        url = urlsplit(target)
    else:
        raise ValueError("only CONNECT and absolute http:// requests go through this proxy")
    try:
        port = url.port or 80
    except ValueError:
        raise ValueError(f"bad port in {target[:80]!r}") from None
    if not url.hostname or (method == "CONNECT" and url.port is None):
        raise ValueError(f"no host and port in {target[:80]!r}")
    return method, target, url.hostname, port


def origin_form(request: bytes) -> bytes:
    """A plain-HTTP request head as its origin server takes it (RFC 9112 3.2.1): the absolute
    target `http://host:port/path?q` of the request line made `/path?q`, the rest as it was.
    Pure."""
    line, sep, rest = request.partition(b"\r\n")
    method, target, version = line.split(b" ")
    url = urlsplit(target.decode("latin-1"))
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    return b" ".join((method, path.encode("latin-1"), version)) + sep + rest


def _reply(client: socket.socket, status: int, text: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    body = (text + "\n").encode()
    with contextlib.suppress(OSError):
        client.sendall(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\n"
                       f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)


def _relay(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until both sides are done (a half-close passed on) or both idle."""
    a.settimeout(None)
    b.settimeout(None)
    with selectors.DefaultSelector() as sel:
        sel.register(a, selectors.EVENT_READ, b)
        sel.register(b, selectors.EVENT_READ, a)
        open_ = 2
        while open_:
            ready = sel.select(_IDLE_S)
            if not ready:
                return
            for key, _ in ready:
                src: socket.socket = key.fileobj  # type: ignore[assignment]
                dst: socket.socket = key.data
                try:
                    chunk = src.recv(65536)
                except OSError:
                    return
                if chunk:
                    try:
                        dst.sendall(chunk)
                    except OSError:
                        return
                    continue
                sel.unregister(src)
                open_ -= 1
                with contextlib.suppress(OSError):
                    dst.shutdown(socket.SHUT_WR)


_PROXIES: dict[tuple[str, ...], Proxy] = {}
_LOCK = threading.Lock()


def proxy_for(hosts: Iterable[str]) -> Proxy:
    """The running proxy of this allowlist (started at its first step)."""
    key = normal_hosts(hosts)
    with _LOCK:
        if key not in _PROXIES:
            _PROXIES[key] = Proxy(key, _Upstream.of(os.environ))
        return _PROXIES[key]


def close() -> None:
    """Stop every proxy this process started."""
    with _LOCK:
        proxies = list(_PROXIES.values())
        _PROXIES.clear()
    for proxy in proxies:
        with contextlib.suppress(OSError):
            proxy.close()


atexit.register(close)
