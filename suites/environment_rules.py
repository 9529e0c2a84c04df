"""The rules of an `environment:` key (a suite's or a task's): exactly one of image or rootfs."""

from __future__ import annotations

from armbench.suites.findings import Findings
from armbench.suites.model import Environment

__all__ = ["IMAGE_TRANSPORTS", "check_environment"]

IMAGE_TRANSPORTS = ("oci-archive:", "docker-archive:", "oci:")
"""The image references armbench reads, as skopeo names them; it never pulls from a registry."""


def check_environment(env: Environment | None, report: Findings) -> None:
    """Report every rule `env` breaks, at `$.environment`."""
    if env is None:
        return
    if (env.image is None) == (env.rootfs is None):
        report.error("$.environment", "environment_invalid", "expected exactly one of `image` or "
                     f"`rootfs`, found {'both' if env.image is not None else 'neither'}. Write "
                     "`environment: {image: oci-archive:<file.tar>}` or `environment: {rootfs: <folder>}`.")
        return
    if env.image is not None and not env.image.startswith(IMAGE_TRANSPORTS):
        report.error("$.environment.image", "environment_invalid", f"expected an image file "
                     f"(`oci-archive:<file.tar>`, `docker-archive:<file.tar>` or `oci:<folder>`), found "
                     f"`{env.image}`. armbench never pulls from a registry: save the image to a file "
                     "(podman image save --format oci-archive, or docker save) and name it.")
    source = env.image if env.image is not None else env.rootfs
    if source is not None and not source.split(":", 1)[-1].strip():
        report.error("$.environment", "environment_invalid", "expected a path, found an empty one. "
                     "Write the image file's or the root folder's path.")
