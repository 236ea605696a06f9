"""The Docker SDK and client, once: the SDK's import (its error names the extra), the client, whether a tag is there.

Shared by the base and toolchain images (:mod:`.base`, :mod:`.toolchain`), the task images
(:mod:`.task`) and the docker backend's engine (:mod:`..engine`).
"""

from __future__ import annotations

import os

from ....errors import SandboxError
from ....tasks.importers.dockerfile import HARNESS_BASE_REPOSITORY

DEFAULT_TAG = f"{HARNESS_BASE_REPOSITORY}:1"
"""The suite's base image."""


class ImageError(SandboxError):
    """An image could not be found or built; the message says how to get it."""


def sdk():
    """The Docker SDK module; an error naming the extra to install when it is missing."""
    try:
        import docker
    except ImportError as exc:
        raise SandboxError("the docker backend needs the Docker SDK: pip install 'pytest-termrl[docker]' (docker>=7.1)") from exc
    return docker


def docker_client():
    """A client of the engine ``DOCKER_HOST`` names (the local socket by default), checked to answer."""
    docker = sdk()
    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:  # noqa: BLE001 - whatever the SDK raises, the engine is not there
        host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        raise ImageError(f"no Docker engine answers at {host} ({exc}); start one, e.g. .ci/docker-setup.sh") from exc
    return client


def image_exists(client, tag: str) -> bool:
    docker = sdk()

    try:
        client.images.get(tag)
        return True
    except docker.errors.ImageNotFound:
        return False
