"""What a docker whole-machine container's ``storage`` limit says before any engine is asked: a tmpfs of the task's size
(else the settings' default) where the harness can mount one, the engine's quota or "not enforced" and why where it cannot.
tests/integration/test_docker_machine_storage.py holds the tmpfs itself on real engines."""

from __future__ import annotations

import pytest

from pytest_termrl.sandbox import SandboxSettings
from pytest_termrl.sandbox.docker.machine_storage import LayerStorage
from pytest_termrl.sandbox.docker.machine_support import MachineSupport
from pytest_termrl.sandbox.storage import storage_size
from pytest_termrl.tasks.model import Resources

LOCAL = MachineSupport(local=True, driver="overlay2", backing_fs="extfs", userns=False, id_base=0)
SETTINGS = SandboxSettings()


def test_the_size_is_the_tasks_storage_mb_else_the_settings_default():
    assert storage_size(SETTINGS, Resources(storage_mb=32)) == (32 << 20, True)
    assert storage_size(SETTINGS, Resources(memory_mb=512)) == (SETTINGS.storage_bytes, False)
    assert storage_size(SETTINGS, None) == (SETTINGS.storage_bytes, False)


def test_a_local_overlay2_engine_under_a_root_harness_gets_a_tmpfs():
    asked = LayerStorage(LOCAL, SETTINGS, Resources(storage_mb=32), euid=0)
    assert asked.why_not is None and asked.quota is None and asked.size_bytes == 32 << 20
    assert asked.note == "the container's overlay2 layer folder on a tmpfs of 32 MiB (the task's storage_mb)"
    default = LayerStorage(LOCAL, SETTINGS, None, euid=0)
    assert default.note == f"the container's overlay2 layer folder on a tmpfs of {SETTINGS.storage_bytes >> 20} MiB"


@pytest.mark.parametrize("support, euid, why", [
    (MachineSupport(local=False, driver="overlay2", backing_fs="extfs", userns=False, id_base=0), 0, "another machine"),
    (MachineSupport(local=True, driver="vfs", backing_fs="extfs", userns=False, id_base=0), 0, "the vfs driver"),
    (LOCAL, 1000, "the harness is not root"),
])
def test_where_no_tmpfs_can_be_made_the_limit_says_it_is_not_enforced_and_why(support, euid, why):
    asked = LayerStorage(support, SETTINGS, Resources(storage_mb=32), euid=euid)
    assert asked.note.startswith("not enforced (storage_mb=32 asked): ") and why in asked.note and "pquota" in asked.note
    assert not asked.exhausted()
    assert LayerStorage(support, SETTINGS, None, euid=euid).note.startswith(f"not enforced: {asked.why_not}")


def test_an_engine_that_sizes_layers_itself_sizes_it_where_the_harness_cannot():
    xfs = MachineSupport(local=True, driver="overlay2", backing_fs="xfs", userns=False, id_base=0)
    assert LayerStorage(xfs, SETTINGS, Resources(storage_mb=32), euid=0).quota is None, "the tmpfs first"
    sized = LayerStorage(xfs, SETTINGS, Resources(storage_mb=32), euid=1000)
    assert sized.quota == "32M" and "project quota" in sized.note

