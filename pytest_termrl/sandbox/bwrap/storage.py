"""The upper layers' own file system: a tmpfs of the task's storage size, so a sandbox that fills it fills nothing else.

A whole-machine sandbox writes only into its upper layers (and their overlays' work
folders, which must share their file system). They live on one tmpfs per sandbox whose
size is the task's ``storage_mb`` (else the settings' ``storage_bytes``): past it a write
fails with "No space left on device" inside, the host's disk and memory never fill, and
the episode ends with its own end reason (``storage_limit``). The tmpfs, its size rule and
when it is full are :mod:`..storage`'s, which a docker container's layer shares.
"""

from __future__ import annotations

from pathlib import Path

from ..storage import SizedTmpfs


class UpperStorage(SizedTmpfs):
    """A tmpfs at ``path`` (a new folder) holding a sandbox's upper layers, ``size_bytes`` big."""

    def __init__(self, path: Path, size_bytes: int) -> None:
        path.mkdir(mode=0o711)
        super().__init__(path, size_bytes)
