"""The reference solution of an imported task as one command that runs it the way its own harness does."""

from __future__ import annotations

import base64
import re
import shlex
from pathlib import PurePosixPath

SOLUTION_INSIDE = "/tmp/termrl-solution"
"""Where an imported reference and its sibling files are unpacked inside the agent's sandbox
(a private /tmp, outside the home, so the footprint is the reference's alone)."""


def _file_command(target: str, data: bytes) -> str:
    """A command writing ``data`` to ``target``: a readable heredoc for text, base64 otherwise."""
    try:
        text = data.decode()
    except UnicodeDecodeError:
        text = None
    if text is not None and text.endswith("\n") and "\r" not in text:
        delimiter = "__TERMRL_EOF__"
        while delimiter in text:
            delimiter += "_"
        return f"cat > {shlex.quote(target)} <<'{delimiter}'\n{text}{delimiter}"
    encoded = base64.b64encode(data).decode()
    body = "\n".join(encoded[i:i + 76] for i in range(0, len(encoded), 76))
    return f"base64 -d > {shlex.quote(target)} <<'__TERMRL_B64__'\n{body}\n__TERMRL_B64__"


def solution_wrapper(
    script: str, workdir: str, label: str, siblings: dict[str, bytes] | None = None, rewrite_dir: str | None = None,
    env: dict[str, str] | None = None,
) -> str:
    """A command for the oracle agent that runs ``script`` the way its own harness does.

    Terminal-Bench and Harbor run the reference as a separate ``bash`` process in the
    workdir, not sourced into the agent's shell; ``set -e`` or ``exit`` in it must not leak
    into the shell the episode continues in. Sibling files (Harbor's solution/ folder) are
    unpacked next to it, and ``rewrite_dir`` (say '/solution') is pointed at them; ``env``
    (Harbor's ``[solution] env``) is set for it alone.
    """
    if rewrite_dir:  # the folder itself, as an absolute path: never the same name deeper in another path (/app/solution/)
        folder = re.escape(rewrite_dir.rstrip("/"))
        script = re.sub(rf"(?<![\w./-]){folder}(?=/|(?![\w.-]))", SOLUTION_INSIDE, script)
    files = {"solve.sh": script.encode(), **(siblings or {})}
    lines = [
        f"# The reference of {label}, run as its own bash script in {workdir}.",
        f"rm -rf {SOLUTION_INSIDE} && mkdir -p {SOLUTION_INSIDE}",
    ]
    for rel, data in sorted(files.items(), key=lambda kv: (kv[0] == "solve.sh", kv[0])):
        target = f"{SOLUTION_INSIDE}/{rel}"
        parent = str(PurePosixPath(target).parent)
        if parent != SOLUTION_INSIDE:
            lines.append(f"mkdir -p {shlex.quote(parent)}")
        lines.append(_file_command(target, data))
    exports = "".join(f"export {name}={shlex.quote(value)} && " for name, value in sorted((env or {}).items()))
    lines.append(f"(cd {shlex.quote(workdir)} && {exports}bash {SOLUTION_INSIDE}/solve.sh)")
    lines.append("__termrl_rc=$?")
    lines.append(f"rm -rf {SOLUTION_INSIDE}")
    lines.append("(exit $__termrl_rc)")
    return "\n".join(lines) + "\n"
