"""An sshd on loopback with keys of its own, for tests that reach "another machine" over ssh.

``loopback_sshd(folder)`` yields the port and a HOME whose ``.ssh`` holds the client key,
the host key in known_hosts and a config naming both: a client run with that HOME (the
docker SDK over ``ssh://``) or given that config (``ssh -F``, xdist's ``--tx ssh=...//ssh_config=``)
logs in as root without a prompt.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

TOOLS = ("/usr/sbin/sshd", "ssh-keygen", "ssh")


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if not shutil.which(tool)]


@contextmanager
def loopback_sshd(folder: Path):
    """(port, home) of a running sshd on 127.0.0.1; stopped on exit."""
    keys, home = folder / "ssh", folder / "home"
    (home / ".ssh").mkdir(parents=True)
    keys.mkdir()
    for name in ("host", "client"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / name)], check=True)
    (keys / "authorized_keys").write_text((keys / "client.pub").read_text())
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = keys / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {keys / 'host'}\nAuthorizedKeysFile {keys / 'authorized_keys'}\n"
        "PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        f"UsePAM no\nStrictModes no\nPidFile {keys / 'sshd.pid'}\n"
        # A login shell whose rc runs `pyenv rehash` waits up to a minute on a lock file that a
        # killed rehash left behind; every ssh command (docker's dial-stdio, xdist's gateway)
        # would stall behind it. One second, then the shell goes on with a warning.
        "SetEnv PYENV_REHASH_TIMEOUT=1\n"
    )
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    # The daemon's log goes to a file: a pipe nobody reads fills after a few hundred logins and
    # then blocks sshd, so every later connection hangs.
    log = keys / "sshd.log"
    with open(log, "w") as handle:
        sshd = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", str(config)], stdout=handle, stderr=subprocess.STDOUT)
    try:
        for _ in range(200):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert sshd.poll() is None, log.read_text()
            time.sleep(0.05)
        host_key = " ".join((keys / "host.pub").read_text().split()[:2])
        (home / ".ssh" / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_key}\n")
        (home / ".ssh" / "config").write_text(  # usable with ssh -F too (ssh reads ~ from passwd, not $HOME)
            f"Host 127.0.0.1\n  IdentityFile {keys / 'client'}\n  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {home / '.ssh' / 'known_hosts'}\n  StrictHostKeyChecking yes\n"
        )
        yield port, home
    finally:
        sshd.terminate()
        sshd.wait(10)
