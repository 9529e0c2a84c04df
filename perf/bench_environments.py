"""What an environment (issue 28) costs: a sandboxed step with an image root against one with the
host's root (informative), and unpacking a 100 MB image once against `tar -x` of its layers
(target: at most 1.5x).

Run from the repo root: `python -m perf.bench_environments [rounds]`. The step figure runs
`true` STEPS times each way in a trial's room, in paired rounds that alternate the order, with
the host's own `/` given as the environment's root folder (so the cost measured is the binding
of a root, not a different dynamic loader). The unpack figure builds an OCI archive of three
layers of incompressible files (about 100 MB), then times `edge.environment.resolve` into an
empty cache (every blob's digest checked, the layers unpacked under the data filter's rules, the
manifest of file hashes written) against GNU tar extracting the same layers in order into an
empty folder, and the unpacking alone (the 1.5x target, which includes hashing every file it
writes); the median of the rounds.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from armbench.edge import environment
from armbench.edge.environment import resolve
from armbench.edge.proc import run_step
from armbench.edge.sandbox import Room, Sandbox, for_checkout, probe

__all__ = ["measure_step", "measure_unpack"]

STEPS, ROUNDS = 20, 5
LAYERS, FILES, SIZE = 3, 530, 64 * 1024  # 3 * 530 * 64 KiB: about 100 MB


def _steps(room: Room, sandbox: Sandbox) -> float:
    env = dict(os.environ)
    started = time.perf_counter()
    for _ in range(STEPS):
        launch = sandbox.launch(room)
        done = run_step("true", cwd=launch.cwd, env={**env, **launch.env}, sandbox=launch.argv)
        if done.cause != "ok":
            raise SystemExit(f"a step did not run: {done.cause} {done.stderr_tail!r}")
    return time.perf_counter() - started


def measure_step(rounds: int = ROUNDS) -> dict[str, float]:
    """Median per-step milliseconds with the host's root and with a root folder bound as `/`."""
    host = for_checkout(None, None)
    probe(host)
    image = Sandbox(root=Path("/"), hide=host.hide)
    with tempfile.TemporaryDirectory(prefix="armbench-bench-env-") as temp:
        room = Room.of(Path(temp) / "clones" / "c")
        room.clone.mkdir(parents=True)
        room.make()
        _steps(room, host), _steps(room, image)
        host_ms: list[float] = []
        image_ms: list[float] = []
        for r in range(rounds):
            for which in ([host, image] if r % 2 else [image, host]):
                ms = _steps(room, which) * 1000 / STEPS
                (host_ms if which is host else image_ms).append(ms)
    return {"host_ms": statistics.median(host_ms), "image_ms": statistics.median(image_ms)}


def _image(folder: Path) -> tuple[Path, list[Path]]:
    """An OCI archive of LAYERS layers, and the same layers as plain tar files."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from envimages import entry, layer, oci_archive  # the tests' OCI writer

    layers: list[bytes] = []
    for n in range(LAYERS):
        entries = [entry(f"bin/{s}", b"#!", mode=0o755) for s in ("sh", "bash")] if n == 0 else []
        entries += [entry(f"data/l{n}/d{i % 20}/f{i}", os.urandom(SIZE)) for i in range(FILES)]
        layers.append(layer(entries))
    plain = []
    for n, data in enumerate(layers):
        (folder / f"layer{n}.tar").write_bytes(data)
        plain.append(folder / f"layer{n}.tar")
    return oci_archive(folder / "image.tar", layers), plain


def measure_unpack(rounds: int = ROUNDS) -> dict[str, float]:
    """Median seconds to resolve the image into an empty cache, and to `tar -x` its layers."""
    with tempfile.TemporaryDirectory(prefix="armbench-bench-unpack-") as temp:
        base = Path(temp)
        image, layers = _image(base)
        os.environ["ARMBENCH_HOME"] = str(base / "home")
        ours: list[float] = []
        tars: list[float] = []
        layers_only: list[float] = []
        for r in range(rounds):
            for which in (("ours", "unpack", "tar") if r % 2 else ("tar", "unpack", "ours")):
                shutil.rmtree(base / "home", ignore_errors=True)
                shutil.rmtree(base / "x", ignore_errors=True)
                subprocess.run(["sync"], check=False)
                started = time.perf_counter()
                if which == "ours":
                    environment._resolve_once.cache_clear()
                    resolve("image", f"oci-archive:{image}", base=base)
                    ours.append(time.perf_counter() - started)
                elif which == "unpack":
                    opened = environment._Image.open(f"oci-archive:{image}", base)
                    started = time.perf_counter()
                    (base / "x").mkdir()
                    environment.unpack(opened, base / "x")
                    layers_only.append(time.perf_counter() - started)
                else:
                    (base / "x").mkdir()
                    for path in layers:
                        subprocess.run(["tar", "-x", "-f", str(path), "-C", str(base / "x")], check=True)
                    tars.append(time.perf_counter() - started)
        size = sum(p.stat().st_size for p in layers)
    tar_s = statistics.median(tars)
    return {"ours_s": statistics.median(ours), "tar_s": tar_s,
            "unpack_s": statistics.median(layers_only),
            "ratio": statistics.median(layers_only) / tar_s,
            "whole_ratio": statistics.median(ours) / tar_s, "mb": size / 1e6}


def main(argv: list[str]) -> None:
    rounds = int(argv[0]) if argv else ROUNDS
    step = measure_step(rounds)
    print(f"environment-step: {step['image_ms']:.1f} ms with a root folder bound as / against "
          f"{step['host_ms']:.1f} ms with the host's root; informative", flush=True)
    got = measure_unpack(rounds)
    verdict = "ok" if got["ratio"] <= 1.5 else "over the 1.5x target"
    print(f"environment-unpack: {got['unpack_s']:.2f} s to unpack the layers of a {got['mb']:.0f} MB "
          f"image (every file hashed, for the manifest) against {got['tar_s']:.2f} s for tar -x of "
          f"them ({got['ratio']:.2f}x; target 1.5x: {verdict}); with every blob's digest checked "
          f"and the manifest of file hashes written, "
          f"{got['ours_s']:.2f} s ({got['whole_ratio']:.2f}x)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
