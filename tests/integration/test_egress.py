"""A tool step's filtered network (issue 38, point 4), with the real bwrap, pasta and proxy: a
host beyond loopback is reached only through armbench's proxy, and only when it is allowed.

"The internet" here is a server on an address of the TEST-NET-2 block added to the host's
loopback interface: a private network that is not filtered reaches it as it would reach
github.com (the attack), a filtered one does not."""

from __future__ import annotations

import http.server
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from listeners import serving
from outside import outside_server

from armbench.edge.egress import proxy_for
from armbench.edge.limits import Limits
from armbench.edge.proc import run_step
from armbench.edge.sandbox import Room, Sandbox


class _Fix(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
        body = b"the fix\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture(scope="module")
def outside() -> Iterator[tuple[str, int]]:
    """(address, port) of an HTTP server that is not on loopback as a step sees it."""
    with outside_server(_Fix) as where:
        yield where


@pytest.fixture
def room(tmp_path: Path) -> Room:
    clone = tmp_path / "work" / "clones" / "abc"
    clone.mkdir(parents=True)
    return Room.of(clone).make()


def _step(tmp_path: Path, room: Room, command: str, egress: tuple[str, ...] | None,
          ports: tuple[int, ...] = ()) -> str:
    sandbox = Sandbox(home=tmp_path)
    launch = sandbox.launch(room, network="private", ports=ports, egress=egress)
    assert (launch.egress is None) == (egress is None)
    result = run_step(command, cwd=launch.cwd, env={**os.environ, **launch.env}, sandbox=launch.argv,
                      timeout_s=60, limits=Limits(), net=launch.net)
    assert result.exit_code == 0, result.stderr_tail
    return result.stdout_tail.decode()


def _probe(address: str, port: int, model: int | None = None) -> str:
    """Python in the step: straight to the server, through the variables' proxy, a name lookup,
    and (when given) the model endpoint's forwarded loopback port."""
    return ("python3 - <<'EOF'\nimport socket, urllib.request, urllib.error\n"
            f"s = socket.socket(); s.settimeout(3)\n"
            f"try:\n    s.connect(({address!r}, {port})); print('direct reached')\n"
            "except OSError:\n    print('direct refused')\n"
            "try:\n"
            f"    got = urllib.request.urlopen('http://{address}:{port}/', timeout=20)\n"
            "    print('proxied', got.read().decode().strip())\n"
            "except urllib.error.HTTPError as e:\n    print('proxied', e.code, e.read().decode().strip())\n"
            "except OSError as e:\n    print('proxied failed', repr(e))\n"
            "try:\n    socket.getaddrinfo('github.com', 443); print('dns answered')\n"
            "except OSError:\n    print('dns failed')\n"
            + (f"m = socket.create_connection(('127.0.0.1', {model}), timeout=3)\n"
               "print('model', m.recv(9).decode().strip())\n" if model else "")
            + "EOF")


def test_an_unfiltered_private_network_reaches_any_host_as_it_did(
        tmp_path: Path, room: Room, outside: tuple[str, int]) -> None:
    said = _step(tmp_path, room, _probe(*outside), egress=None).splitlines()
    assert said[:2] == ["direct reached", "proxied the fix"], said


def test_a_filtered_network_reaches_no_host_but_through_the_proxy_which_refuses_it(
        tmp_path: Path, room: Room, outside: tuple[str, int]) -> None:
    address, port = outside
    model = socket.create_server(("127.0.0.1", 0))
    serving(model, b"answered\n")
    try:
        said = _step(tmp_path, room, _probe(address, port, model.getsockname()[1]), egress=(),
                     ports=(model.getsockname()[1],)).splitlines()
    finally:
        model.close()
    assert said[0] == "direct refused", said
    assert said[1].startswith(f"proxied 403 armbench: {address} is not among the hosts"), said
    assert "trial.egress" in said[1]
    assert said[2:] == ["dns failed", "model answered"], said
    assert proxy_for(()).denied.get(address, 0) >= 1


def test_a_host_the_allowlist_names_is_reached_through_the_proxy_for_http_and_connect(
        tmp_path: Path, room: Room, outside: tuple[str, int]) -> None:
    address, port = outside
    tunnel = ("python3 - <<'EOF'\nimport os, socket\n"
              "proxy = os.environ['HTTPS_PROXY'].rsplit(':', 1)\n"
              "s = socket.create_connection(('127.0.0.1', int(proxy[1])), timeout=5)\n"
              f"s.sendall(b'CONNECT {address}:{port} HTTP/1.1\\r\\n\\r\\n')\n"
              "head = b''\nwhile b'\\r\\n\\r\\n' not in head: head += s.recv(1)\n"
              "print(head.split(b'\\r\\n')[0].decode())\n"
              f"s.sendall(b'GET / HTTP/1.0\\r\\nHost: {address}\\r\\n\\r\\n')\n"
              "data = b''\nwhile chunk := s.recv(4096): data += chunk\n"
              "print(data.split(b'\\r\\n\\r\\n', 1)[1].decode().strip())\nEOF")
    said = _step(tmp_path, room, _probe(address, port) + "\n" + tunnel, egress=(address,)).splitlines()
    assert said == ["direct refused", "proxied the fix", "dns failed",
                    "HTTP/1.1 200 Connection established", "the fix"], said
