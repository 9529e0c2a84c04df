"""Layers applied in one pass (edge/layers.py): the data filter's rules kept without its
`realpath`s, nothing written through a link even after a folder is replaced, and the manifest
built from the hashes taken while writing equal to one read back from the disk."""

from __future__ import annotations

import errno
import gzip
import io
import json
import os
import re
import stat
import tarfile
import threading
from pathlib import Path

import pytest
from envimages import entry, layer, oci_archive
from hypothesis import given
from hypothesis import strategies as st

from armbench.edge import environment, layers
from armbench.edge.environment import EnvironmentRefused, manifest_of, resolve
from armbench.edge.layers import Entry, Span, UnsafeEntry, _file_mode, _relative, layer_tar, members


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARMBENCH_HOME", str(tmp_path / "armbench-home"))
    environment._resolve_once.cache_clear()


def _shell() -> list[tuple[tarfile.TarInfo, bytes]]:
    return [entry("bin/sh", b"#!shell\n", mode=0o755), entry("bin/bash", b"#!shell\n", mode=0o755)]


def _refused(tmp_path: Path, layers: list[bytes]) -> EnvironmentRefused:
    image = oci_archive(tmp_path / "img.tar", layers)
    with pytest.raises(EnvironmentRefused) as refused:
        resolve("image", f"oci-archive:{image}", base=tmp_path)
    return refused.value


def test_a_folder_replaced_by_a_link_is_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    got = _refused(tmp_path, [
        layer([*_shell(), entry("a", kind=tarfile.DIRTYPE, mode=0o755), entry("a/f", b"1")]),
        layer([entry("a/g", b"2"), entry(".wh.a"), entry("a", kind=tarfile.SYMTYPE, link=str(outside)),
               entry("a/x", b"pwned")]),
    ])
    assert got.code == "environment_unsafe" and re.search("through a link|outside", str(got)), got
    assert not (outside / "x").exists()


def test_an_opaque_folder_then_a_link_in_it_is_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    got = _refused(tmp_path, [layer([
        *_shell(), entry("o/in/f", b"1"), entry("o/.wh..wh..opq"),
        entry("o/in", kind=tarfile.SYMTYPE, link=str(outside)), entry("o/in/x", b"pwned")])])
    assert got.code == "environment_unsafe" and re.search("through a link|outside", str(got)), got
    assert not (outside / "x").exists()


def test_a_hard_link_to_a_link_is_a_link_not_its_target(tmp_path: Path) -> None:
    image = oci_archive(tmp_path / "img.tar", [layer([
        *_shell(), entry("etc/passwd-link", kind=tarfile.SYMTYPE, link="/etc/passwd"),
        entry("hard", kind=tarfile.LNKTYPE, link="etc/passwd-link")])])
    got = resolve("image", f"oci-archive:{image}", base=tmp_path)
    assert os.readlink(got.root / "hard") == "/etc/passwd"
    assert os.lstat(got.root / "hard").st_ino != os.stat("/etc/passwd").st_ino


@pytest.mark.parametrize("name", [".wh..", "etc/.wh.", "etc/.wh.."])
def test_a_whiteout_that_names_no_entry_is_refused(tmp_path: Path, name: str) -> None:
    got = _refused(tmp_path, [layer([*_shell(), entry("etc/a", b"1"), entry(name)])])
    assert got.code == "environment_unsafe" and "names no entry" in str(got), got


def test_the_manifest_from_the_writing_equals_the_one_read_back(tmp_path: Path) -> None:
    """Files replaced, whited out, hard-linked and from a gzip layer (read through tarfile)."""
    zipped = io.BytesIO()
    with gzip.GzipFile(fileobj=zipped, mode="wb") as out:
        out.write(layer([entry("z/one", b"from a gzip layer"), entry("etc/b", b"replaced again")]))
    image = oci_archive(tmp_path / "img.tar", [
        layer([*_shell(), entry("etc/a", b"a" * 70000), entry("etc/b", b"b"),
               entry("etc/hl", kind=tarfile.LNKTYPE, link="etc/a"), entry("gone/f", b"x"),
               entry("setuid", b"s", mode=0o4775)]),
        layer([entry("etc/b", b"bb"), entry(".wh.gone"), entry("etc/a", b"new a"),
               entry("etc/hl2", kind=tarfile.LNKTYPE, link="etc/b")]),
        zipped.getvalue(),
    ])
    got = resolve("image", f"oci-archive:{image}", base=tmp_path)
    stored = json.loads((got.root.parent / "manifest.json").read_text())
    assert stored == manifest_of(got.root)
    assert (got.root / "etc/b").read_bytes() == b"replaced again"
    assert (got.root / "etc/hl").read_bytes() == b"a" * 70000  # linked to the first etc/a
    assert (got.root / "z/one").read_bytes() == b"from a gzip layer"
    assert not (got.root / "gone").exists()
    assert stat.S_IMODE((got.root / "setuid").stat().st_mode) == 0o755


def _refuse_kernel_copy_after(calls: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """`copy_file_range` copies at most 64 KiB a call, `calls` times, then answers EXDEV (the
    image and the cache on two filesystems), so files already under way go on through a
    buffer."""
    real, made = os.copy_file_range, iter(range(calls))

    def copy(src: int, dst: int, count: int, offset_src: int | None = None) -> int:
        if next(made, None) is None:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real(src, dst, min(count, 1 << 16), offset_src)

    monkeypatch.setattr(layers.os, "copy_file_range", copy)


@pytest.mark.parametrize("way", ["kernel copy", "buffer from the first file", "buffer midway",
                                 "a kernel copy of nothing", "the hasher a file at a time"])
def test_files_of_many_chunks_and_empty_ones_hash_as_read_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str) -> None:
    """Files of several of the 1 MiB chunks and empty ones, from plain and gzip layers, hash as
    read back; a file written again in a later layer keeps only its last bytes' hash. So it is
    however the bytes are copied, and however far the hasher falls behind."""
    if way == "buffer from the first file":
        _refuse_kernel_copy_after(0, monkeypatch)
    elif way == "buffer midway":
        _refuse_kernel_copy_after(20, monkeypatch)  # halfway through p/big's 40 calls
    elif way == "a kernel copy of nothing":  # a filesystem that copies nothing, saying 0
        monkeypatch.setattr(layers.os, "copy_file_range", lambda *args: 0)
    elif way == "the hasher a file at a time":  # handed over one by one, one waiting at most
        monkeypatch.setattr(layers, "_BATCH", 1)
        monkeypatch.setattr(layers, "_PENDING", 1)
    big = os.urandom((5 << 20) // 2)  # two and a half of the 1 MiB chunks
    many = {f"p/many/f{i}": os.urandom(i * 37) for i in range(300)}
    zipped = io.BytesIO()
    with gzip.GzipFile(fileobj=zipped, mode="wb") as out:
        out.write(layer([entry("z/big", big[::-1]), entry("z/empty", b""), entry("p/big", b"again")]))
    image = oci_archive(tmp_path / "img.tar", [
        layer([*_shell(), entry("p/big", big), entry("p/kept", big), entry("p/empty", b""),
               *(entry(name, data) for name, data in many.items())]),
        zipped.getvalue(),
    ])
    got = resolve("image", f"oci-archive:{image}", base=tmp_path)
    stored = json.loads((got.root.parent / "manifest.json").read_text())
    assert stored == manifest_of(got.root)
    assert (got.root / "z/big").read_bytes() == big[::-1]
    assert (got.root / "p/big").read_bytes() == b"again"
    assert (got.root / "p/kept").read_bytes() == big
    assert all((got.root / name).read_bytes() == data for name, data in many.items())


def test_a_file_that_cannot_be_read_back_refuses_the_image_and_closes_every_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hasher reads each written file back; a read that fails (a failing disk) refuses the
    image with the disk to check, waits for the hasher, and leaves no descriptor open."""
    def failing(fd: int, size: int, view: memoryview) -> str:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(layers, "_read_hash", failing)
    image = oci_archive(tmp_path / "img.tar", [
        layer([*_shell(), *(entry(f"f{i}", b"x" * i) for i in range(200))])])
    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(EnvironmentRefused) as refused:
        resolve("image", f"oci-archive:{image}", base=tmp_path)
    assert refused.value.code == "environment_unreadable"
    assert "could not be read back" in str(refused.value) and "Input/output error" in str(
        refused.value)
    assert set(os.listdir("/proc/self/fd")) <= before
    assert not [t for t in threading.enumerate() if t.name == "armbench-unpack-hash"]


@pytest.mark.parametrize("mode", [0o4775, 0o2755, 0o1777, 0o666, 0o600, 0o644, 0o700, 0o070, 0o011,
                                  0o000, 0o7777])
def test_a_files_mode_is_the_data_filters(mode: int) -> None:
    member = tarfile.TarInfo("f")
    member.mode = mode
    assert _file_mode(mode) == tarfile.data_filter(member, "/nonexistent").mode


def _members(data: bytes, info: type[tarfile.TarInfo]) -> list[object]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:", tarinfo=info) as tar:
        return [(m.get_info(), m.offset, m.offset_data, m.pax_headers, m.sparse) for m in tar]


@pytest.mark.parametrize("form", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_the_fast_header_reads_every_entry_as_tarfile_does(form: int) -> None:
    out = io.BytesIO()
    deep = "/".join(["folder"] * 12) + "/name-long-enough-to-need-a-prefix.txt"  # over 100 bytes
    with tarfile.open(fileobj=out, mode="w", format=form) as tar:
        for name, kind, link, uid in [("etc/", tarfile.DIRTYPE, "", 0), ("etc/a", tarfile.REGTYPE, "", 7),
                                      (deep, tarfile.REGTYPE, "", 0), ("ünï/cödé", tarfile.REGTYPE, "", 0),
                                      ("l", tarfile.SYMTYPE, "/etc/a", 0), ("h", tarfile.LNKTYPE, "etc/a", 0),
                                      ("big-uid", tarfile.REGTYPE, "", 8**7 + 1)]:
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.uid, info.mtime = kind, link, uid, 1700000000
            info.size = 3 if kind == tarfile.REGTYPE else 0
            if form != tarfile.USTAR_FORMAT or uid < 8**7:
                tar.addfile(info, io.BytesIO(b"abc") if kind == tarfile.REGTYPE else None)
        v7 = tarfile.TarInfo("old-dir/")  # the V7 form of a folder: a regular type, a trailing slash
        v7.type = tarfile.AREGTYPE
        tar.addfile(v7)
    data = out.getvalue()
    assert _members(data, Entry) == _members(data, tarfile.TarInfo)
    assert any(m[0]["name"] == deep for m in _members(data, Entry))
    assert any(m[0]["name"] == "old-dir/" and m[0]["type"] == tarfile.DIRTYPE  # get_info adds the /
               for m in _members(data, Entry))


def _walked(data: bytes, tmp_path: Path) -> list[object]:
    """`members` over `data` as a plain layer inside a file (bytes after it, as in an archive)."""
    path = tmp_path / "img"
    path.write_bytes(b"\xff" * 1024 + data + b"\xff" * 4096)
    with path.open("rb") as f:
        span = Span(f.fileno(), 1024, len(data))
        tar, plain = layer_tar(span)
        assert plain
        with tar:
            return [(m.get_info(), m.offset, m.offset_data, m.pax_headers, m.sparse)
                    for m in members(tar, span)]


@pytest.mark.parametrize("form", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_a_plain_layers_entries_are_tarfiles_whatever_their_headers(form: int,
                                                                   tmp_path: Path) -> None:
    """`members` reads plain headers itself and hands any other to `tarfile` where it starts: a
    long name, a pax header (a global one applying to every entry after it), a folder or link
    whose header states a size (its data is not skipped), a file's bytes, the archive's end."""
    out = io.BytesIO()
    long = "/".join(["deep"] * 40) + "/f"  # over 255 bytes: a GNU long name or a pax header
    with tarfile.open(fileobj=out, mode="w", format=form) as tar:
        for n, (name, kind, size) in enumerate([
                ("etc", tarfile.DIRTYPE, 0), ("etc/a", tarfile.REGTYPE, 700),
                ("etc/d", tarfile.DIRTYPE, 512), ("etc/l", tarfile.SYMTYPE, 0),
                ("etc/h", tarfile.LNKTYPE, 0), ("etc/e", tarfile.REGTYPE, 0),
                ("etc/b", tarfile.REGTYPE, 512)]):
            info = tarfile.TarInfo(name)
            info.type, info.size, info.mtime = kind, size, 1700000000 + n
            info.linkname = "etc/a" if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE) else ""
            tar.addfile(info, io.BytesIO(os.urandom(size)) if kind == tarfile.REGTYPE else None)
        if form != tarfile.USTAR_FORMAT:
            tar.addfile(tarfile.TarInfo(long), io.BytesIO(b""))
        tail = tarfile.TarInfo("z")
        tail.size = 3
        tar.addfile(tail, io.BytesIO(b"xyz"))
    data = out.getvalue()
    assert _walked(data, tmp_path) == _members(data, tarfile.TarInfo)
    if form == tarfile.PAX_FORMAT:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            offset = tar.getmember("etc/h").offset
        glob = tarfile.TarInfo.create_pax_global_header({"uname": "everyone"})
        joined = data[:offset] + glob + data[offset:]
        walked = _walked(joined, tmp_path)
        assert walked == _members(joined, tarfile.TarInfo)
        assert [m[0]["uname"] for m in walked][-3:] == ["everyone"] * 3


def test_a_cut_plain_layer_fails_as_tarfile_fails(tmp_path: Path) -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name in ("a", "b", "c"):
            info = tarfile.TarInfo(name)
            info.size = 2000
            tar.addfile(info, io.BytesIO(os.urandom(2000)))
    cut = out.getvalue()[:5000]  # inside b's bytes
    with pytest.raises(tarfile.ReadError) as ours:
        _walked(cut, tmp_path)
    with pytest.raises(tarfile.ReadError) as theirs:
        _members(cut, tarfile.TarInfo)
    assert str(ours.value) == str(theirs.value)


@given(st.text(alphabet="a./", max_size=12))
def test_a_name_taken_as_it_is_is_the_one_normpath_gives(name: str) -> None:
    """`_relative` skips `normpath` for a name it would leave unchanged: the result (or the
    refusal) is the one `normpath` gives, for any name of letters, dots and slashes."""
    def slow(name: str) -> str:
        rel = os.path.normpath(name)
        if os.path.isabs(rel) or rel == ".." or rel.startswith("../"):
            raise UnsafeEntry(rel)
        return "" if rel == "." else rel

    try:
        expected: str | None = slow(name)
    except UnsafeEntry:
        expected = None
    try:
        got: str | None = _relative(name, name)
    except UnsafeEntry:
        got = None
    assert got == expected


def test_a_plain_header_is_read_without_tarfiles_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    header = tarfile.TarInfo("usr/bin/tool").tobuf(tarfile.GNU_FORMAT)
    stock = tarfile.TarInfo.frombuf(header, "utf-8", "surrogateescape")

    def refused(*args: object) -> tarfile.TarInfo:
        raise AssertionError("tarfile's own parser was used")
    monkeypatch.setattr(tarfile.TarInfo, "frombuf", classmethod(refused))
    assert Entry.frombuf(header, "utf-8", "surrogateescape").get_info() == stock.get_info()


def test_a_header_with_a_bad_checksum_is_refused_as_tarfile_refuses_it() -> None:
    good = tarfile.TarInfo("f").tobuf(tarfile.USTAR_FORMAT)
    bad = good[:148] + b"0000001\0" + good[156:]
    for header in (bad, good[:300]):
        with pytest.raises(tarfile.HeaderError) as stock:
            tarfile.TarInfo.frombuf(header, "utf-8", "surrogateescape")
        with pytest.raises(tarfile.HeaderError) as ours:
            Entry.frombuf(header, "utf-8", "surrogateescape")
        assert type(ours.value) is type(stock.value)
