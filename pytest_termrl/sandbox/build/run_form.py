"""What a ``RUN`` instruction runs: its flags checked, and its command in the form the engine gives it.

Exec form (a JSON array) runs as written; shell form through the stage's ``SHELL``. A ``RUN``
that is a heredoc alone runs its body: by the shell, or as a file by its own interpreter when
it starts with ``#!`` (as BuildKit does). Heredocs after a command are handed to the shell
with their bodies, which reads them as heredocs. ``--network=none|default`` and
``--security`` are accepted; ``--mount`` of a cache or a tmpfs runs without it (noted);
anything else is refused by name.
"""

from __future__ import annotations

import re

from .check import IGNORED_RUN_MOUNTS
from .failure import BuildError
from .parser import Instruction
from .step_run import STAGE_INSIDE

HEREDOC_SCRIPT = "heredoc-script"
"""The file a ``#!`` heredoc is written to, in the step's staged folder."""
_HEREDOC_ALONE = re.compile(r"\s*\d*<<-?\s*[\"']?\w[\w.-]*[\"']?\s*")


def run_command(ins: Instruction, shell: tuple[str, ...]) -> tuple[list[str], str | None, list[str]]:
    """(argv, the script to stage as :data:`HEREDOC_SCRIPT` or None, notes) of a ``RUN``; BuildError for a flag it cannot honour."""
    network = ins.flag("network")
    if network not in (None, "none", "default"):
        raise BuildError(f"{ins.where()}: RUN --network={network}: the build has no network")
    notes: list[str] = []
    for flag in ins.flags:
        name = flag[2:].partition("=")[0]
        if name == "mount":
            kind = dict(p.partition("=")[::2] for p in flag.partition("=")[2].split(",")).get("type", "bind")
            if kind not in IGNORED_RUN_MOUNTS:
                raise BuildError(f"{ins.where()}: RUN {flag}: a {kind} mount the builder does not provide")
            notes.append(f"{ins.where()}: RUN {flag} run without its {kind} mount")
        elif name not in ("network", "security"):
            raise BuildError(f"{ins.where()}: RUN {flag}: a flag the builder does not know")
    if ins.json is not None:
        return list(ins.json), None, notes
    if ins.heredocs and _HEREDOC_ALONE.fullmatch(ins.args):
        body = ins.heredocs[0].body
        if body.startswith("#!"):  # run as a file, by its own interpreter, as the engine does
            return [f"{STAGE_INSIDE}/{HEREDOC_SCRIPT}"], body, notes
        return [*shell, body], None, notes
    text = ins.args
    if ins.heredocs:
        text += "\n" + "".join(f"{doc.body}{doc.name}\n" for doc in ins.heredocs)
    return [*shell, text], None, notes
