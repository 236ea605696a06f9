"""A whole-machine container's workdir as the harness reaches it on a local engine: below its merged folder.

The engine mounts the container's overlay (its image's layers under its own upper layer) at
``GraphDriver.Data.MergedDir`` on the host while the container runs, so the harness's file
operations there go through the overlay like the agent's own, and land in the change record.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import SandboxError
from ..bwrap.overlay import Account
from ..reach import Anchored, ReachedHome


def merged_home(container, id_base: int, account: Account, workdir: str) -> ReachedHome:
    """``workdir`` below the running ``container``'s merged folder, owned on the host by ``account`` shifted by ``id_base``."""
    container.reload()
    merged = ((container.attrs.get("GraphDriver") or {}).get("Data") or {}).get("MergedDir")
    if not merged or not Path(merged).is_dir():
        raise SandboxError(f"{container.name}'s merged folder cannot be reached from here ({merged!r}): "
                           "a whole-machine container's files are reached on a local engine with the overlay2 driver")
    return ReachedHome(Anchored.at(merged, workdir), id_base + account.uid, id_base + account.gid, workdir,
                       root=account.uid == 0)
