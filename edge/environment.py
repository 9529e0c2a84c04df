"""A task's environment: the root filesystem its steps see as `/`, from a folder or an image.

An environment is `rootfs: <folder>` (used in place) or `image: <reference>` read from a file,
never pulled from a registry: `oci-archive:<file.tar>`, `oci:<layout folder>` or
`docker-archive:<file.tar>` (the names `skopeo` gives them; `podman image save` and `docker save`
write the archives). An image's layers are unpacked once into a content-addressed cache,
`~/.armbench/cache/rootfs/<digest>/root`, beside a manifest of every file's hash that is checked
before each use (a damaged tree is unpacked again). Unpacking (`edge.layers`) keeps the rules of
`tarfile`'s `data` filter (no device files, no absolute or `..` names, no hard links out, no
set-uid bits, owners mapped to the unpacking user); on top of them, a symbolic link may point
anywhere (it is resolved inside the sandbox's root), but nothing is ever written through one, and
OCI whiteouts are applied. Each file is hashed as it is written, so the first manifest needs no
second read of the tree.

The digest names the environment in the record: an image's manifest digest (a docker archive's
config digest), or for a folder the hash of its manifest.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from armbench.edge.config import armbench_home
from armbench.edge.layers import Span, Tree, UnsafeEntry, layer_tar, members
from armbench.edge.tree import remove_tree, tree_bytes
from armbench.ledger.errors import Refusal

__all__ = ["CachedRoot", "EnvironmentRefused", "Resolved", "cache_dir", "cached_roots",
           "manifest_of", "remove_cached", "resolve", "root_of"]

Kind = Literal["image", "rootfs"]
_TRANSPORTS = ("oci-archive:", "oci:", "docker-archive:")
_CHUNK = 1 << 20


class EnvironmentRefused(Refusal):
    """An environment that cannot be used: nothing is started (exit 2)."""

    code = "environment_refused"

    def __init__(self, code: str, what: str, found: str, fix: str) -> None:
        self.code = code
        self.found = found
        self.fix = fix
        super().__init__(f"[{code}] The environment {what} cannot be used: {found}. {fix}")


@dataclass(frozen=True)
class Resolved:
    """An environment ready to bind: its root folder and the digest the record names."""

    kind: Kind
    source: str
    digest: str
    root: Path


def cache_dir() -> Path:
    """Where unpacked images live: `~/.armbench/cache/rootfs`."""
    return armbench_home() / "cache" / "rootfs"


def resolve(kind: Kind, source: str, *, base: Path) -> Resolved:
    """The environment's root and digest; an image is unpacked into the cache when it is not
    there, or when its cached tree fails its manifest. Raises EnvironmentRefused."""
    if kind == "rootfs":
        root = (base / Path(source).expanduser()).resolve()
        if not root.is_dir():
            raise EnvironmentRefused("environment_unreadable", f"rootfs {source}",
                                     f"{root} is not a folder", "Point `rootfs:` at an unpacked root "
                                     "filesystem (for example one made by mmdebstrap).")
        _needs_shell(root, f"rootfs {source}")
        return Resolved(kind, source, "sha256:" + _digest_of(manifest_of(root)), root)
    image = _Image.open(source, base)
    root = _cached(image)
    return Resolved(kind, source, image.digest, root)


def root_of(kind: Kind, source: str, digest: str, *, base: Path) -> Path:
    """The root of an environment frozen in a plan, checked against its digest before use."""
    got = _resolve_once(kind, source, str(base))
    if got.digest != digest:
        raise EnvironmentRefused("environment_digest_mismatch", f"{kind} {source}",
                                 f"its digest is now {got.digest}, the plan froze {digest}",
                                 "Restore the environment the plan was made with, or plan again.")
    return got.root


@functools.lru_cache(maxsize=16)
def _resolve_once(kind: Kind, source: str, base: str) -> Resolved:
    return resolve(kind, source, base=Path(base))


def _needs_shell(root: Path, what: str) -> None:
    """Every step starts as `/bin/bash -c` (as on the host), and scripts expect `/bin/sh`."""
    missing = [f"/bin/{name}" for name in ("sh", "bash") if not os.path.lexists(root / "bin" / name)]
    if missing:
        raise EnvironmentRefused("environment_no_shell", what, f"it has no {' or '.join(missing)}",
                                 "Every step starts with /bin/bash -c, as on the host: use a root "
                                 "that has bash and /bin/sh (Debian's minbase has both; add "
                                 "`bash` to an Alpine image).")


# ---- manifests -------------------------------------------------------------------------------


def manifest_of(root: Path, known: Mapping[str, str] | None = None) -> list[list[str]]:
    """Every entry of a tree, sorted: [path, kind and mode, size and sha256 or link target];
    `known` gives a regular file's "size:sha256" by path when it was hashed as it was written
    (used when the size agrees; any other file is read)."""
    known = known or {}
    out: list[list[str]] = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        rel_folder = os.path.relpath(folder, root)
        for name in [*dirs, *sorted(files)]:
            path = os.path.join(folder, name)
            rel = os.path.normpath(os.path.join(rel_folder, name))
            st = os.lstat(path)
            mode = f"{stat.S_IFMT(st.st_mode):o}:{stat.S_IMODE(st.st_mode):o}"
            if stat.S_ISLNK(st.st_mode):
                out.append([rel, mode, os.readlink(path)])
            elif stat.S_ISREG(st.st_mode):
                hashed = known.get(rel, "")
                if not hashed.startswith(f"{st.st_size}:"):
                    hashed = f"{st.st_size}:{_file_hash(path)}"
                out.append([rel, mode, hashed])
            else:
                out.append([rel, mode, ""])
    out.sort()
    return out


def _file_hash(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _digest_of(manifest: list[list[str]]) -> str:
    return hashlib.sha256(json.dumps(manifest, separators=(",", ":")).encode()).hexdigest()


# ---- images ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layer:
    digest: str
    """`sha256:<hex>` of the blob as stored."""
    member: str
    """Its path inside the archive or layout."""


@dataclass(frozen=True)
class _Image:
    reference: str
    path: Path
    archive: bool
    digest: str
    layers: tuple[_Layer, ...]

    @classmethod
    def open(cls, reference: str, base: Path) -> _Image:
        transport = next((t for t in _TRANSPORTS if reference.startswith(t)), None)
        if transport is None:
            raise EnvironmentRefused(
                "environment_unreadable", f"image {reference}", "a reference armbench does not read",
                "Name an image file: `oci-archive:<file.tar>` (podman image save --format "
                "oci-archive), `docker-archive:<file.tar>` (docker save) or `oci:<folder>`; "
                "armbench never pulls from a registry.")
        rest = reference.removeprefix(transport)
        pin = None
        if "@sha256:" in rest:
            rest, pin = rest.rsplit("@", 1)
        path = (base / Path(rest).expanduser()).resolve()
        if not path.exists():
            raise EnvironmentRefused("environment_unreadable", f"image {reference}",
                                     f"{path} does not exist", "Build or save the image there, "
                                     "or fix the path (relative paths are from the team repo).")
        try:
            image = cls._read(reference, path, transport)
        except (OSError, KeyError, ValueError, TypeError, IndexError, tarfile.TarError) as exc:
            raise EnvironmentRefused("environment_unreadable", f"image {reference}",
                                     f"it could not be read ({exc})",
                                     "Save the image again (podman image save --format oci-archive, "
                                     "or docker save) and check the file is complete.") from None
        if pin is not None and pin != image.digest:
            raise EnvironmentRefused("environment_digest_mismatch", f"image {reference}",
                                     f"its digest is {image.digest}, the reference pins {pin}",
                                     "Use the image the reference names, or update the pinned digest.")
        return image

    @classmethod
    def _read(cls, reference: str, path: Path, transport: str) -> _Image:
        archive = transport != "oci:"
        with _Blobs(path, archive) as blobs:
            if transport == "docker-archive:":
                entry = json.loads(blobs.read("manifest.json"))[0]
                config = str(entry["Config"])
                digest = "sha256:" + hashlib.sha256(blobs.read(config)).hexdigest()
                layers = tuple(_Layer(digest=_blob_digest(blobs, str(m)), member=str(m))
                               for m in entry["Layers"])
                return cls(reference, path, archive, digest, layers)
            index = json.loads(blobs.read("index.json"))
            descriptor = index["manifests"][0]
            manifest_digest = str(descriptor["digest"])
            manifest = json.loads(blobs.verified(manifest_digest, reference))
            if "manifests" in manifest:  # an index: take its first image
                manifest_digest = str(manifest["manifests"][0]["digest"])
                manifest = json.loads(blobs.verified(manifest_digest, reference))
            layers = tuple(_Layer(digest=str(layer["digest"]), member=_member(str(layer["digest"])))
                           for layer in manifest["layers"])
            for layer in layers:
                blobs.check(layer.digest, layer.member, reference)
            return cls(reference, path, archive, manifest_digest, layers)


def _member(digest: str) -> str:
    algorithm, hexdigest = digest.split(":", 1)
    if algorithm != "sha256" or not all(c in "0123456789abcdef" for c in hexdigest):
        raise ValueError(f"unsupported digest {digest!r}")
    return f"blobs/sha256/{hexdigest}"


def _blob_digest(blobs: _Blobs, member: str) -> str:
    digest, buffer = hashlib.sha256(), memoryview(bytearray(_CHUNK))
    with blobs.span(member) as span:
        while got := span.readinto(buffer):
            digest.update(buffer[:got])
    return "sha256:" + digest.hexdigest()


class _Blobs:
    """The files of an image: members of its archive, or files of its layout folder."""

    def __init__(self, path: Path, archive: bool) -> None:
        self.path = path
        self.tar = tarfile.open(path) if archive else None

    def __enter__(self) -> _Blobs:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.tar is not None:
            self.tar.close()

    @contextmanager
    def open(self, member: str) -> Iterator[IO[bytes]]:
        if self.tar is None:
            target = (self.path / member).resolve()
            if not target.is_relative_to(self.path):
                raise ValueError(f"{member} is outside the layout")
            with open(target, "rb") as f:
                yield f
            return
        got = self.tar.extractfile(member.removeprefix("./"))
        if got is None:
            raise ValueError(f"{member} is not a file")
        with got:
            yield got

    @contextmanager
    def span(self, member: str) -> Iterator[Span]:
        """The member's bytes as a span of the image file (an archive holds its blobs stored, so
        a layer is read in place, at its offset)."""
        if self.tar is None:
            target = (self.path / member).resolve()
            if not target.is_relative_to(self.path):
                raise ValueError(f"{member} is outside the layout")
            with open(target, "rb") as f:
                yield Span(f.fileno(), 0, os.fstat(f.fileno()).st_size)
            return
        info = self.tar.getmember(member.removeprefix("./"))
        for _ in range(8):  # `docker save` may store a repeated layer as a link to the first
            if not (info.issym() or info.islnk()):
                break
            if info.issym():
                info = self.tar.getmember(os.path.normpath(
                    os.path.join(os.path.dirname(info.name), info.linkname)))
            else:
                info = self.tar.getmember(info.linkname)
        if not info.isreg() or info.issparse():
            raise ValueError(f"{member} is not a file stored in the archive")
        with open(self.path, "rb") as f:
            yield Span(f.fileno(), info.offset_data, info.size)

    def read(self, member: str) -> bytes:
        with self.open(member) as f:
            return f.read()

    def verified(self, digest: str, reference: str) -> bytes:
        data = self.read(_member(digest))
        _match(digest, "sha256:" + hashlib.sha256(data).hexdigest(), reference)
        return data

    def check(self, digest: str, member: str, reference: str) -> None:
        _match(digest, _blob_digest(self, member), reference)


def _match(wanted: str, got: str, reference: str) -> None:
    if wanted != got:
        raise EnvironmentRefused("environment_digest_mismatch", f"image {reference}",
                                 f"a blob named {wanted} hashes to {got}",
                                 "The image file is damaged or was altered: save it again.")


# ---- the cache -------------------------------------------------------------------------------


def _cached(image: _Image) -> Path:
    """The image's unpacked root, unpacked now when missing or when it fails its manifest."""
    entry = cache_dir() / image.digest.replace(":", "-")
    root, manifest = entry / "root", entry / "manifest.json"
    if manifest.is_file() and root.is_dir():
        try:
            if json.loads(manifest.read_text()) == manifest_of(root):
                with contextlib.suppress(OSError):  # when it was last used: gc spares it a day
                    os.utime(manifest)
                return root
        except (OSError, ValueError):
            pass
    cache_dir().mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".unpack-", dir=cache_dir()))
    try:
        (work / "root").mkdir()
        hashes = unpack(image, work / "root")
        _needs_shell(work / "root", f"image {image.reference}")
        (work / "manifest.json").write_text(json.dumps(manifest_of(work / "root", hashes)))
        if entry.exists():
            _remove(entry)
        os.rename(work, entry)
    finally:
        if work.exists():
            _remove(work)
    return root


@dataclass(frozen=True)
class CachedRoot:
    """An entry of the cache: an unpacked image, or an unpack a process left unfinished."""

    digest: str
    """The image's `sha256:<hex>`; "" for an unfinished unpack (`.unpack-*`)."""
    path: Path
    used: float
    """When an armbench process last used it (its manifest's time, touched at each use), or
    made it (an unfinished unpack's folder time), in seconds since the epoch."""


def cached_roots() -> list[CachedRoot]:
    """The cache's unpacked images and unfinished unpacks (anything else in it is left alone)."""
    try:
        names = sorted(os.listdir(cache_dir()))
    except FileNotFoundError:
        return []
    out = []
    for name in names:
        path = cache_dir() / name
        hexdigest = name.removeprefix("sha256-")
        if name.startswith("sha256-") and len(hexdigest) == 64 and \
                all(c in "0123456789abcdef" for c in hexdigest):
            digest, stamp = f"sha256:{hexdigest}", path / "manifest.json"
        elif name.startswith(".unpack-"):
            digest, stamp = "", path
        else:
            continue
        try:
            used = os.lstat(stamp if os.path.lexists(stamp) else path).st_mtime
        except FileNotFoundError:
            continue
        out.append(CachedRoot(digest=digest, path=path, used=used))
    return out


def remove_cached(entry: CachedRoot) -> int:
    """Remove a cache entry (its folders made writable first: a root may have read-only ones);
    the bytes its files held (each file once, however many links it has)."""
    size = tree_bytes(entry.path)
    remove_tree(entry.path)
    return size


def _remove(path: Path) -> None:
    """Remove a tree whose folders may have no write bit."""
    for folder, dirs, _ in os.walk(path):
        for d in dirs:
            full = os.path.join(folder, d)
            if not os.path.islink(full):
                os.chmod(full, 0o700)
    shutil.rmtree(path)


def unpack(image: _Image, dest: Path) -> dict[str, str]:
    """Apply the image's layers in order into `dest` (`edge.layers`); the size and sha256 of every
    regular file written, by path. EnvironmentRefused names what was unsafe."""
    tree = Tree(dest)
    try:
        with _Blobs(image.path, image.archive) as blobs:
            for layer in image.layers:
                _apply_layer(image, layer, blobs, tree)
        try:
            return tree.finish()
        except (OSError, EOFError) as exc:
            raise EnvironmentRefused(
                "environment_unreadable", f"image {image.reference}",
                f"its unpacked files could not be read back to hash them ({exc})",
                f"Check the disk that holds {dest.parent} (free space, errors in `dmesg`), "
                "then run the command again.") from None
    finally:
        tree.close()


def _apply_layer(image: _Image, layer: _Layer, blobs: _Blobs, tree: Tree) -> None:
    """Apply one layer's entries to `tree`; EnvironmentRefused names the layer and what in it
    was unsafe or unreadable."""
    try:
        with blobs.span(layer.member) as span:
            tar, plain = layer_tar(span)
            with tar:
                for member in members(tar, span if plain else None):
                    tree.apply(tar, member, span if plain else None)
    except UnsafeEntry as exc:
        raise EnvironmentRefused(
            "environment_unsafe", f"image {image.reference}",
            f"layer {layer.digest[:19]} has {exc}",
            "Build the image without device files and without paths that leave its "
            "root (`..`, absolute names, links out), then save it again.") from None
    except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
        raise EnvironmentRefused(
            "environment_unreadable", f"image {image.reference}",
            f"layer {layer.digest[:19]} could not be unpacked ({exc})",
            "Save the image again and check the file is complete.") from None
