"""The verifier's one-shot run on a whole-machine snapshot: a fresh container of the image committed from the agent's.

The committed image is the machine as the agent left it; the run's container has a writable
layer of its own, removed with it, so whatever the grader writes never reaches the agent's
container or its change record. The trusted toolchain and the runners are bound read-only
over whatever the agent put at their paths, and ``/etc/ld.so.preload`` is masked. It joins
the agent's network when the request names it (``container:<id>``), to reach a server the
agent left running; else it has none. It runs as the request's user (root unless the task
names its grader's).

A separate verifier's snapshot names the machine as the harness laid it out instead, and the
agent's declared artifacts go in before the grader runs (:mod:`.machine_apart`); of the network
files it gets the agent's only where they are artifacts, else the prepared machine's own.
"""

from __future__ import annotations

import io
import tarfile
import time
from pathlib import Path

from ...errors import SandboxError
from ..base import IsolatedRequest, IsolatedRun
from ..bwrap.overlay import ROOT_PATH
from ..layout import AGENT_ENV
from .engine import DockerEngine
from .exec import ROOT_ENV, ExecStream, exec_verifier
from .layout import narrow_system_mounts
from .machine import IMAGE_FILE, machine_overrides
from .machine_apart import CarriedArtifacts, put_artifacts
from .machine_layer import root_output
from .network_files import NETWORK_FILES, NETWORK_FOLDER, own_network_files

# Lets a grader other than root pass through the folders above its trusted mounts (in its own
# layer only): an image keeps /root 0700, where the harness's interpreter may sit.
OPEN_PATHS = r'''for p; do
  d=$(dirname -- "$p")
  while [ "$d" != / ] && [ "$d" != . ]; do
    if [ -d "$d" ]; then case $(stat -c %A -- "$d") in *[xt]) ;; *) chmod o+x -- "$d" ;; esac; fi
    d=$(dirname -- "$d")
  done
done'''


def snapshot_image(request: IsolatedRequest) -> str:
    """The image a whole-machine snapshot folder names (:meth:`.machine.DockerMachineSandbox.snapshot`)."""
    try:
        return (request.home / IMAGE_FILE).read_text().strip()
    except OSError as exc:
        raise SandboxError(f"{request.home} is not a docker whole-machine snapshot (no {IMAGE_FILE} file): {exc}") from exc


def root_write(container, path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` as root inside the container, through the process's stdin."""
    stream = ExecStream(container.client.api, container.id, ["sh", "-c", 'cat > "$1"', "termrl-write", path], "0:0", "/", ROOT_ENV)
    try:
        stream.send(data)
        stream.close_stdin()
        errors = b"".join(chunk for kind, chunk in stream.frames(time.monotonic() + 30) if kind == 2)
        code = stream.exit_code()
    finally:
        stream.close()
    if code != 0:
        raise SandboxError(f"writing {path} in {container.name} failed ({code}): {errors.decode(errors='replace')[-300:]}")


def restore_network_files(container, folder: Path, carried: CarriedArtifacts | None = None) -> None:
    """The agent's /etc/hostname, /etc/hosts and /etc/resolv.conf, where the engine's init layer and its binds lay over them;
    for a separate verifier (``carried``), only those that are artifacts (one the agent removed is removed)."""
    if not folder.is_dir():
        return  # the agent's were the engine's: so are the grader's
    if not own_network_files(container, keep_text=False):
        raise SandboxError("the engine's network files could not be unmounted in the grader's container")
    if carried is not None:
        gone = [p for p in NETWORK_FILES if carried.covers(p) and not (folder / Path(p).name).exists()]
        if gone:
            root_output(container, 'rm -f -- "$@"', gone)
    for archive in sorted(folder.iterdir()):  # written inside: the engine's archive API still sees its own binds
        path = f"/etc/{archive.name}"
        if carried is not None and not carried.covers(path):
            continue  # the prepared machine's own shows
        with tarfile.open(fileobj=io.BytesIO(archive.read_bytes())) as tar:
            member = tar.getmembers()[0]
            if member.issym():
                root_output(container, 'rm -f -- "$1" && ln -s -- "$2" "$1"', [path, member.linkname])
            elif member.isreg():
                handle = tar.extractfile(member)
                root_write(container, path, handle.read() if handle is not None else b"")
                root_output(container, 'chown -- "$2" "$1" && chmod -- "$3" "$1"', [path, f"{member.uid}:{member.gid}", f"{member.mode & 0o7777:o}"])


def run_on_snapshot(engine: DockerEngine, request: IsolatedRequest) -> IsolatedRun:
    """Run ``request`` (whose ``root`` is set) in a fresh container of its snapshot's image; the container is removed after."""
    root = request.root
    assert root is not None
    trusted = narrow_system_mounts(request.mounts)
    binds = [(str(m.host_path), m.sandbox_path, True) for m in trusted]
    binds.append(("/dev/null", "/etc/ld.so.preload", True))
    # The idle process is pid 1 here (no init): a script grader's runner, as root, kills every process
    # but pid 1 and its own once the script ends, and the container must outlive that.
    container = engine.start_container(
        "verify", request.home.name, snapshot_image(request), binds, settings=request.settings,
        network=request.network, overrides={**machine_overrides(), "init": False},
    )
    try:
        carried = put_artifacts(container, request.home, [inside for _, inside, _ in binds])
        restore_network_files(container, request.home / NETWORK_FOLDER, carried)
        if root.uid != 0:
            root_output(container, OPEN_PATHS, [m.sandbox_path for m in trusted])
        env = {**AGENT_ENV, "HOME": root.home, "USER": root.user, "LOGNAME": root.user}
        if root.uid == 0:
            env["PATH"] = ROOT_PATH
        return exec_verifier(engine.api, container.id, f"{root.uid}:{root.gid}", request.argv, request.secret,
                             request.timeout_s, request.cwd, environment=env)
    finally:
        engine.remove_container(container.id)
