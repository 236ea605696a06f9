"""A separate verifier's machine on docker (:mod:`pytest_termrl.sandbox.docker.machine_apart`), the parts that need no engine.

The walk to an artifact's folders below a machine's root (here a host folder standing for the
container's merged folder) follows no link and reads owners back through the engine's id range;
the snapshot's record says which paths are the agent's. Played on real engines in
tests/integration/test_docker_machine_artifacts.py.
"""

from __future__ import annotations

import os

from pytest_termrl.sandbox.docker.machine_apart import CarriedArtifacts, _folders


def test_the_walk_gives_the_folders_as_the_agent_left_them_and_follows_no_link(tmp_path):
    machine = tmp_path / "machine"
    (machine / "var" / "log" / "app").mkdir(parents=True)
    (machine / "var" / "log" / "app" / "run.log").write_text("started\n")
    os.chmod(machine / "var" / "log" / "app", 0o750)
    os.chown(machine / "var" / "log" / "app", 100000 + 1000, 100000 + 1000)  # an engine whose root inside is host 100000
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "secret.txt").write_text("host\n")
    os.symlink(tmp_path / "elsewhere", machine / "opt")
    (machine / "etc").mkdir()
    (machine / "etc" / "hosts").write_text("127.0.0.1 localhost\n")

    walked = _folders(str(machine), ["var", "log", "app", "run.log"], 100000)
    assert walked is not None and walked[1]
    assert [(i.name, i.isdir()) for i in walked[0]] == [("var", True), ("var/log", True), ("var/log/app", True)]
    assert (walked[0][-1].uid, walked[0][-1].gid, walked[0][-1].mode) == (1000, 1000, 0o750)
    assert _folders(str(machine), ["opt", "secret.txt"], 0) is None  # a link on the way
    assert _folders(str(machine), ["etc", "hosts", "x"], 0) is None  # a file on the way
    assert _folders(str(machine), ["srv", "x"], 0) is None  # a missing folder: the prepared machine's stays
    gone = _folders(str(machine), ["var", "gone.txt"], 0)
    assert gone is not None and [i.name for i in gone[0]] == ["var"] and not gone[1]  # absent: cleared, nothing put
    os.symlink("/etc/shadow", machine / "link.txt")
    assert _folders(str(machine), ["link.txt"], 0) == ([], True)  # there: the engine's archive gives the link itself


def test_the_record_says_which_paths_are_the_agents():
    carried = CarriedArtifacts(("/app/status.txt", "/etc"))
    assert CarriedArtifacts.from_dict(carried.to_dict()) == carried
    assert carried.covers("/etc/hosts") and carried.covers("/app/status.txt")
    assert not carried.covers("/app/status.txt.bak") and not carried.covers("/app")
