"""The build cache from the command line: build one task's Dockerfile, list the cache, prune it.

    python -m pytest_termrl.sandbox.build build TASK_DIR_OR_DOCKERFILE [--target STAGE] [--build-arg K=V]... [--timeout S]
    python -m pytest_termrl.sandbox.build ls
    python -m pytest_termrl.sandbox.build prune [--older-than DAYS]

``--store DIR`` (or ``$TERMRL_BUILD_CACHE``) names the cache. ``build`` prints each step,
cached or not, and its time; a failed step prints its line, exit code and last output.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ...errors import TermrlError
from ..base import SandboxSettings
from ..bwrap.backend import BwrapBackend
from .builder import Builder
from .store import LayerStore


def dockerfile_of(path: Path) -> tuple[Path, Path]:
    """(the Dockerfile, its build context) of a task folder (Harbor's environment/, Terminal-Bench's own) or a Dockerfile."""
    if path.is_file():
        return path, path.parent
    for candidate in (path / "environment" / "Dockerfile", path / "Dockerfile"):
        if candidate.is_file():
            return candidate, candidate.parent
    raise TermrlError(f"{path}: no Dockerfile (expected environment/Dockerfile, Dockerfile, or a Dockerfile's path)")


def _build(args: argparse.Namespace) -> int:
    dockerfile, context = dockerfile_of(Path(args.path))
    build_args = dict(item.partition("=")[::2] for item in args.build_arg)
    backend = BwrapBackend(SandboxSettings())
    try:
        builder = Builder(backend.bwrap, backend.workroot, backend.machine_lowers(), LayerStore(args.store), backend.settings, echo=True)
        image = builder.build(dockerfile, context, build_args=build_args, target=args.target, timeout_s=args.timeout)
    finally:
        backend.close()
    cached = sum(1 for step in image.steps if step.cached and step.layer)
    made = sum(1 for step in image.steps if not step.cached)
    print(f"built {image.key[:16]}: {len(image.layers)} layers ({made} made, {cached} cached) over {image.stand_in}")
    for line in image.substitutions:
        print(f"  {line}")
    return 0


def _ls(args: argparse.Namespace) -> int:
    store = LayerStore(args.store)
    layers = store.listing()
    print(f"{store.root}: {len(layers)} layers, {sum(info.bytes for info in layers) / (1 << 20):.1f} MiB")
    for record in store.images():
        print(f"image {record['key'][:16]}  {record['dockerfile']}  ({len(record['layers'])} layers over {record['stand_in']})")
    for info in layers:
        print(f"layer {info.key[:16]}  {info.bytes / 1024:9.1f} KiB  {info.seconds:7.2f}s  {info.where}: {info.step}")
    return 0


def _prune(args: argparse.Namespace) -> int:
    store = LayerStore(args.store)
    removed, freed = store.prune(args.older_than * 86400)
    print(f"removed {removed} layers ({freed / (1 << 20):.1f} MiB) from {store.root}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_termrl.sandbox.build", description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, default=None, help="the build cache (default: $TERMRL_BUILD_CACHE or ~/.cache/pytest-termrl/build)")
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="build one task's Dockerfile, printing each step")
    build.add_argument("path")
    build.add_argument("--target", default=None)
    build.add_argument("--build-arg", action="append", default=[])
    build.add_argument("--timeout", type=float, default=None)
    sub.add_parser("ls", help="list the cached images and layers")
    prune = sub.add_parser("prune", help="remove cached layers")
    prune.add_argument("--older-than", type=float, default=0.0, help="only layers made more than this many days ago")
    args = parser.parse_args(argv)
    try:
        return {"build": _build, "ls": _ls, "prune": _prune}[args.command](args)
    except TermrlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
