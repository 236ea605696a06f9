"""Inspect's ``read_file`` / ``write_file`` as short scripts run in the machine as its default user.

Run inside, as the user the agent is, a file op meets the machine's own permissions and
the same folders the agent's commands see (a relative path is under the workdir). Each
script checks the cases Inspect's contract names first and exits with the errno it stands
for, so the exception raised never depends on a tool's wording; the size limit on reads is
checked before a byte is sent, and a file that grows past it while being read is refused too.
"""

from __future__ import annotations

import errno

from ..session import MachineSession
from .outcomes import TOO_BIG, file_error

_READ = f"""
if [ -d "$1" ]; then exit {errno.EISDIR}; fi
if [ ! -e "$1" ]; then exit {errno.ENOENT}; fi
if [ ! -r "$1" ]; then exit {errno.EACCES}; fi
size=$(stat -L -c %s -- "$1") || exit {errno.EACCES}
if [ -f "$1" ] && [ "$size" -gt "$2" ]; then exit {TOO_BIG}; fi
exec cat -- "$1"
"""

_WRITE = f"""
if [ -d "$1" ]; then exit {errno.EISDIR}; fi
mkdir -p -- "$(dirname -- "$1")" || exit {errno.EACCES}
if [ -e "$1" ] && [ ! -w "$1" ]; then exit {errno.EACCES}; fi
exec cat > "$1"
"""

_FILE_OP_TIMEOUT_S = 120.0


def read_bytes(session: MachineSession, path: str, user: str | None, limit: int) -> bytes:
    """The file's bytes, at most ``limit`` of them (Inspect's read limit, read where its context is);
    FileNotFoundError, PermissionError, IsADirectoryError or OutputLimitExceededError."""
    done = session.exec(["sh", "-c", _READ, "read_file", path, str(limit)], user=user, timeout_s=_FILE_OP_TIMEOUT_S,
                        output_cap_bytes=limit + 1)
    if done.timed_out:
        raise TimeoutError(f"reading {path} took over {_FILE_OP_TIMEOUT_S:.0f} seconds")
    if done.returncode != 0:
        raise file_error(done.returncode, done.stderr.decode(errors="replace"), path)
    if done.truncated or len(done.stdout) > limit:
        raise file_error(TOO_BIG, "", path)
    return done.stdout


def write_bytes(session: MachineSession, path: str, data: bytes, user: str | None) -> None:
    """Write the file, its folders made; PermissionError or IsADirectoryError as the machine answers."""
    done = session.exec(["sh", "-c", _WRITE, "write_file", path], user=user, stdin=data, timeout_s=_FILE_OP_TIMEOUT_S)
    if done.timed_out:
        raise TimeoutError(f"writing {path} took over {_FILE_OP_TIMEOUT_S:.0f} seconds")
    if done.returncode != 0:
        raise file_error(done.returncode, done.stderr.decode(errors="replace"), path)
