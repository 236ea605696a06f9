"""The shell's command and output folders when they are folders on this machine.

The control folder is the harness's (read-only for the agent); the output folder is the
agent's, so anything may be planted there: a link, a FIFO, a folder. Writes never follow a
link, reads never follow one nor block on a FIFO.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .output import read_capped


def remove_entry(path: Path) -> None:
    """Remove whatever is at path (a file, link, FIFO, or a folder the agent made), if anything."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        shutil.rmtree(path, ignore_errors=True)


def write_control_file(folder: Path, name: str, text: str) -> None:
    """Write a file the sandbox reads, as root, refusing to follow anything planted there."""
    path = folder / name
    remove_entry(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, text.encode(errors="surrogateescape"))
        os.fchmod(fd, 0o644)
    finally:
        os.close(fd)


class HostControlFiles:
    """Control and output folders on this machine, bind-mounted into the sandbox."""

    def __init__(self, ctl_host: Path, io_host: Path) -> None:
        self.ctl_host, self.io_host = ctl_host, io_host

    def write(self, name: str, text: str) -> None:
        write_control_file(self.ctl_host, name, text)

    def read_output(self, name: str, cap: int) -> tuple[str, bool]:
        return read_capped(str(self.io_host / name), cap)

    def discard(self, n: int) -> str:
        for folder, name in ((self.ctl_host, f"cmd.{n - 1}"), (self.io_host, f"out.{n - 1}"), (self.io_host, f"out.{n}")):
            remove_entry(folder / name)
        return ""
