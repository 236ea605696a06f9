"""The grader's toolbox in the machine for Harbor's verifier: the trusted pytest and the grader's offline stand-ins.

Harbor runs the task's ``test.sh`` in the live machine, where this project's verifier
would run it in a fresh sandbox with its trusted pytest and the grader's stand-ins
mounted (:mod:`pytest_termrl.verifier.inside.script_runner`). The same toolbox is copied
into the machine when Harbor uploads the tests (the agent's phase is over and judged):
the trusted pure-Python toolchain (pytest, pluggy, iniconfig, packaging, with their
metadata), the ``--ctrf`` report plugin, and the installers' stand-ins in their grader
mode, so a pinned ``uvx -w pytest==8.4.1 pytest`` or ``curl ... uv/install.sh | sh``
meets the trusted pytest offline, as the Dockerfile's build recorded (``apt-get install
python3-pytest`` substituted). Harbor's verifier commands then run with :data:`BIN`
first on ``PATH``; the agent never sees the folder.
"""

from __future__ import annotations

import importlib
import io
import tarfile
from importlib import metadata
from pathlib import Path

from ...standins.inside import tools as standin_tools
from ...verifier.inside import pytest_plugins as ctrf_plugins
from ..session import MachineSession

ROOT = "/opt/termrl/harbor-grader"
BIN = f"{ROOT}/bin"
SITE = f"{ROOT}/site"
PLUGINS = f"{ROOT}/plugins"
STANDIN_LOG = f"{BIN}/standins.log"
ENV = {"TERMRL_STANDIN_LOG": STANDIN_LOG}
"""Set on the verifier's commands: the stand-ins find their shims' folder (and log) from it."""
PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py")
DISTRIBUTIONS = ("pytest", "pluggy", "iniconfig", "packaging")

_REAL_PYTHON = """for __py in /usr/local/bin/python3 /usr/bin/python3 /bin/python3; do [ -x "$__py" ] && break; done
"""
"""The machine's own python3 (never the shim of the same name in this folder)."""
_PYTEST = f"""#!/bin/sh
{_REAL_PYTHON}PYTHONPATH="{SITE}:{PLUGINS}${{PYTHONPATH:+:$PYTHONPATH}}" PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 exec "$__py" -m pytest -p no:cacheprovider -p termrl_ctrf "$@"
"""
_TOOL = """#!/bin/sh
""" + _REAL_PYTHON + """PYTHONPATH={root}/site exec "$__py" -s {root}/standins/tools.py {name} "$@"
"""
_PYTHON = """#!/bin/sh
# {name} -m pytest is the grader's pytest; anything else the system's {name}.
if [ "$1" = -m ] && {{ [ "$2" = pytest ] || [ "$2" = py.test ]; }}; then shift 2; exec {bin}/pytest "$@"; fi
for __dir in /usr/local/bin /usr/bin /bin; do [ -x "$__dir/{name}" ] && exec "$__dir/{name}" "$@"; done
echo "{name}: command not found" >&2
exit 127
"""


def _add_file(tar: tarfile.TarFile, name: str, text: str, mode: int = 0o755) -> None:
    data = text.encode()
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), mode
    tar.addfile(info, io.BytesIO(data))


def _no_cache(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    return None if "__pycache__" in info.name else info


def toolbox() -> bytes:
    """The toolbox as a tar rooted at :data:`ROOT`."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in PACKAGES:
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            path = Path(module.__file__ or "")
            source = path.parent if path.name == "__init__.py" else path
            tar.add(source, arcname=f"site/{source.name}", filter=_no_cache)
        for name in DISTRIBUTIONS:
            try:
                dist = metadata.distribution(name)
            except metadata.PackageNotFoundError:
                continue
            for folder in sorted({Path(str(f)).parts[0] for f in dist.files or [] if Path(str(f)).parts[0].endswith(".dist-info")}):
                located = Path(str(dist.locate_file(folder)))
                if located.is_dir():
                    tar.add(located, arcname=f"site/{located.name}", filter=_no_cache)
        tar.add(Path(list(ctrf_plugins.__path__)[0]), arcname="plugins", filter=_no_cache)
        tar.add(Path(standin_tools.__file__), arcname="standins/tools.py")
        for name in ("pytest", "py.test"):
            _add_file(tar, f"bin/{name}", _PYTEST)
        for name in standin_tools.TOOLS:
            _add_file(tar, f"bin/{name}", _TOOL.format(root=ROOT, name=name))
        for name in ("python3", "python"):
            _add_file(tar, f"bin/{name}", _PYTHON.format(name=name, bin=BIN))
    return buffer.getvalue()


def provide(session: MachineSession) -> str | None:
    """Put the toolbox in the machine; the ``PATH`` prefix for the verifier's commands (None: it could not be put)."""
    script = 'rm -rf -- "$1" && mkdir -p -- "$1" && tar -xf - -C "$1" --no-same-owner && chmod -R a+rX -- "$1"'
    done = session.exec(["sh", "-c", script, "grader-toolbox", ROOT], user="root", cwd="/", stdin=toolbox())
    return BIN if done.returncode == 0 else None
