"""``COPY``: what it writes into an image layer from a build context's sources.

Destination
    Relative to WORKDIR unless absolute; ``..`` stops at ``/``. A destination ending in ``/``
    (or ``.``, or empty), or a folder the image already has, means "into". Several source
    paths (after wildcards) need a trailing ``/``. A folder source copies its contents.
    Missing folders on the way are made 0755 and owned by the ``--chown`` owner (root without
    it); a file never replaces a folder, nor a folder a file. A symlink the layer already holds
    on the destination's path is followed inside the layer, never out of it (:mod:`.layer`).

Metadata
    Owner and mode as :mod:`.ownership` says. Times: kept. Hard links between copied files stay
    hard links.
"""

from __future__ import annotations

import os
import posixpath
import stat
from pathlib import Path
from typing import Callable

from pytest_termrl.errors import TaskFormatError

from .context import BuildContext
from .layer import Layer, dest_path, is_whiteout
from .ownership import ROOT, Owner, SymbolicMode, mode_for

__all__ = ["copy_into"]


def copy_into(layer: Path, context: BuildContext, sources: list[Path], dest: str, *, where: str,
              owner: Owner | None, chmod: int | SymbolicMode | None, host_id: Callable[[int], int], workdir: str,
              existing: Callable[[str], str | None]) -> list[str]:
    """Write into ``layer`` (the image's ``/``) what ``COPY sources... dest`` writes, and return
    the absolute image paths written (folders only the lower image has, made to hold what goes
    inside, are not among them). ``sources`` are paths ``context.sources`` returned."""
    field = "COPY"
    if not sources:
        raise TaskFormatError(where, field, "no source files were specified")
    target_abs, into = dest_path(dest, workdir)
    if len(sources) > 1 and not into:
        raise TaskFormatError(where, field, f"with more than one source file ({len(sources)}), "
                              f"the destination {dest!r} must be a folder and end with a /")
    out = Layer(layer, where, field, host_id, existing)
    ids = owner if owner is not None else ROOT
    base = out.resolve(target_abs)
    links: dict[tuple[int, int], str] = {}

    def put_nondir(ipath: str, host_src: str, st: os.stat_result) -> None:
        if out.kind(ipath) == "dir":
            raise out.fail(f"cannot replace the folder {ipath} with a file")
        out.clear(ipath)
        mode = st.st_mode
        if stat.S_ISLNK(mode):
            out.put_symlink(ipath, os.readlink(host_src), ids)
        elif stat.S_ISREG(mode):
            key = (st.st_dev, st.st_ino)
            first = links.get(key) if st.st_nlink > 1 else None
            if first is not None and out.lstat(first) is not None:
                out.link(first, ipath)
            else:
                with open(os.open(host_src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), "rb") as data:
                    out.put_file(ipath, data, ids, mode_for(mode, chmod, False))
                if st.st_nlink > 1:
                    links[key] = ipath
        else:
            raise out.fail(f"{host_src} is a special file (fifo, socket or device); COPY takes files, folders and symlinks")
        out.stamp(ipath, st.st_atime_ns, st.st_mtime_ns)

    def put_dir(ipath: str, st: os.stat_result) -> None:
        cur = out.lstat(ipath)
        if cur is not None and not stat.S_ISDIR(cur.st_mode) and not is_whiteout(cur):
            raise out.fail(f"cannot copy a folder to {ipath}, which is not a folder")
        if cur is None and out.lower(ipath) == "file":
            raise out.fail(f"cannot copy a folder to {ipath}, which is a file in the image")
        out.put_dir(ipath, ids, mode_for(st.st_mode, chmod, True), st.st_atime_ns, st.st_mtime_ns)

    for source in sources:
        real, st = context.followed(source, where, field)
        named = context.parts_of(source, where, field)
        if stat.S_ISDIR(st.st_mode):
            kind = out.kind(base)
            if kind == "file":
                raise out.fail(f"cannot copy the folder {'/'.join(named) or '.'} onto the file {base}")
            out.ensure_dir(base, ids)
            for inner, host_src, est in context.entries(real):
                ipath = posixpath.join(base, inner)
                if stat.S_ISDIR(est.st_mode):
                    put_dir(ipath, est)
                else:
                    put_nondir(ipath, host_src, est)
        else:
            if not (stat.S_ISREG(st.st_mode)):
                raise out.fail(f"source {'/'.join(named)} is a special file; COPY takes files, folders and symlinks")
            if into or out.kind(base) == "dir":
                target = posixpath.join(base, named[-1]) if named else base
                out.ensure_dir(base, ids)
            else:
                target = base
                out.ensure_dir(posixpath.dirname(base), ids)
            put_nondir(target, os.path.join(context.root, real), st)
    return out.done()
