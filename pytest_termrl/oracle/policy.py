"""Permitted changes and the collateral they leave out.

A contract permits, per path (or per subtree), the kinds of change the reference
solution makes. Anything else done to an object that existed before the agent started
is collateral. Collateral latches: a file deleted and later restored was still
deleted, and the episode is judged on the first command that did it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pytest_termrl.oracle.diff import CHANGE_KINDS, Change, compare_entries, diff_manifests, show_path
from pytest_termrl.oracle.manifest import ROOT, Entry, Manifest

END_OF_EPISODE = "(end of episode)"
"""The command text of collateral first seen by the final check, not after any command."""


def normalize_path(path: str) -> str:
    """'./out/' -> 'out'; '' -> '.'; '/etc//app/' -> '/etc/app'; '/' -> '/'.

    A relative path is home-relative (the home's manifest); an absolute one names a path
    of the whole sandbox filesystem (the overlays' change record).
    """
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ValueError(f"permission path must not contain '..': {path!r}")
    if path.startswith("/"):
        return "/" + "/".join(parts)
    return "/".join(parts) or ROOT


@dataclass(frozen=True)
class Permission:
    """``kinds`` of change allowed at ``path`` (and, with ``prefix``, anywhere below it)."""

    path: str
    kinds: frozenset[str]
    prefix: bool = False

    def __post_init__(self) -> None:
        kinds = frozenset(self.kinds)
        unknown = kinds - set(CHANGE_KINDS)
        if unknown:
            raise ValueError(f"unknown change kinds {sorted(unknown)} for {self.path!r}; known: {CHANGE_KINDS}")
        object.__setattr__(self, "kinds", kinds)
        object.__setattr__(self, "path", normalize_path(self.path))

    def covers(self, path: str) -> bool:
        """Component-wise: prefix 'out' covers 'out' and 'out/a', never 'outx'.

        Prefix '.' covers every home-relative path, prefix '/' every absolute one.
        """
        if path == self.path:
            return True
        if not self.prefix:
            return False
        if self.path == ROOT:
            return not path.startswith("/")
        if self.path == "/":
            return path.startswith("/")
        return path.startswith(self.path + "/")

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kinds": sorted(self.kinds), "prefix": self.prefix}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Permission:
        return cls(d["path"], frozenset(d["kinds"]), bool(d.get("prefix", False)))


def rooted_path(path: str, home: str) -> str:
    """``path`` as an absolute key: a home-relative one re-rooted at ``home`` (an absolute inside path)."""
    path = normalize_path(path)
    if path.startswith("/"):
        return path
    top = normalize_path(home)
    if not top.startswith("/"):
        raise ValueError(f"the home must be an absolute path inside the sandbox: {home!r}")
    if path == ROOT:
        return top
    return f"/{path}" if top == "/" else f"{top}/{path}"


def rooted(permission: Permission, home: str) -> Permission:
    """``permission`` for absolute keys: a home-relative path re-rooted at ``home`` (an absolute inside path)."""
    if permission.path.startswith("/"):
        return permission
    return Permission(rooted_path(permission.path, home), permission.kinds, permission.prefix)


class Policy:
    """A set of Permissions, indexed so a check costs a dict lookup per path component."""

    def __init__(self, permissions: Iterable[Permission] = ()) -> None:
        self.permissions: tuple[Permission, ...] = tuple(
            sorted(permissions, key=lambda p: (p.path, p.prefix, sorted(p.kinds))))
        self._exact: dict[str, set[str]] = {}
        self._prefix: dict[str, set[str]] = {}
        for p in self.permissions:
            (self._prefix if p.prefix else self._exact).setdefault(p.path, set()).update(p.kinds)

    def allows(self, path: str, kind: str) -> bool:
        if kind in self._exact.get(path, ()):
            return True
        if not self._prefix:
            return False
        if kind in self._prefix.get("/" if path.startswith("/") else ROOT, ()):
            return True
        probe = path
        while True:
            if kind in self._prefix.get(probe, ()):
                return True
            cut = probe.rfind("/")
            if cut <= 0:  # relative: no folder above; absolute: "/" was looked at first
                return False
            probe = probe[:cut]

    def permits(self, change: Change) -> bool:
        return self.allows(change.path, change.kind)

    def to_json(self) -> list[dict[str, Any]]:
        """A JSON-ready list of ``{"path", "kinds", "prefix"}`` (for a contract line)."""
        return [p.to_dict() for p in self.permissions]

    @classmethod
    def from_json(cls, data: str | list[dict[str, Any]]) -> Policy:
        """From the list :meth:`to_json` gives, or from its JSON text."""
        items: list[dict[str, Any]] = json.loads(data) if isinstance(data, str) else data
        return cls(Permission.from_dict(d) for d in items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Policy) and self.permissions == other.permissions

    def __repr__(self) -> str:
        return f"Policy({list(self.permissions)!r})"


def footprint(baseline: Manifest, final: Manifest, during: Iterable[Manifest] = (),
              earlier: Iterable[Change] = ()) -> list[Permission]:
    """The exact-path permissions a reference run needs: every changed path, every kind seen.

    ``during`` may hold the manifests taken between commands, so that kinds a reference
    run shows only transiently (a file deleted, then recreated) are permitted too.
    ``earlier``: changes made before the harness took their paths into the baseline anew
    (:attr:`CollateralTracker.replaced`), which ``baseline`` no longer shows.
    """
    kinds: dict[str, set[str]] = {}
    for change in earlier:
        kinds.setdefault(change.path, set()).add(change.kind)
    for manifest in (*during, final):
        for change in diff_manifests(baseline, manifest):
            kinds.setdefault(change.path, set()).add(change.kind)
    return [Permission(path, frozenset(k)) for path, k in sorted(kinds.items())]


def changes_at(path: str, before: Entry | None, after: Entry | None) -> list[Change]:
    """Every change at ``path`` from ``before`` to ``after`` (None: absent), its creation included."""
    if before is None:
        return [] if after is None else [Change(path, "created", None, after)]
    return changes_to_existing(path, before, after)


def changes_to_existing(path: str, before: Entry | None, after: Entry | None) -> list[Change]:
    """The changes at ``path`` that can be collateral: none if it did not exist before (created)."""
    if before is None:
        return []
    if after is None:
        return [Change(path, "deleted", before, None)]
    return compare_entries(path, before, after)


@dataclass(frozen=True)
class Collateral:
    """One unpermitted change to a pre-existing object, latched at the first command that made it."""

    path: str
    kind: str
    detail: str
    """before -> after, e.g. ``0644 -> 0000``."""
    command_index: int | None
    """Index of the command after which it was first seen; None if first seen at the end."""
    command: str
    before: Entry | None = field(default=None, compare=False)
    after: Entry | None = field(default=None, compare=False)

    def describe(self) -> str:
        change = f"{show_path(self.path)}: {self.kind}" + (f" {self.detail}" if self.detail else "")
        where = "at the end" if self.command_index is None else f"command {self.command_index}"
        return f"{change} ({where}: {self.command!r})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "detail": self.detail,
            "command_index": self.command_index,
            "command": self.command,
            "before": self.before.to_dict() if self.before else None,
            "after": self.after.to_dict() if self.after else None,
        }


class OracleFindings:
    """What both oracles (the home's, the machine's) report the same way: their final manifest and their violations."""

    baseline: Manifest
    final: Manifest | None
    tracker: "CollateralTracker"

    def final_manifest(self) -> Manifest:
        """The manifest the episode ended with (see the oracle's own docstring)."""
        if self.final is None:
            raise RuntimeError("the episode has not finished: no final manifest yet")
        return self.final

    def footprint(self) -> list[Permission]:
        """What the run changed, as exact-path permissions: every change from the baseline to the final manifest,
        and what the agent had done to a path before the harness placed it anew (a step's own files, a hook)."""
        return footprint(self.baseline, self.final_manifest(), earlier=self.tracker.replaced)

    def violations(self) -> list[str]:
        return [f"collateral: {c.describe()}" for c in self.tracker.collateral]

    def rebaseline(self, workdir: str, paths: Iterable[str] | None) -> list[str]:
        """The harness, not the agent, changed the sandbox: take what it changed into the baseline, as it is now.

        ``paths`` (relative to ``workdir``, the agent's working folder as the agent sees it) are
        what the harness placed; None: everything that changed since the oracle last looked (a
        setup hook the harness ran). Those paths are the baseline from now on: their being there
        is never a finding, and a later change to one is judged like a change to any object that
        was there before, by the permitted changes. What else changed since the last look is
        the agent's, judged at the next look. What the agent had done to a path taken in (a file it
        edited that the harness then wrote again) stays in :meth:`footprint`, as the change it made.
        Returns the keys taken in (the oracle's spelling).
        """
        raise NotImplementedError


class CollateralTracker:
    """Compares each manifest with the baseline and keeps what the policy does not permit."""

    def __init__(self, baseline: Manifest, policy: Policy) -> None:
        self.baseline = baseline
        self.policy = policy
        self._latched: list[Collateral] = []
        self._seen: set[tuple[str, str]] = set()
        self._absent: dict[str, tuple[int | None, str, Change]] = {}
        """Paths that may change type and are missing now: since which command, and how."""
        self.replaced: list[Change] = []
        """What was done to paths before :meth:`rebaseline` took them in anew: gone from the baseline, still the run's doing."""

    @property
    def collateral(self) -> list[Collateral]:
        """All collateral latched so far, in the order it was found."""
        return list(self._latched)

    def _latch(self, change: Change, index: int | None, command: str) -> Collateral | None:
        key = (change.path, change.kind)
        if key in self._seen:
            return None
        self._seen.add(key)
        found = Collateral(change.path, change.kind, change.detail(), index, command,
                           change.before, change.after)
        self._latched.append(found)
        return found

    def rebaseline(self, entries: dict[str, Entry | None], was: dict[str, tuple[Entry | None, Entry | None]]) -> None:
        """Make ``entries`` (None: absent) the baseline of their paths from now on: the harness put them so.

        ``was``: each of those paths in the baseline until now and as the oracle last saw it,
        before the harness came; where the two differ the agent had changed it, and that
        change is kept in :attr:`replaced`, whatever the harness put there. What was latched
        stays latched; a path taken in is no longer waiting to come back (a type change
        passing through absence).
        """
        for path in sorted(entries):
            self.replaced.extend(changes_at(path, *was[path]))
        base, base_keys = dict(self.baseline.entries), dict(self.baseline.keys)
        for path, entry in entries.items():
            base_keys.pop(path, None)
            if entry is None:
                base.pop(path, None)
            else:
                base[path] = entry
            self._absent.pop(path, None)
        self.baseline = Manifest(base, base_keys, self.baseline.root)

    def check(self, current: Manifest, command_index: int | None, command: str) -> list[Collateral]:
        """The collateral first seen in ``current``: changes to baseline objects not permitted."""
        return self.judge(diff_manifests(self.baseline, current), command_index, command)

    def check_paths(self, current: dict[str, Entry], paths: Iterable[str], command_index: int | None,
                    command: str) -> list[Collateral]:
        """As :meth:`check`, when only ``paths`` can differ from the state of the last check.

        The live manifest says which paths those are; every other path is as it was, so
        what it shows was judged already (collateral latches, absence keeps its date).
        """
        base = self.baseline.entries
        scope = set(paths)
        changes: list[Change] = []
        for path in sorted(scope):
            changes.extend(changes_to_existing(path, base.get(path), current.get(path)))
        return self.judge(changes, command_index, command, scope)

    def judge(self, changes: Iterable[Change], command_index: int | None, command: str,
              scope: set[str] | None = None) -> list[Collateral]:
        """Latch the unpermitted ``changes`` (from the baseline, after command ``command_index``).

        ``scope``: the only paths the changes may be about (None: every path), so that a
        path outside it keeps the date it went missing. For a monitor that computes the
        changes itself (the overlays' change record), with the very rules of :meth:`check`.
        """
        new: list[Collateral] = []
        missing: set[str] = set()
        for change in changes:
            if change.kind == "created" or self.policy.permits(change):
                continue
            if change.kind == "deleted" and self.policy.allows(change.path, "type_changed"):
                # Being replaced by another type passes through absence; judged at the end.
                missing.add(change.path)
                self._absent.setdefault(change.path, (command_index, command, change))
                continue
            found = self._latch(change, command_index, command)
            if found is not None:
                new.append(found)
        for path in [p for p in self._absent if p not in missing and (scope is None or p in scope)]:
            del self._absent[path]
        return new

    def finish(self, final: Manifest) -> list[Collateral]:
        """Check the final manifest; a path still absent now is deleted, dated to when it went."""
        return self.finish_changes(diff_manifests(self.baseline, final))

    def finish_changes(self, changes: Iterable[Change]) -> list[Collateral]:
        """As :meth:`finish`, from every change between the baseline and the final state."""
        new = self.judge(changes, None, END_OF_EPISODE)
        for path in sorted(self._absent):
            index, command, change = self._absent[path]
            found = self._latch(change, index, command)
            if found is not None:
                new.append(found)
        self._absent.clear()
        return new

    def to_dict(self) -> dict[str, Any]:
        return {"collateral": [c.to_dict() for c in self._latched]}
