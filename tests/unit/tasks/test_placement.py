"""A task's user and workdir are checked when it is loaded, in every format, and named when they cannot be honoured."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_termrl.errors import SandboxError, TaskFormatError
from pytest_termrl.sandbox.bwrap.machine import resolve_account
from pytest_termrl.sandbox.build.check import read_buildable
from pytest_termrl.tasks.importers import load_task_dir
from pytest_termrl.tasks.native import load_native_task

MACHINE = Path(__file__).resolve().parents[3] / "task_suites" / "machine"
DATA = Path(__file__).resolve().parents[2] / "data" / "harbor_fields"


def _native(tmp_path: Path, line: str) -> Path:
    """The machine suite's weblog task with one line of its task.toml replaced (its key is the line's own)."""
    task_dir = shutil.copytree(MACHINE / "weblog_digest", tmp_path / "weblog_digest")
    toml = task_dir / "task.toml"
    key = line.split("=")[0].strip()
    toml.write_text("".join(line + "\n" if old.startswith(key + " =") else old + "\n" for old in toml.read_text().splitlines()))
    return task_dir


@pytest.mark.parametrize("line, field, expected", [
    ('user = ""', "user", "expected an account name"),
    ('user = "root; rm -rf /"', "user", "expected an account name"),
    ('user = "99999999"', "user", "id 99999999 is past the 65536 ids a sandbox maps"),
    ('user = "1000:70000"', "user", "id 70000 is past"),
    ('user = true', "user", "expected an account name"),
    ('workdir = "relative/dir"', "workdir", "expected an absolute path"),
    ('workdir = "/proc/self"', "workdir", "outside the system folders"),
    ('workdir = "/dev/shm"', "workdir", "outside the system folders"),
    ('workdir = "/"', "workdir", "outside the system folders"),
    ('workdir = "/etc"', "workdir", "outside the system folders"),
    ('workdir = "/srv/../etc"', "workdir", "without '..'"),
])
def test_a_native_user_or_workdir_that_cannot_be_honoured_is_named_at_load(tmp_path, line, field, expected):
    with pytest.raises(TaskFormatError) as info:
        load_native_task(_native(tmp_path, line))
    text = str(info.value)
    assert "task.toml" in text and f"field '{field}'" in text and expected in text


@pytest.mark.parametrize("line, user, workdir", [
    ('user = 33', "33", "/srv/weblogs"),
    ('user = "www-data:0"', "www-data:0", "/srv/weblogs"),
    ('workdir = "/srv/weblogs/"', "root", "/srv/weblogs"),
    ('workdir = "/srv//./weblogs"', "root", "/srv/weblogs"),
])
def test_good_values_load_normalised(tmp_path, line, user, workdir):
    task = load_native_task(_native(tmp_path, line))
    assert (task.user, task.workdir) == (user, workdir)


@pytest.mark.parametrize("extra, field, expected", [
    ('[agent]\nuser = 123456\n', "agent.user", "id 123456 is past"),
    ('[agent]\nuser = "a b"\n', "agent.user", "expected an account name"),
    ('[environment]\nworkdir = "/sys/fs"\n', "environment.workdir", "outside the system folders"),
    ('[environment]\nworkdir = "/app/../proc"\n', "environment.workdir", "without '..'"),
])
def test_harbor_users_and_workdirs_are_checked_the_same_way(tmp_path, extra, field, expected):
    task_dir = shutil.copytree(DATA / "hb-named-rewards", tmp_path / "hb-variant")
    (task_dir / "task.toml").write_text((task_dir / "task.toml").read_text() + extra)
    with pytest.raises(TaskFormatError) as info:
        load_task_dir(task_dir)
    assert f"field '{field}'" in str(info.value) and expected in str(info.value)


def test_a_dockerfile_user_past_the_mapped_ids_blocks_the_build_by_name(tmp_path):
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM ubuntu:24.04\nARG APP_UID=200000\nUSER ${APP_UID}\n")
    blockers = read_buildable(dockerfile).blockers
    assert any("USER 200000" in b and "past the 65536 ids" in b for b in blockers), blockers
    dockerfile.write_text("FROM ubuntu:24.04\nUSER 1001:1001\n")
    assert not any("USER" in b for b in read_buildable(dockerfile).blockers)


def test_a_user_with_a_group_resolves_as_an_engine_takes_it(tmp_path):
    passwd, group = tmp_path / "passwd", tmp_path / "group"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\nwww-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\n")
    group.write_text("root:x:0:\nwww-data:x:33:\nadm:x:4:syslog\n")
    assert (resolve_account("www-data:adm", passwd).uid, resolve_account("www-data:adm", passwd).gid) == (33, 4)
    assert resolve_account("www-data:0", passwd).gid == 0
    assert (resolve_account("1234:adm", passwd).uid, resolve_account("1234:adm", passwd).gid) == (1234, 4)
    with pytest.raises(SandboxError, match="the group 'wheel', which the machine lacks"):
        resolve_account("www-data:wheel", passwd)
    group.unlink()
    with pytest.raises(SandboxError, match="its /etc/group has no such name"):
        resolve_account("root:adm", passwd)
