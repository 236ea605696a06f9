"""The Docker engine as the image builders meet it: the client, whether a tag is there, their error.

Shared by the base and toolchain images (:mod:`.image`), the task images
(:mod:`.task_image`) and the docker backend, which would otherwise import each other.
"""

from __future__ import annotations

import os

from ..errors import SandboxError
from ..tasks.importers.dockerfile import HARNESS_BASE_REPOSITORY

DEFAULT_TAG = f"{HARNESS_BASE_REPOSITORY}:1"
"""The suite's base image."""


class ImageError(SandboxError):
    """An image could not be found or built; the message says how to get it."""


def docker_client():
    try:
        import docker
    except ImportError as exc:  # pragma: no cover - depends on the extra being installed
        raise ImageError("the docker backend needs the Docker SDK: pip install 'pytest-termrl[docker]' (docker>=7.1)") from exc
    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:  # noqa: BLE001 - whatever the SDK raises, the engine is not there
        host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        raise ImageError(f"no Docker engine answers at {host} ({exc}); start one, e.g. .ci/docker-setup.sh") from exc
    return client


def image_exists(client, tag: str) -> bool:
    import docker

    try:
        client.images.get(tag)
        return True
    except docker.errors.ImageNotFound:
        return False
