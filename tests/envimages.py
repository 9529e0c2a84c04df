"""Images for the environments' tests (issue 28): OCI archives built with tarfile, and a minimal
Debian root with python3 made by mmdebstrap, cached across test runs by its inputs."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

DEBIAN_KEY = "bookworm-essential-python3-minimal-v1"
"""The inputs of the cached Debian root (mmdebstrap's suite, variant, packages)."""


def entry(name: str, data: bytes = b"", *, kind: bytes = tarfile.REGTYPE, link: str = "",
           mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode, info.size = kind, link, mode, len(data)
    info.uid = info.gid = 4242
    return info, data


def layer(entries: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return out.getvalue()


def oci_archive(path: Path, layers: list[bytes]) -> Path:
    """An OCI image archive (as `podman image save --format oci-archive` writes one)."""
    blobs: dict[str, bytes] = {}

    def blob(data: bytes) -> dict[str, object]:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        blobs[digest] = data
        return {"digest": digest, "size": len(data)}

    config = blob(json.dumps({"architecture": "amd64", "os": "linux"}).encode())
    manifest = blob(json.dumps({
        "schemaVersion": 2, "config": {**config, "mediaType": "application/vnd.oci.image.config.v1+json"},
        "layers": [{**blob(layer), "mediaType": "application/vnd.oci.image.layer.v1.tar"}
                   for layer in layers]}).encode())
    index = json.dumps({"schemaVersion": 2, "manifests": [manifest]}).encode()
    with tarfile.open(path, "w") as tar:
        for name, data in [("oci-layout", b'{"imageLayoutVersion":"1.0.0"}'), ("index.json", index),
                           *((f"blobs/sha256/{d.split(':')[1]}", b) for d, b in blobs.items())]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def debian_with_toolchain(folder: Path) -> Path:
    """An OCI archive of a minimal Debian bookworm with python3 (mmdebstrap, cached across test
    runs under ~/.cache/armbench-tests by its inputs) plus a layer with a tool at a path the
    host does not have: /opt/toolchain/bin/needs-env."""
    cache = Path.home() / ".cache" / "armbench-tests"
    cache.mkdir(parents=True, exist_ok=True)
    rootfs = cache / f"rootfs-{DEBIAN_KEY}.tar"
    if not rootfs.is_file():
        if rootfs.is_dir():  # an older version of this helper could leave a folder here
            shutil.rmtree(rootfs)
        partial = cache / f"rootfs-{DEBIAN_KEY}.partial.tar"  # the suffix picks the tar format
        subprocess.run(["mmdebstrap", "--format=tar", "--variant=essential", "--include=python3-minimal",
                        "--aptopt=Acquire::Languages \"none\"",
                        "--dpkgopt=path-exclude=/usr/share/{doc,man,locale}/*", "bookworm",
                        str(partial)], check=True, capture_output=True, timeout=900)
        partial.rename(rootfs)
    base = io.BytesIO()
    with tarfile.open(rootfs) as src, tarfile.open(fileobj=base, mode="w") as out:
        for member in src:  # an image holds no device files: mmdebstrap's /dev nodes stay out
            if member.isdev():
                continue
            out.addfile(member, src.extractfile(member) if member.isreg() else None)
    tool = b"#!/usr/bin/python3\nimport sys\nprint(sys.version)\n"
    toolchain = layer([entry("opt/toolchain/bin/needs-env", tool, mode=0o755)])
    return oci_archive(folder / "debian.tar", [base.getvalue(), toolchain])


