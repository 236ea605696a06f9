"""A task's own Dockerfile, built by the engine into an image named after the task and its context.

:func:`build_task_image` builds it with the network off and without pulling: every ``FROM``
image must already be in the engine, and one that is not is a clear error naming the image
and how to provide it. The tag is ``termrl-task-<name>:<digest of the context>``, so an
unchanged task is built once and reused; the images carry a label the cleanup command finds.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ...build.parser import parse
from .client import DEFAULT_TAG, ImageError, docker_client, image_exists, sdk

TASK_IMAGE_LABEL = "termrl.task-image"


_FROM = re.compile(r"^\s*FROM\s+(?P<rest>.+)$", re.I)
_ARG = re.compile(r"^\s*ARG\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:=(?P<value>\S*))?\s*$", re.I)


def _logical_lines(text: str) -> list[str]:
    lines, current = [], ""
    for raw in text.splitlines():
        stripped = raw.rstrip()
        if not current and stripped.lstrip().startswith("#"):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        lines.append(current + stripped)
        current = ""
    if current:
        lines.append(current)
    return lines


def base_images(dockerfile: Path) -> list[str]:
    """The images a Dockerfile's FROM lines need from outside (stages and ``scratch`` excluded)."""
    args: dict[str, str] = {}
    stages: set[str] = set()
    needed: list[str] = []
    for line in _logical_lines(dockerfile.read_text()):
        arg = _ARG.match(line)
        if arg and not needed and not stages:
            args[arg.group("name")] = (arg.group("value") or "").strip("\"'")
            continue
        match = _FROM.match(line)
        if not match:
            continue
        words = [w for w in match.group("rest").split() if not w.startswith("--")]
        if not words:
            continue
        image = re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: args.get(m.group(1), ""), words[0])
        if len(words) >= 3 and words[1].lower() == "as":
            stages.add(words[2].lower())
        if image.lower() in stages or image.lower() == "scratch":
            continue
        if image not in needed:
            needed.append(image)
    return needed


def missing_image_message(image: str, dockerfile: Path) -> str:
    how = (
        f"build it with `python -m pytest_termrl.sandbox.docker.images.base build --tag {image}`"
        if image.split(":")[0] == DEFAULT_TAG.split(":")[0]
        else f"load it from a saved archive (`docker load -i {image.replace('/', '_').replace(':', '_')}.tar`, "
        f"made with `docker save {image}` on a machine that can pull it) or build it locally and tag it {image}"
    )
    return (
        f"{dockerfile}: FROM {image}: the image is not present in the local Docker engine and no container "
        f"registry is reachable from here, so it cannot be pulled; {how}"
    )


def task_image_tag(context: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in context.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(str(path.relative_to(context)).encode() + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    name = re.sub(r"[^a-z0-9_.-]+", "-", context.name.lower()).strip("-.") or "task"
    return f"termrl-task-{name}:{digest.hexdigest()[:12]}"


HEREDOC_NEEDS_BUILDKIT = (
    "heredocs in a Dockerfile (Dockerfile syntax 1.4) are read only by BuildKit's Dockerfile frontend 1.4 or later, "
    "which an engine ships built in from Docker 23.0 (or pulls as docker/dockerfile:1.4 from a registry); the SDK's "
    "builder is the legacy one, which reads the body as instructions"
)
"""Why a Dockerfile with heredocs is refused, whatever the engine: the SDK cannot drive BuildKit."""


def heredoc_lines(dockerfile: Path) -> list[int]:
    """The lines of the instructions that open a heredoc (``RUN <<EOF``, ``COPY <<EOF /x``), read by BuildKit's rules.

    A Dockerfile BuildKit would refuse raises :class:`~pytest_termrl.sandbox.build.parser.DockerfileError`.
    """
    return [step.lineno for step in parse(dockerfile.read_text(errors="replace"), str(dockerfile)).instructions if step.heredocs]


def build_task_image(dockerfile_dir: Path, tag: str | None = None, client=None) -> str:
    """Build the task's image from ``dockerfile_dir/Dockerfile`` with the network off; return its tag.

    Every base image must already be in the engine: nothing is pulled. A tag derived from
    the context's contents makes rebuilding an unchanged task free.
    """
    dockerfile_dir = Path(dockerfile_dir)
    dockerfile = dockerfile_dir / "Dockerfile"
    if not dockerfile.is_file():
        raise ImageError(f"{dockerfile_dir}: no Dockerfile")
    client = client or docker_client()
    for image in base_images(dockerfile):
        if not image_exists(client, image):
            raise ImageError(missing_image_message(image, dockerfile))
    tag = tag or task_image_tag(dockerfile_dir)
    if image_exists(client, tag):
        return tag
    heredocs = heredoc_lines(dockerfile)
    if heredocs:
        version = client.version().get("Version", "?")
        raise ImageError(
            f"{dockerfile}: line {', '.join(map(str, heredocs))} opens a heredoc: {HEREDOC_NEEDS_BUILDKIT}; this engine is "
            f"Docker {version}. Build the image with `DOCKER_BUILDKIT=1 docker build -t {tag} {dockerfile_dir}` where a "
            f"BuildKit that reads heredocs is at hand, then run again (an image of that tag is used as it is)"
        )
    docker = sdk()

    try:
        client.images.build(
            path=str(dockerfile_dir),
            tag=tag,
            pull=False,
            rm=True,
            forcerm=True,
            network_mode="none",
            labels={"termrl": "1", TASK_IMAGE_LABEL: "1"},
        )
    except docker.errors.BuildError as exc:
        log = "".join(str(chunk.get("stream", chunk.get("error", ""))) for chunk in exc.build_log)
        raise ImageError(f"{dockerfile}: docker build failed: {exc.msg}\n{log[-3000:]}") from exc
    except docker.errors.APIError as exc:
        raise ImageError(f"{dockerfile}: docker build failed: {exc.explanation or exc}") from exc
    return tag


def remove_task_images(task: str | None = None, client=None) -> list[str]:
    """Remove the images :func:`build_task_image` made (found by their label), of every task or of
    the one whose tag is ``termrl-task-<task>``; return their tags."""
    client = client or docker_client()
    removed = []
    for image in client.images.list(filters={"label": f"{TASK_IMAGE_LABEL}=1"}):
        tags = [t for t in image.tags if task is None or t.split(":")[0] == f"termrl-task-{task}"]
        if task is None and not image.tags:
            tags = [image.id]
        for tag in tags:
            client.images.remove(tag, force=True)
        removed += tags
    return removed
