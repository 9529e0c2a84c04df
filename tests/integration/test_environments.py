"""Environments (issue 28): images read from files, unpacked safely into a checked cache, and
shown as `/` of the real bubblewrap sandbox."""

from __future__ import annotations

import json
import os
import re
import tarfile
from pathlib import Path

import pytest
from envimages import debian_with_toolchain, oci_archive
from envimages import entry as _entry
from envimages import layer as _layer

from armbench.benchmark.trials.checks import check_in_clone, check_result
from armbench.edge import environment
from armbench.edge.environment import EnvironmentRefused, resolve
from armbench.edge.proc import run_step
from armbench.edge.sandbox import Room, Sandbox

pytestmark = pytest.mark.slow  # a Debian root and real sandboxed steps: seconds each


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARMBENCH_HOME", str(tmp_path / "armbench-home"))
    environment._resolve_once.cache_clear()


def _shell() -> list[tuple[tarfile.TarInfo, bytes]]:
    return [_entry("bin", kind=tarfile.DIRTYPE, mode=0o755), _entry("bin/sh", b"#!shell\n", mode=0o755),
            _entry("bin/bash", b"#!shell\n", mode=0o755)]


def test_layers_apply_in_order_with_whiteouts_and_owners_mapped(tmp_path: Path) -> None:
    image = oci_archive(tmp_path / "img.tar", [
        _layer([*_shell(), _entry("etc/", kind=tarfile.DIRTYPE, mode=0o755), _entry("etc/a", b"1"),
                _entry("etc/b", b"2"), _entry("opt/x/old", b"o"), _entry("lib", kind=tarfile.SYMTYPE,
                                                                              link="/usr/lib")]),
        _layer([_entry("etc/.wh.a"), _entry("opt/x/.wh..wh..opq"), _entry("opt/x/new", b"n"),
                _entry("etc/b", b"22")]),
    ])
    got = resolve("image", f"oci-archive:{image}", base=tmp_path)
    assert not (got.root / "etc/a").exists()
    assert (got.root / "etc/b").read_bytes() == b"22"
    assert sorted(os.listdir(got.root / "opt/x")) == ["new"]
    assert os.readlink(got.root / "lib") == "/usr/lib"  # a link may point anywhere inside
    assert (got.root / "etc/b").stat().st_uid == os.getuid()
    assert got.root.is_relative_to(tmp_path / "armbench-home" / "cache" / "rootfs")
    assert got.digest.startswith("sha256:") and got.digest.split(":")[1] in str(got.root)


@pytest.mark.parametrize(("entries", "found"), [
    ([_entry("dev/sda", kind=tarfile.BLKTYPE)], "special file"),
    ([_entry("dev/null", kind=tarfile.CHRTYPE)], "special file"),
    ([_entry("../escape", b"x")], "outside|leaving the root|absolute"),
    ([_entry("/etc/passwd", b"x")], "outside|leaving the root|absolute"),
    ([_entry("up", kind=tarfile.SYMTYPE, link="/"), _entry("up/etc/passwd", b"x")], "through a link|outside"),
    ([_entry("hl", kind=tarfile.LNKTYPE, link="../../etc/passwd")], "outside"),
])
def test_an_unsafe_image_is_refused_and_nothing_escapes(tmp_path: Path, entries: list[
        tuple[tarfile.TarInfo, bytes]], found: str) -> None:
    image = oci_archive(tmp_path / "img.tar", [_layer([*_shell(), *entries])])
    with pytest.raises(EnvironmentRefused) as refused:
        resolve("image", f"oci-archive:{image}", base=tmp_path)
    assert refused.value.code == "environment_unsafe"
    assert re.search(found, str(refused.value)), refused.value
    assert not (tmp_path / "escape").exists()
    assert not list((tmp_path / "armbench-home" / "cache" / "rootfs").glob("sha256-*"))


def test_refusals_name_their_code(tmp_path: Path) -> None:
    no_shell = oci_archive(tmp_path / "noshell.tar", [_layer([_entry("etc/x", b"1")])])
    with pytest.raises(EnvironmentRefused) as refused:
        resolve("image", f"oci-archive:{no_shell}", base=tmp_path)
    assert refused.value.code == "environment_no_shell"
    (tmp_path / "broken.tar").write_bytes(b"not a tar at all" * 100)
    with pytest.raises(EnvironmentRefused) as refused:
        resolve("image", f"oci-archive:{tmp_path / 'broken.tar'}", base=tmp_path)
    assert refused.value.code == "environment_unreadable"
    good = oci_archive(tmp_path / "good.tar", [_layer(_shell())])
    with pytest.raises(EnvironmentRefused) as refused:
        resolve("image", f"oci-archive:{good}@sha256:{'0' * 64}", base=tmp_path)
    assert refused.value.code == "environment_digest_mismatch"
    with pytest.raises(EnvironmentRefused) as refused:
        resolve("image", "docker.io/library/python:3.9", base=tmp_path)
    assert refused.value.code == "environment_unreadable"


def test_a_damaged_cache_is_unpacked_again(tmp_path: Path) -> None:
    image = oci_archive(tmp_path / "img.tar", [_layer([*_shell(), _entry("etc/conf", b"good")])])
    first = resolve("image", f"oci-archive:{image}", base=tmp_path)
    (first.root / "etc/conf").write_bytes(b"tampered")
    again = resolve("image", f"oci-archive:{image}", base=tmp_path)
    assert again.root == first.root and (again.root / "etc/conf").read_bytes() == b"good"


# ---- a real Debian root in the real sandbox ----------------------------------------------------


@pytest.fixture(scope="module")
def debian_image(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return debian_with_toolchain(tmp_path_factory.mktemp("img"))


def test_a_check_passes_in_its_environment_and_could_not_run_on_the_host(
        tmp_path: Path, debian_image: Path) -> None:
    assert not Path("/opt/toolchain").exists()
    got = resolve("image", f"oci-archive:{debian_image}", base=tmp_path)
    clone = tmp_path / "work" / "clones" / "t1"
    clone.mkdir(parents=True)
    Room.of(clone).make()
    for sandbox, expected in ((Sandbox(root=got.root), "passed"), (Sandbox(), "could_not_run")):
        _, _, proc = check_in_clone(clone, command="/opt/toolchain/bin/needs-env", timeout_s=60,
                                    added={}, sandbox=sandbox)
        assert proc is not None and check_result(proc) == expected, proc


def test_a_trial_cannot_write_the_cached_root(tmp_path: Path, debian_image: Path) -> None:
    got = resolve("image", f"oci-archive:{debian_image}", base=tmp_path)
    clone = tmp_path / "work" / "clones" / "t2"
    clone.mkdir(parents=True)
    room = Room.of(clone).make()
    launch = Sandbox(root=got.root).launch(room, expose=[Path("/usr/local/bin")])
    attack = ("exec > ./out.txt; "
              "for p in /usr/bin/python3 /etc/passwd /opt/toolchain/bin/needs-env /newfile; do "
              "echo pwned > $p 2>/dev/null && echo WROTE $p; done; touch /usr/x 2>/dev/null && echo WROTE;"
              " echo ok > $HOME/mine && echo ok > /tmp/mine && echo ok > ./mine && echo fine")
    proc = run_step(attack, cwd=launch.cwd, env=launch.env, timeout_s=60, sandbox=launch.argv)
    said = (clone / "out.txt").read_text()
    assert proc.cause == "ok" and "WROTE" not in said and "fine" in said, (proc, said)
    assert (clone / "mine").exists() and (room.home / "mine").exists()
    assert environment.manifest_of(got.root) == json.loads((got.root.parent / "manifest.json").read_text())


def test_the_fast_header_reads_a_real_debian_layer_as_tarfile_does(debian_image: Path) -> None:
    from armbench.edge.layers import Entry, layer_tar

    image = environment._Image.open(f"oci-archive:{debian_image}", debian_image.parent)
    with environment._Blobs(image.path, image.archive) as blobs, blobs.span(image.layers[0].member) as span:
        seen = []
        for info in (Entry, tarfile.TarInfo):
            span.seek(0)
            with tarfile.open(fileobj=span, mode="r:", tarinfo=info) as tar:
                seen.append([(m.get_info(), m.offset_data, m.pax_headers) for m in tar])
        assert layer_tar(span)[1]  # a plain layer: its files are read at their offsets
    assert len(seen[0]) > 5000 and seen[0] == seen[1]
