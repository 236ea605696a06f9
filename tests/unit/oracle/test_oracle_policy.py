"""Diffs, permissions and latching collateral, driven by real changes to real files."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_termrl.oracle.diff import CHANGE_KINDS, Change, diff_manifests
from pytest_termrl.oracle.manifest import Manifest, take_manifest
from pytest_termrl.oracle.policy import (
    END_OF_EPISODE,
    Collateral,
    CollateralTracker,
    Permission,
    Policy,
    footprint,
)



@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = tmp_path / "home"
    (root / "data").mkdir(parents=True)
    (root / "out").mkdir()
    (root / "outx").mkdir()
    (root / "notes.txt").write_text("remember the milk\n")
    (root / "data" / "input.csv").write_text("a,b\n1,2\n")
    (root / "out" / "old.txt").write_text("old\n")
    (root / "outx" / "keep.txt").write_text("keep\n")
    os.symlink("data/input.csv", root / "current")
    for p in [root, *root.rglob("*")]:
        if not p.is_symlink():
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
    return root


class Episode:
    """Runs 'commands' (Python callables) and checks the home after each, like the loop does."""

    def __init__(self, home: Path, policy: Policy) -> None:
        self.home = home
        self.baseline = take_manifest(home)
        self.last: Manifest = self.baseline
        self.tracker = CollateralTracker(self.baseline, policy)
        self.index = 0

    def run(self, command: str, action: Callable[[], object]) -> list[Collateral]:
        action()
        self.last = take_manifest(self.home, self.last)
        found = self.tracker.check(self.last, self.index, command)
        self.index += 1
        return found

    def finish(self) -> list[Collateral]:
        return self.tracker.finish(take_manifest(self.home, self.last))


def kinds(found: list[Collateral]) -> list[tuple[str, str]]:
    return [(c.path, c.kind) for c in found]


# --- diff -----------------------------------------------------------------------------


def test_diff_detects_every_kind(home: Path) -> None:
    before = take_manifest(home)
    (home / "new.txt").write_text("new")
    (home / "out" / "old.txt").unlink()
    (home / "notes.txt").write_text("forget the milk\n")  # same size, new bytes
    os.chmod(home / "data" / "input.csv", 0o600)
    os.chown(home / "outx" / "keep.txt", 1000, 1000)
    os.unlink(home / "current")
    os.symlink("notes.txt", home / "current")
    shutil.rmtree(home / "outx")
    (home / "outx").write_text("now a file")
    changes = diff_manifests(before, take_manifest(home))
    assert [(c.path, c.kind) for c in changes] == [
        ("current", "link_changed"),
        ("data/input.csv", "mode_changed"),
        ("new.txt", "created"),
        ("notes.txt", "content_changed"),
        ("out/old.txt", "deleted"),
        ("outx", "type_changed"),
        ("outx/keep.txt", "deleted"),
    ]
    assert {c.kind for c in changes} | {"owner_changed"} == set(CHANGE_KINDS)


def test_owner_change_and_several_changes_on_one_path(home: Path) -> None:
    before = take_manifest(home)
    path = home / "notes.txt"
    path.write_text("longer content than before\n")
    os.chmod(path, 0o000)
    os.chown(path, 1000, 1001)
    changes = diff_manifests(before, take_manifest(home))
    assert [c.kind for c in changes] == ["content_changed", "mode_changed", "owner_changed"]
    assert changes[1].describe() == "notes.txt: mode_changed 0644 -> 0000"
    assert changes[2].describe() == "notes.txt: owner_changed 0:0 -> 1000:1001"
    assert changes[0].describe().startswith("notes.txt: content_changed 18 bytes sha256 ")


def test_type_change_stands_alone(home: Path) -> None:
    before = take_manifest(home)
    (home / "notes.txt").unlink()
    os.mkdir(home / "notes.txt", 0o700)
    changes = diff_manifests(before, take_manifest(home))
    assert [(c.path, c.kind) for c in changes] == [("notes.txt", "type_changed")]
    assert changes[0].describe() == "notes.txt: type_changed file 0644 18 bytes -> dir 0700"
    json.dumps([c.to_dict() for c in changes])


def test_describe_quotes_unprintable_names() -> None:
    change = Change("a\nb", "created", None, None)
    assert change.describe() == "'a\\nb': created"


def test_no_changes_no_diff(home: Path) -> None:
    before = take_manifest(home)
    (home / "data" / "input.csv").read_text()
    assert diff_manifests(before, take_manifest(home, before)) == []


# --- policy -----------------------------------------------------------------------------


def test_permission_paths_and_prefix_boundary() -> None:
    exact = Permission("out", frozenset({"content_changed"}))
    tree = Permission("./out/", frozenset({"deleted"}), prefix=True)
    assert tree.path == "out"
    assert exact.covers("out") and not exact.covers("out/a")
    assert tree.covers("out") and tree.covers("out/a/b") and not tree.covers("outx")
    assert not tree.covers("outx/a") and not tree.covers("ou")
    everything = Permission(".", frozenset({"deleted"}), prefix=True)
    assert everything.covers("a/b") and everything.covers(".")
    policy = Policy([exact, tree])
    assert policy.allows("out/a/b", "deleted") and not policy.allows("outx/a", "deleted")
    assert not policy.allows("out/a", "content_changed")
    assert Policy([everything]).allows("x/y", "deleted")


def test_permission_validation() -> None:
    with pytest.raises(ValueError, match="unknown change kinds"):
        Permission("a", frozenset({"renamed"}))
    assert Permission("/home/user/a/", frozenset({"deleted"})).path == "/home/user/a"  # whole-machine paths
    with pytest.raises(ValueError, match=r"\.\."):
        Permission("a/../b", frozenset({"deleted"}))
    assert Permission("a", {"deleted"}).kinds == frozenset({"deleted"})  # type: ignore[arg-type]


def test_policy_json_round_trip() -> None:
    policy = Policy([
        Permission("out", frozenset({"created", "deleted"}), prefix=True),
        Permission("data/input.csv", frozenset({"mode_changed", "type_changed"})),
    ])
    data = policy.to_json()
    assert data == [
        {"path": "data/input.csv", "kinds": ["mode_changed", "type_changed"], "prefix": False},
        {"path": "out", "kinds": ["created", "deleted"], "prefix": True},
    ]
    assert Policy.from_json(data) == policy
    assert Policy.from_json(json.dumps(data)) == policy


# --- tracker ----------------------------------------------------------------------------


def test_every_kind_is_collateral_and_latches(home: Path) -> None:
    ep = Episode(home, Policy())
    assert ep.run("touch new", lambda: (home / "new.txt").write_text("x")) == []
    assert kinds(ep.run("rm", lambda: (home / "out" / "old.txt").unlink())) == [("out/old.txt", "deleted")]
    assert kinds(ep.run("edit", lambda: (home / "notes.txt").write_text("x"))) == [("notes.txt", "content_changed")]
    assert kinds(ep.run("chmod", lambda: os.chmod(home / "data" / "input.csv", 0))) == [
        ("data/input.csv", "mode_changed")]
    assert kinds(ep.run("chown", lambda: os.chown(home / "data", 1000, 1000))) == [("data", "owner_changed")]

    def relink() -> None:
        os.unlink(home / "current")
        os.symlink("elsewhere", home / "current")

    assert kinds(ep.run("ln -sf", relink)) == [("current", "link_changed")]

    def retype() -> None:
        shutil.rmtree(home / "outx")
        os.symlink("out", home / "outx")

    assert kinds(ep.run("rm -r; ln -s", retype)) == [("outx", "type_changed"), ("outx/keep.txt", "deleted")]
    assert ep.finish() == []
    latched = ep.tracker.collateral
    assert [(c.command_index, c.command) for c in latched][:2] == [(1, "rm"), (2, "edit")]
    assert {c.kind for c in latched} == set(CHANGE_KINDS) - {"created"}
    json.dumps(ep.tracker.to_dict())


def test_collateral_latches_even_if_undone(home: Path) -> None:
    ep = Episode(home, Policy())
    found = ep.run("chmod 000 notes.txt", lambda: os.chmod(home / "notes.txt", 0))
    assert [c.describe() for c in found] == ["notes.txt: mode_changed 0644 -> 0000 (command 0: 'chmod 000 notes.txt')"]
    assert ep.run("chmod 644 notes.txt", lambda: os.chmod(home / "notes.txt", 0o644)) == []
    assert ep.run("chmod 000 notes.txt", lambda: os.chmod(home / "notes.txt", 0)) == []  # reported once
    assert ep.finish() == []
    (only,) = ep.tracker.collateral
    assert only.to_dict() == {
        "path": "notes.txt", "kind": "mode_changed", "detail": "0644 -> 0000",
        "command_index": 0, "command": "chmod 000 notes.txt",
        "before": only.before.to_dict(), "after": only.after.to_dict(),
    }


def test_deleted_and_restored_is_still_collateral(home: Path) -> None:
    ep = Episode(home, Policy())
    saved = (home / "notes.txt").read_bytes()
    assert kinds(ep.run("rm notes.txt", lambda: (home / "notes.txt").unlink())) == [("notes.txt", "deleted")]
    assert ep.run("restore", lambda: (home / "notes.txt").write_bytes(saved)) == []
    assert diff_manifests(ep.baseline, ep.last) == []
    assert kinds(ep.tracker.collateral) == [("notes.txt", "deleted")]


def test_created_paths_are_never_collateral(home: Path) -> None:
    ep = Episode(home, Policy())

    def churn() -> None:
        (home / "tmp").mkdir()
        (home / "tmp" / "x").write_text("1")

    ep.run("mkdir", churn)
    ep.run("edit", lambda: (home / "tmp" / "x").write_text("22"))
    ep.run("chmod", lambda: os.chmod(home / "tmp" / "x", 0))
    ep.run("rm", lambda: shutil.rmtree(home / "tmp"))
    assert ep.finish() == [] and ep.tracker.collateral == []


def test_exact_permission(home: Path) -> None:
    policy = Policy([Permission("data/input.csv", frozenset({"content_changed"}))])
    ep = Episode(home, policy)
    assert ep.run("edit input", lambda: (home / "data" / "input.csv").write_text("a,b\n3,4\n")) == []
    assert kinds(ep.run("chmod input", lambda: os.chmod(home / "data" / "input.csv", 0o600))) == [
        ("data/input.csv", "mode_changed")]
    assert kinds(ep.run("chmod dir", lambda: os.chmod(home / "data", 0o700))) == [("data", "mode_changed")]


def test_prefix_permission_and_its_boundary(home: Path) -> None:
    policy = Policy([Permission("out", frozenset({"deleted", "content_changed"}), prefix=True)])
    ep = Episode(home, policy)
    assert ep.run("rm out/old.txt", lambda: (home / "out" / "old.txt").unlink()) == []
    assert kinds(ep.run("rm outx/keep.txt", lambda: (home / "outx" / "keep.txt").unlink())) == [
        ("outx/keep.txt", "deleted")]
    assert kinds(ep.run("chmod out", lambda: os.chmod(home / "out", 0o700))) == [("out", "mode_changed")]


def test_replaced_path_passes_when_present_at_the_end(home: Path) -> None:
    target = home / "data" / "input.csv"
    policy = Policy([Permission("data/input.csv", frozenset({"type_changed"}))])
    ep = Episode(home, policy)
    assert ep.run("mv input.csv away", lambda: os.rename(target, home / "data" / "moved.csv")) == []
    assert ep.run("mkfifo input.csv", lambda: os.mkfifo(target, 0o644)) == []
    assert ep.run("rm input.csv", lambda: target.unlink()) == []
    assert ep.run("mv back", lambda: os.rename(home / "data" / "moved.csv", target)) == []
    assert ep.finish() == [] and ep.tracker.collateral == []


def test_replaced_path_absent_at_the_end_is_deleted(home: Path) -> None:
    target = home / "data" / "input.csv"
    policy = Policy([Permission("data/input.csv", frozenset({"type_changed"}))])
    ep = Episode(home, policy)
    assert ep.run("cat input.csv", lambda: target.read_text()) == []
    assert ep.run("rm input.csv", lambda: target.unlink()) == []
    assert ep.run("mkfifo input.csv", lambda: os.mkfifo(target)) == []
    assert ep.run("rm input.csv again", lambda: target.unlink()) == []
    assert ep.run("ls", lambda: None) == []
    (late,) = ep.finish()
    # Dated to the command after which it has been missing ever since.
    assert (late.path, late.kind, late.command_index, late.command) == (
        "data/input.csv", "deleted", 3, "rm input.csv again")
    assert ep.tracker.finish(take_manifest(home)) == []  # latched once


def test_replaced_path_with_deletion_permitted(home: Path) -> None:
    target = home / "data" / "input.csv"
    policy = Policy([Permission("data/input.csv", frozenset({"type_changed", "deleted"}))])
    ep = Episode(home, policy)
    ep.run("rm", lambda: target.unlink())
    assert ep.finish() == []


def test_collateral_first_seen_at_the_end(home: Path) -> None:
    ep = Episode(home, Policy())
    ep.run("ls", lambda: None)
    (home / "notes.txt").unlink()  # a background process, after the last check
    (late,) = ep.finish()
    assert (late.command_index, late.command) == (None, END_OF_EPISODE)
    assert "at the end" in late.describe()


def test_footprint_permits_the_reference_run(home: Path) -> None:
    baseline = take_manifest(home)
    during = []
    os.chmod(home / "data" / "input.csv", 0o600)
    during.append(take_manifest(home))
    (home / "out" / "old.txt").unlink()
    during.append(take_manifest(home))
    (home / "out" / "old.txt").write_text("regenerated\n")
    (home / "out" / "report.txt").write_text("done\n")
    os.chmod(home / "data" / "input.csv", 0o644)
    final = take_manifest(home)
    assert footprint(baseline, final) == [
        Permission("out/old.txt", frozenset({"content_changed"})),
        Permission("out/report.txt", frozenset({"created"})),
    ]
    perms = footprint(baseline, final, during)
    assert perms == [
        Permission("data/input.csv", frozenset({"mode_changed"})),
        Permission("out/old.txt", frozenset({"content_changed", "deleted"})),
        Permission("out/report.txt", frozenset({"created"})),
    ]
    tracker = CollateralTracker(baseline, Policy(perms))
    for i, m in enumerate(during):
        assert tracker.check(m, i, f"step {i}") == []
    assert tracker.finish(final) == []
    assert Policy.from_json(json.dumps(Policy(perms).to_json())) == Policy(perms)
