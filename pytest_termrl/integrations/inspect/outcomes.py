"""This project's exec results in Inspect's terms: the exceptions its sandbox contract names, its exit-code conventions.

Inspect's callers tell a timeout, an output overflow and an unrunnable program from a
command that merely failed by the exception raised, so each is mapped here once: a
timeout is :class:`TimeoutError` (the processes are already killed), output over the
limit is :class:`OutputLimitExceededError`, a program the machine refuses to execute is
:class:`PermissionError`, and a death by signal N reads 128+N as a shell reports it.
"""

from __future__ import annotations

import errno
import re
import signal

from inspect_ai.util import ExecResult as InspectExecResult
from inspect_ai.util import OutputLimitExceededError, SandboxEnvironmentLimits

from ...sandbox.base import ExecResult

FILE_ERRORS = {
    errno.ENOENT: (FileNotFoundError, "No such file or directory"),
    errno.EACCES: (PermissionError, "Permission denied"),
    errno.EISDIR: (IsADirectoryError, "Is a directory"),
}
"""The exit codes the file scripts use (the errno they stand for) -> the exception Inspect expects."""
TOO_BIG = 27
"""The read script's exit code for a file over the read limit (EFBIG)."""

_UNRUNNABLE = re.compile(r"(failed to execute|exec(ve)?( failed)?:|exec format error).*permission denied", re.IGNORECASE)


def to_inspect(result: ExecResult, argv: list[str], timeout: int | None) -> InspectExecResult[str]:
    """Inspect's result, or the exception its contract names for what happened."""
    stdout = result.stdout.decode("utf-8", errors="replace")
    stderr = result.stderr.decode("utf-8", errors="replace")
    if result.timed_out:
        error = TimeoutError(f"Command timed out after {timeout} seconds")
        if stdout or stderr:
            setattr(error, "truncated_output", stdout + stderr)
        raise error
    if result.truncated:
        raise OutputLimitExceededError(SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE_STR, stdout + stderr)
    code = exit_code(result.returncode)
    if code == 126 and argv and _refused_program(stderr, argv[0]):
        raise PermissionError(errno.EACCES, f"the machine refuses to execute it: {stderr.strip()}", argv[0])
    return InspectExecResult(success=code == 0, returncode=code, stdout=stdout, stderr=stderr)


def exit_code(returncode: int | None) -> int:
    """A shell's reading of how the process ended: its status, or 128+N for death by signal N."""
    if returncode is None:
        return 128 + signal.SIGKILL
    return 128 - returncode if returncode < 0 else returncode


def _refused_program(stderr: str, program: str) -> bool:
    first = stderr.strip().splitlines()[0] if stderr.strip() else ""
    return program in first and _UNRUNNABLE.search(first) is not None


def file_error(code: int | None, stderr: str, path: str) -> Exception:
    """The exception for a failed file script: by its own exit code, else by what the machine said."""
    if code == TOO_BIG:
        return OutputLimitExceededError(SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, None)
    if code in FILE_ERRORS:
        kind, text = FILE_ERRORS[code]
        return kind(code, text, path)
    lowered = stderr.lower()
    for number, (kind, text) in FILE_ERRORS.items():
        if text.lower() in lowered:
            return kind(number, text, path)
    return OSError(f"{path}: {stderr.strip() or 'failed'}")
