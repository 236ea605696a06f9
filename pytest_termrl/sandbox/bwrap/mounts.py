"""bwrap arguments that lay out a sandbox's file system: the host's system folders, mount points' parents."""

from __future__ import annotations

import os
from pathlib import Path


def system_binds() -> list[str]:
    """The host's /usr and /etc read-only, and /bin, /lib... as the host has them (links or folders)."""
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    return args


def parent_dirs(paths: list[str]) -> list[str]:
    """--dir arguments making each mount point's ancestors traversable (bwrap would make them 0700)."""
    made = {"/", "/home", "/run", "/opt", "/usr", "/etc", "/tmp"}
    args = []
    for path in sorted(paths):
        for parent in reversed(Path(path).parents):
            text = str(parent)
            if text not in made:
                made.add(text)
                args += ["--perms", "0755", "--dir", text]
    return args
