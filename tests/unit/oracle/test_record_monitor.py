"""The collateral oracle over the whole sandbox filesystem: absolute permissions and the record monitor.

Each monitor test runs twice: through real kernel overlays (a "/" slot and an "/etc"
slot mounted on it, as the sandbox mounts them; skipped where none can be mounted) and
on uppers changed by hand the way overlayfs changes them (copy-up, whiteouts, opaque
folders), so the judging is checked where no overlay can be mounted too.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import mount_overlay

from pytest_termrl.oracle.policy import Permission, Policy, footprint, normalize_path, rooted
from pytest_termrl.oracle.record import ChangeRecord, Slot
from pytest_termrl.oracle.record_monitor import RecordMonitor
from pytest_termrl.sandbox.base import CommandResult

OK = CommandResult("", 0)
"""The second where the kernel reads redirect_dir=off as "follow" (redirect_always_follow), which userxattr refuses."""

ROOT_LOWER = {
    "bin/tool": "#!/bin/sh\n",
    "home/user/notes.txt": "remember the milk\n",
    "home/user/out/old.txt": "old\n",
    "usr/share/doc.txt": "documentation\n",
    "etc/stale": "hidden under the /etc mount\n",
    "opt": None,
}
ETC_LOWER = {
    "app.conf": "x=1\n",
    "hosts": "127.0.0.1 localhost\n",
    "ssl/cert.pem": "CERT\n",
}


def tree(root: Path, files: dict[str, str | None]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o755)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            path.mkdir(exist_ok=True)
        else:
            path.write_text(text)
            os.chmod(path, 0o644)
    return root


class Machine:
    """A sandbox filesystem of two slots, "/" and "/etc", changed through real overlays or by hand."""

    def __init__(self, root: Path, kernel: bool) -> None:
        self.root = root
        self.kernel = kernel
        self.slots = {
            "/": (tree(root / "root-lower", ROOT_LOWER), tree(root / "root-upper", {})),
            "/etc": (tree(root / "etc-lower", ETC_LOWER), tree(root / "etc-upper", {})),
        }
        self.merged = root / "merged"
        self.mounted: list[Path] = []
        if kernel:
            self._mount("/", self.merged)
            self._mount("/etc", self.merged / "etc")
        self.record = ChangeRecord(tuple(Slot(m, up, (low,)) for m, (low, up) in self.slots.items()))

    def _mount(self, mount: str, at: Path) -> None:
        lower, upper = self.slots[mount]
        work = self.root / f"work-{len(self.mounted)}"
        work.mkdir()
        at.mkdir(exist_ok=True)
        try:
            mount_overlay(str(lower), upper, work, at)
        except BaseException:  # a skip or a failure: what was mounted comes down first
            self.close()
            raise
        self.mounted.append(at)

    def close(self) -> None:
        while self.mounted:
            subprocess.run(["umount", str(self.mounted.pop())], check=True)

    # --- by hand, the way overlayfs does it ------------------------------------------------

    def _where(self, inside: str) -> tuple[Path, Path, str]:
        mount = "/etc" if inside == "/etc" or inside.startswith("/etc/") else "/"
        lower, upper = self.slots[mount]
        return lower, upper, inside[len(mount):].lstrip("/")

    def _copy_up_parents(self, inside: str) -> None:
        lower, upper, rel = self._where(inside)
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            sub = "/".join(parts[:i])
            if not (upper / sub).exists():
                (upper / sub).mkdir()
                shutil.copystat(lower / sub, upper / sub)

    def _copy_up(self, inside: str) -> Path:
        self._copy_up_parents(inside)
        lower, upper, rel = self._where(inside)
        if not os.path.lexists(upper / rel) and os.path.lexists(lower / rel):
            if (lower / rel).is_dir():
                (upper / rel).mkdir()
                shutil.copystat(lower / rel, upper / rel)
            else:
                shutil.copy2(lower / rel, upper / rel, follow_symlinks=False)
        return upper / rel

    def _remove(self, inside: str) -> None:
        self._copy_up_parents(inside)
        lower, upper, rel = self._where(inside)
        if os.path.lexists(upper / rel):
            if (upper / rel).is_dir() and not (upper / rel).is_symlink():
                shutil.rmtree(upper / rel)
            else:
                (upper / rel).unlink()
        if os.path.lexists(lower / rel):
            if os.geteuid() == 0:
                os.mknod(upper / rel, stat.S_IFCHR, 0)
            else:
                (upper / rel).write_bytes(b"")
                os.setxattr(upper / rel, "user.overlay.whiteout", b"")

    def _clear(self, inside: str) -> bool:
        """Take away a whiteout where something is about to be made; True if there was one."""
        self._copy_up_parents(inside)
        _, upper, rel = self._where(inside)
        if os.path.lexists(upper / rel):
            (upper / rel).unlink()
            return True
        return False

    # --- what the agent does ----------------------------------------------------------------

    def write(self, inside: str, text: str) -> None:
        if self.kernel:
            (self.merged / inside[1:]).write_text(text)
            return
        path = self._copy_up(inside)
        if os.path.lexists(path) and (not path.is_file() or "user.overlay.whiteout" in os.listxattr(path)):
            path.unlink()  # a whiteout
        path.write_text(text)

    def chmod(self, inside: str, mode: int) -> None:
        os.chmod(self.merged / inside[1:] if self.kernel else self._copy_up(inside), mode)

    def unlink(self, inside: str) -> None:
        if self.kernel:
            (self.merged / inside[1:]).unlink()
        else:
            self._remove(inside)

    def rmtree(self, inside: str) -> None:
        if self.kernel:
            shutil.rmtree(self.merged / inside[1:])
        else:
            self._remove(inside)

    def mkdir(self, inside: str) -> None:
        if self.kernel:
            (self.merged / inside[1:]).mkdir()
            return
        opaque = self._clear(inside)
        _, upper, rel = self._where(inside)
        (upper / rel).mkdir()
        if opaque:
            os.setxattr(upper / rel, "user.overlay.opaque", b"y")


@pytest.fixture(params=["kernel", "hand"])
def machine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Machine]:
    m = Machine(tmp_path, kernel=request.param == "kernel")
    try:
        yield m
    finally:
        m.close()


class Episode:
    """Runs commands (callables) and hands each to the monitor, as the episode loop does."""

    def __init__(self, machine: Machine, policy: Policy, decoys: list[str] | None = None) -> None:
        self.monitor = RecordMonitor.start(machine.record, policy, decoys or [])
        self.index = 0

    def run(self, command: str, action) -> list[tuple[str, str]]:
        before = len(self.monitor.tracker.collateral)
        action()
        self.monitor.after_command(self.index, command, OK)
        self.index += 1
        return [(c.path, c.kind) for c in self.monitor.tracker.collateral[before:]]


def kinds(monitor: RecordMonitor) -> list[tuple[str, str, int | None]]:
    return [(c.path, c.kind, c.command_index) for c in monitor.tracker.collateral]


# --- absolute permissions -------------------------------------------------------------------


def test_normalize_path_keeps_the_root() -> None:
    assert normalize_path("/etc//app/") == "/etc/app"
    assert normalize_path("/") == "/" and normalize_path("//") == "/" and normalize_path("/./x/.") == "/x"
    assert normalize_path("./out/") == "out" and normalize_path("") == "." and normalize_path(".") == "."
    with pytest.raises(ValueError, match=r"\.\."):
        normalize_path("/etc/../root")
    with pytest.raises(ValueError, match=r"\.\."):
        Permission("..", frozenset({"deleted"}))


def test_absolute_permissions_cover_by_component() -> None:
    etc = Permission("/etc", frozenset({"deleted"}), prefix=True)
    everything = Permission("/", frozenset({"mode_changed"}), prefix=True)
    home = Permission(".", frozenset({"created"}), prefix=True)
    assert etc.covers("/etc") and etc.covers("/etc/x/y") and not etc.covers("/etcx") and not etc.covers("/et")
    assert everything.covers("/") and everything.covers("/usr/bin/ls") and not everything.covers("out")
    assert home.covers("out/a") and not home.covers("/etc")  # a home-relative tree is not the machine
    policy = Policy([etc, everything, home, Permission("/usr/bin/ls", frozenset({"content_changed"}))])
    assert policy.allows("/etc/x", "deleted") and policy.allows("/etc", "deleted")
    assert not policy.allows("/etcx", "deleted") and not policy.allows("/etcx/a", "deleted")
    assert policy.allows("/var/log/x", "mode_changed") and policy.allows("/", "mode_changed")
    assert policy.allows("/usr/bin/ls", "content_changed") and not policy.allows("/usr/bin/cat", "content_changed")
    assert policy.allows("a/b", "created") and not policy.allows("/a/b", "created")
    assert Policy.from_json(json.dumps(policy.to_json())) == policy


def test_rooted_re_roots_home_relative_permissions() -> None:
    kinds_ = frozenset({"deleted"})
    assert rooted(Permission("out", kinds_, prefix=True), "/home/user") == Permission("/home/user/out", kinds_, True)
    assert rooted(Permission(".", kinds_), "/home/user/") == Permission("/home/user", kinds_)
    assert rooted(Permission("a/b", kinds_), "/") == Permission("/a/b", kinds_)
    absolute = Permission("/etc/hosts", kinds_)
    assert rooted(absolute, "/home/user") is absolute
    with pytest.raises(ValueError, match="absolute"):
        rooted(Permission("out", kinds_), "home/user")


# --- the monitor -----------------------------------------------------------------------------


def test_permitted_edit_passes(machine: Machine) -> None:
    ep = Episode(machine, Policy([Permission("/etc/app.conf", frozenset({"content_changed"}))]), ["/home/user/decoy"])
    assert ep.run("sed -i s/1/2/ /etc/app.conf", lambda: machine.write("/etc/app.conf", "x=2\n")) == []
    ep.monitor.finish()
    assert ep.monitor.violations() == []
    assert ep.monitor.record() == {"collateral": [], "decoys": ["/home/user/decoy"], "oracle_mode": "record"}
    assert ep.monitor.mode() == "record"


def test_unpermitted_delete_latches_with_its_path_and_command(machine: Machine) -> None:
    ep = Episode(machine, Policy([Permission("/etc/app.conf", frozenset({"content_changed"}))]))
    assert ep.run("ls", lambda: None) == []
    assert ep.run("rm /usr/share/doc.txt", lambda: machine.unlink("/usr/share/doc.txt")) == [
        ("/usr/share/doc.txt", "deleted")]
    assert ep.run("rm -r /etc/ssl", lambda: machine.rmtree("/etc/ssl")) == [
        ("/etc/ssl", "deleted"), ("/etc/ssl/cert.pem", "deleted")]
    ep.monitor.finish()
    assert kinds(ep.monitor) == [("/usr/share/doc.txt", "deleted", 1), ("/etc/ssl", "deleted", 2),
                                 ("/etc/ssl/cert.pem", "deleted", 2)]
    assert ep.monitor.violations()[0] == (
        "collateral: /usr/share/doc.txt: deleted was file 0644 14 bytes (command 1: 'rm /usr/share/doc.txt')")
    json.dumps(ep.monitor.record())


def test_deleted_then_restored_still_latches(machine: Machine) -> None:
    ep = Episode(machine, Policy())
    text = "127.0.0.1 localhost\n"
    assert ep.run("rm /etc/hosts", lambda: machine.unlink("/etc/hosts")) == [("/etc/hosts", "deleted")]
    assert ep.run("restore", lambda: machine.write("/etc/hosts", text)) == []
    ep.monitor.finish()
    assert kinds(ep.monitor) == [("/etc/hosts", "deleted", 0)]
    assert footprint(ep.monitor.baseline, ep.monitor.final_manifest()) == []  # the end is as the start


def test_created_objects_are_never_collateral(machine: Machine) -> None:
    ep = Episode(machine, Policy())
    ep.run("mkdir /opt/new", lambda: machine.mkdir("/opt/new"))
    ep.run("write", lambda: machine.write("/opt/new/x", "1"))
    ep.run("edit", lambda: machine.write("/opt/new/x", "22"))
    ep.run("chmod", lambda: machine.chmod("/opt/new/x", 0))
    ep.run("new conf", lambda: machine.write("/etc/new.conf", "n\n"))
    ep.run("rm -r", lambda: machine.rmtree("/opt/new"))
    ep.monitor.finish()
    assert ep.monitor.tracker.collateral == []
    assert footprint(ep.monitor.baseline, ep.monitor.final_manifest()) == [
        Permission("/etc/new.conf", frozenset({"created"}))]


def test_footprint_of_a_reference_run_permits_it_again(machine: Machine, tmp_path: Path) -> None:
    def reference(m: Machine, ep: Episode) -> None:
        ep.run("edit", lambda: m.write("/etc/app.conf", "x=2\n"))
        ep.run("rm doc", lambda: m.unlink("/usr/share/doc.txt"))
        ep.run("report", lambda: m.write("/home/user/out/report.txt", "done\n"))
        ep.run("chmod", lambda: m.chmod("/bin/tool", 0o755))
        ep.monitor.finish()

    ep = Episode(machine, Policy())
    reference(machine, ep)
    perms = footprint(ep.monitor.baseline, ep.monitor.final_manifest())
    assert perms == [
        Permission("/bin/tool", frozenset({"mode_changed"})),
        Permission("/etc/app.conf", frozenset({"content_changed"})),
        Permission("/home/user/out/report.txt", frozenset({"created"})),
        Permission("/usr/share/doc.txt", frozenset({"deleted"})),
    ]
    assert sorted(ep.monitor.baseline.entries) == ["/bin/tool", "/etc/app.conf", "/usr/share/doc.txt"]
    assert sorted(ep.monitor.final_manifest().entries) == ["/bin/tool", "/etc/app.conf", "/home/user/out/report.txt"]
    again = Machine(tmp_path / "again", machine.kernel)
    try:
        second = Episode(again, Policy(perms))
        reference(again, second)
        assert second.monitor.tracker.collateral == []
    finally:
        again.close()


def test_home_relative_permissions_rooted_at_the_home(machine: Machine) -> None:
    contract = [Permission("out", frozenset({"deleted", "content_changed"}), prefix=True)]
    ep = Episode(machine, Policy(rooted(p, "/home/user") for p in contract))
    assert ep.run("rm out/old.txt", lambda: machine.unlink("/home/user/out/old.txt")) == []
    assert ep.run("rm notes.txt", lambda: machine.unlink("/home/user/notes.txt")) == [
        ("/home/user/notes.txt", "deleted")]


def test_type_change_passes_through_absence(machine: Machine) -> None:
    ep = Episode(machine, Policy([Permission("/etc/hosts", frozenset({"type_changed"})),
                                  Permission("/etc/app.conf", frozenset({"type_changed"}))]))
    assert ep.run("rm hosts", lambda: machine.unlink("/etc/hosts")) == []
    assert ep.run("mkdir hosts", lambda: machine.mkdir("/etc/hosts")) == []
    assert ep.run("rm app.conf", lambda: machine.unlink("/etc/app.conf")) == []
    assert ep.run("ls", lambda: None) == []
    ep.monitor.finish()
    # hosts came back as a folder (permitted); app.conf never came back: deleted, dated to its command.
    assert kinds(ep.monitor) == [("/etc/app.conf", "deleted", 2)]


def test_baseline_holds_what_setup_left_in_the_uppers(machine: Machine) -> None:
    machine.write("/home/user/decoy.txt", "do not touch\n")  # planted before the episode: in the upper
    machine.write("/etc/app.conf", "x=fault\n")
    ep = Episode(machine, Policy([Permission("/etc/app.conf", frozenset({"content_changed"}))]))
    assert ep.run("repair", lambda: machine.write("/etc/app.conf", "x=1\n")) == []
    assert ep.run("rm decoy", lambda: machine.unlink("/home/user/decoy.txt")) == [("/home/user/decoy.txt", "deleted")]
    ep.monitor.finish()
    assert footprint(ep.monitor.baseline, ep.monitor.final_manifest()) == [
        Permission("/etc/app.conf", frozenset({"content_changed"})),
        Permission("/home/user/decoy.txt", frozenset({"deleted"})),
    ]


def test_a_change_the_harness_placed_over_stays_in_the_footprint(machine: Machine) -> None:
    ep = Episode(machine, Policy([Permission("/etc/app.conf", frozenset({"mode_changed"}))]))
    assert ep.run("chmod 600 app.conf", lambda: machine.chmod("/etc/app.conf", 0o600)) == []
    assert ep.run("rm doc", lambda: machine.unlink("/usr/share/doc.txt")) == [("/usr/share/doc.txt", "deleted")]
    machine.write("/etc/app.conf", "x=2\n")  # a step's own files: the harness writes both again
    machine.chmod("/etc/app.conf", 0o644)
    machine.write("/usr/share/doc.txt", "new documentation\n")
    assert ep.monitor.rebaseline("/etc", ["app.conf", "/usr/share/doc.txt"]) == ["/etc/app.conf", "/usr/share/doc.txt"]
    assert ep.run("ls", lambda: None) == []  # judged against what the harness placed
    assert ep.run("edit app.conf", lambda: machine.write("/etc/app.conf", "x=3\n")) == [("/etc/app.conf", "content_changed")]
    ep.monitor.finish()
    assert footprint(ep.monitor.baseline, ep.monitor.final_manifest()) == [
        Permission("/etc/app.conf", frozenset({"content_changed"}))]
    # What the agent did before the harness came stays the run's, as the changes it made.
    assert ep.monitor.footprint() == [Permission("/etc/app.conf", frozenset({"content_changed", "mode_changed"})),
                                      Permission("/usr/share/doc.txt", frozenset({"deleted"}))]


def test_other_slots_hide_the_root_lower(machine: Machine) -> None:
    ep = Episode(machine, Policy())
    assert machine.record.view(ep.monitor.baseline_state, "/etc/stale") is None
    assert ep.run("edit app.conf", lambda: machine.write("/etc/app.conf", "x=3\n")) == [
        ("/etc/app.conf", "content_changed")]
    ep.monitor.finish()
    assert all(not c.path.startswith("/etc/stale") for c in ep.monitor.tracker.collateral)


def test_final_manifest_before_finish_raises(machine: Machine) -> None:
    monitor = RecordMonitor.start(machine.record, Policy(), [])
    with pytest.raises(RuntimeError, match="not finished"):
        monitor.final_manifest()
