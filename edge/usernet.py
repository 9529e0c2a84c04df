"""A sandboxed step's private network: its own namespace, reached out of by user-mode networking.

The step runs in a network namespace of its own: the host's loopback (127.0.0.1 services, a
running dashboard) and its abstract Unix sockets (which belong to a network namespace) are not
there, and `/proc/net/unix` lists only the step's own sockets. `pasta` (Debian's `passt`)
connects the namespace to the network as an unprivileged user process would, with every port
forwarding off (`-t none -u none -T none -U none`) and the gateway not mapped to the host
(`--no-map-gw`), except the host loopback ports the step's tool needs: each is forwarded from the
namespace's 127.0.0.1 to the host's (`-T PORT`), so a model endpoint such as
`ANTHROPIC_BASE_URL=http://127.0.0.1:8080` keeps working.

The namespace is made and connected before the step starts, so the step never runs without its
network: util-linux's `unshare --net=<file>` makes it bound to a file under `/run/armbench/netns`,
pasta joins it by that file (it drops its capabilities before it opens a namespace, so a
`/proc/<pid>/ns/net` of the non-dumpable sandbox is out of its reach), and the sandbox is started
in it with `nsenter --net=<file>` (bubblewrap without `--unshare-net`, whose own loopback set-up
would race pasta's). Binding a namespace to a file needs root: elsewhere `available()` is False,
and a plan's default network is then the host's (the record says which a trial had).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import secrets
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["Namespace", "PrivateNet", "available", "close", "endpoint_hosts", "loopback_ports", "pasta",
           "private_network"]

_URL_SUFFIXES = ("_BASE_URL", "_API_BASE", "_API_URL", "_ENDPOINT", "_HOST")
"""Variables that name a model endpoint (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`,
`GOOGLE_GEMINI_BASE_URL`, `OLLAMA_HOST`, ...)."""
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "ip6-localhost")
_NETNS = Path("/run/armbench/netns")
_IDLE_MAX = 4
"""Namespaces kept for later steps: more than a machine's lanes rarely need."""


@dataclass(frozen=True)
class PrivateNet:
    """A step's private network: the host loopback ports forwarded into it."""

    ports: tuple[int, ...] = ()
    proxy: int | None = None
    """The host loopback port of `edge.egress`'s proxy, forwarded too: the network is filtered."""

    @property
    def filtered(self) -> bool:
        """No way out but the forwarded ports (its interface never configured): what the step
        reaches beyond them is what the proxy lets it."""
        return self.proxy is not None

    @property
    def forwarded(self) -> tuple[int, ...]:
        """Every host loopback port forwarded into the namespace: `ports` and the proxy's."""
        return tuple(sorted({*self.ports, *([self.proxy] if self.proxy is not None else [])}))


def _endpoints(env: Mapping[str, str]) -> Iterator[tuple[str, int | None]]:
    """(host, port) of each model endpoint a variable names (`http://127.0.0.1:8080`)."""
    for name, value in env.items():
        if not name.endswith(_URL_SUFFIXES) or "://" not in value and not name.endswith("_HOST"):
            continue
        try:
            url = urlsplit(value if "://" in value else f"http://{value}")
            host, port = url.hostname, url.port or {"http": 80, "https": 443}.get(url.scheme)
        except ValueError:
            continue
        if host:
            yield host, port


def loopback_ports(env: Mapping[str, str], extra: tuple[int, ...] = ()) -> tuple[int, ...]:
    """The host loopback ports the step's model endpoints name (`http://127.0.0.1:8080`), plus
    `extra` (`workflows.sandbox_ports`), sorted."""
    found = set(extra)
    for host, port in _endpoints(env):
        if host in _LOOPBACK and port:
            found.add(port)
    return tuple(sorted(found))


def endpoint_hosts(env: Mapping[str, str]) -> tuple[str, ...]:
    """The hosts beyond loopback the step's model endpoint variables name (a gateway's
    `ANTHROPIC_BASE_URL=https://llm.corp.example/v1`): what a filtered network lets it reach."""
    return tuple(sorted({host.lower() for host, _ in _endpoints(env) if host not in _LOOPBACK}))


@functools.cache
def pasta() -> str | None:
    """The `pasta` executable, or None where passt is not installed."""
    return shutil.which(os.environ.get("ARMBENCH_PASTA", "pasta"))


def available() -> bool:
    """Whether a private network can be made here: root, with pasta, unshare and nsenter."""
    return os.geteuid() == 0 and pasta() is not None and all(
        shutil.which(tool) for tool in ("unshare", "nsenter", "mount", "umount"))


@dataclass
class Namespace:
    """One connected network namespace: its file, its pasta, the ports it forwards."""

    path: Path
    ports: tuple[int, ...]
    filtered: bool = False
    reusable: bool = True
    """Cleared by the step that had it when something of that step may have outlived it."""

    @property
    def pidfile(self) -> Path:
        return self.path.with_suffix(".pid")

    @property
    def prefix(self) -> list[str]:
        """The command line prefix that starts a process in it."""
        return [shutil.which("nsenter") or "nsenter", f"--net={self.path}", "--"]

    def alive(self) -> bool:
        """Whether its pasta still runs."""
        try:
            os.kill(int(self.pidfile.read_text().strip()), 0)
        except (OSError, ValueError):
            return False
        return True

    def remove(self) -> None:
        _remove(self.path, self.pidfile)


class _Pool:
    """The namespaces of this process, each used by one step at a time: a step takes an idle one
    forwarding its ports, or a new one is made, and gives it back when every process of it has
    ended (its PID namespace gone). A step has no capabilities, so it cannot change a
    namespace's addresses, routes, firewall or sysctls: what it leaves is only sockets, which end
    with its processes. Made once per lane rather than once per step, the namespace and its pasta
    cost a run about nothing a trial (`python -m perf.bench_sandbox`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[Namespace] = []
        """Given back, oldest first (at most _IDLE_MAX: the rest are removed)."""
        self._made: list[Namespace] = []

    def take(self, net: PrivateNet, wait_s: float) -> Namespace:
        dead: list[Namespace] = []
        found: Namespace | None = None
        with self._lock:
            for namespace in reversed(self._idle):
                if (namespace.ports, namespace.filtered) == (net.forwarded, net.filtered):
                    self._idle.remove(namespace)
                    if namespace.alive():
                        found = namespace
                        break
                    self._made.remove(namespace)
                    dead.append(namespace)
        for namespace in dead:
            namespace.remove()
        if found is not None:
            return found
        made = _make(net, wait_s)
        with self._lock:
            self._made.append(made)
        return made

    def give(self, namespace: Namespace) -> None:
        gone = [namespace]
        with self._lock:
            if namespace.reusable and namespace in self._made:
                self._idle.append(namespace)
                gone = self._idle[:-_IDLE_MAX]
                del self._idle[:-_IDLE_MAX]
            for old in gone:
                if old in self._made:
                    self._made.remove(old)
        for old in gone:
            old.remove()

    def close(self) -> None:
        with self._lock:
            made, self._made, self._idle = self._made, [], []
        for namespace in made:
            namespace.remove()


_POOL = _Pool()
atexit.register(_POOL.close)


def close() -> None:
    """Remove every namespace this process made (at its exit; `cli.output.exit_now` calls it,
    as its fast exit runs no `atexit`)."""
    _POOL.close()


@contextlib.contextmanager
def private_network(net: PrivateNet, wait_s: float = 10.0) -> Iterator[Namespace]:
    """A connected network namespace forwarding `net.ports` for one step (`prefix` starts a
    process in it), given back when the step is done. OSError naming the cause when it cannot
    be made."""
    namespace = _POOL.take(net, wait_s)
    try:
        yield namespace
    finally:
        _POOL.give(namespace)


def _make(net: PrivateNet, wait_s: float) -> Namespace:
    """A new namespace bound to a file, connected by pasta (see the module's docstring); a
    filtered one's interface is left unconfigured (down, no address, no route), so only the
    forwarded ports, which pasta splices on loopback, lead out."""
    exe = pasta()
    if exe is None:
        raise OSError("pasta is not installed (Debian and Ubuntu: apt-get install passt)")
    if os.geteuid() != 0:
        raise OSError("a private network needs root here (a network namespace bound to a file)")
    _NETNS.mkdir(parents=True, exist_ok=True, mode=0o700)
    _swept()
    ports = net.forwarded
    made = Namespace(_NETNS / f"{os.getpid()}-{secrets.token_hex(6)}", ports, net.filtered)
    try:
        made.path.touch(mode=0o600)
        _run(["unshare", f"--net={made.path}", "true"], wait_s, "its network namespace could not be made")
        forward = ",".join(map(str, ports)) or "none"
        configure = [] if net.filtered else ["--config-net"]
        _run([exe, *configure, "--quiet", "-t", "none", "-u", "none", "-T", forward, "-U", "none",
              "--no-map-gw", "--runas", "0", "--netns", str(made.path), "--pid", str(made.pidfile)],
             wait_s, "pasta could not connect its network")
    except BaseException:
        made.remove()
        raise
    return made


def _remove(path: Path, pidfile: Path) -> None:
    """Stop pasta and unbind and delete the namespace's file."""
    _stop(pidfile)
    subprocess.run(["umount", "-l", str(path)], stdin=subprocess.DEVNULL, capture_output=True,
                   check=False)
    for done in (path, pidfile):
        with contextlib.suppress(OSError):
            done.unlink()


@functools.cache
def _swept() -> None:
    """Once per process: remove what an armbench killed mid-step left (its namespaces' files
    and their pasta), named `<pid>-<token>` after a process that has ended."""
    for path in _NETNS.glob("*-*"):
        pid = path.name.split("-", 1)[0]
        if path.suffix != ".pid" and pid.isdigit() and not Path(f"/proc/{pid}").exists():
            _remove(path, path.with_suffix(".pid"))


def _run(argv: list[str], wait_s: float, what: str) -> None:
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=wait_s,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OSError(f"the step's {what}: {exc}") from None
    if done.returncode != 0:
        said = [line for line in done.stderr.decode(errors="replace").splitlines()
                if "syslog" not in line][-1:] or ["(nothing)"]
        raise OSError(f"the step's {what}: {said[0]}")


def _stop(pidfile: Path) -> None:
    """End pasta (it would also end once the namespace is gone; it is not left to chance)."""
    with contextlib.suppress(OSError, ValueError):
        os.kill(int(pidfile.read_text().strip()), signal.SIGKILL)
