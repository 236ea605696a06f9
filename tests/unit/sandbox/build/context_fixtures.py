"""What the build-context tests share: contexts written under tmp_path, a layer folder, COPY in one call.

Writing a layer chowns to shifted ids (host_id = id + 1000000), so the ``layer`` fixture needs
root; the machine the suite runs on in CI is root.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import require_root
from pytest_termrl.sandbox.build.context import BuildContext
from pytest_termrl.sandbox.build.copying import copy_into
from pytest_termrl.sandbox.build.ownership import Owner


SHIFT = 1000000


def host_id(i: int) -> int:
    return i + SHIFT


def nothing_below(path: str) -> str | None:
    return None


def lower_with(table: dict[str, str]):
    """An `existing` callback for a lower image holding the given folders ("dir") and files ("file")."""
    return table.get


def tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Files under root (a name ending in / is a folder)."""
    root.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = root / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def context(tmp_path: Path, files: dict[str, str | bytes], ignore: str | None = None) -> BuildContext:
    root = tree(tmp_path / "ctx", files)
    if ignore is not None:
        (root / ".dockerignore").write_text(ignore)
    return BuildContext(root)


@pytest.fixture
def layer(tmp_path: Path) -> Path:
    require_root("chown to shifted ids in a layer")
    path = tmp_path / "layer"
    path.mkdir()
    return path


def copy(layer: Path, ctx: BuildContext, patterns: list[str], dest: str, *, owner: Owner | None = None,
         chmod=None, workdir: str = "/", existing=nothing_below) -> list[str]:
    sources = [p for pattern in patterns for p in ctx.sources(pattern, "Dockerfile:3")]
    return copy_into(layer, ctx, sources, dest, where="Dockerfile:3", owner=owner, chmod=chmod,
                     host_id=host_id, workdir=workdir, existing=existing)


def owner_of(path: Path) -> tuple[int, int]:
    st = os.lstat(path)
    return st.st_uid, st.st_gid


def everything_under(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")}


def beside_the_layer(tmp_path: Path) -> set[str]:
    return {p for p in everything_under(tmp_path) if p != "layer" and not p.startswith("layer/")}


PASSWD = "root:x:0:0:root:/root:/bin/sh\n# comment\napp:x:1000:1001::/home/app:/bin/sh\nweb:x:33:33::/var/www:/bin/false\n"


GROUP = "root:x:0:\nstaff:x:50:app\nappgrp:x:1001:\n"
