"""Property-by-property differences between two manifests.

One path can change in several ways at once (``chmod`` after an edit); each way is its
own Change so that a policy can permit one and not the other. A change of type is the
exception: comparing a file's mode with a symlink's means nothing, so it stands alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_termrl.oracle.manifest import Entry, Manifest

CHANGE_KINDS: tuple[str, ...] = (
    "created",
    "deleted",
    "type_changed",
    "content_changed",
    "mode_changed",
    "owner_changed",
    "link_changed",
)
_ORDER = {kind: i for i, kind in enumerate(CHANGE_KINDS)}


def show_path(path: str) -> str:
    """The path as text a person can read: quoted when it holds newlines or undecodable bytes."""
    return path if path.isprintable() else repr(path)


def _short(sha: str | None) -> str:
    return sha[:12] if sha else "unreadable"


def _what(e: Entry) -> str:
    if e.kind == "symlink":
        return f"symlink -> {e.target!r}"
    if e.kind == "file":
        return f"file {e.mode:04o} {e.size} bytes"
    return f"{e.kind} {e.mode:04o}"


@dataclass(frozen=True, slots=True)
class Change:
    path: str
    kind: str
    before: Entry | None
    after: Entry | None

    def detail(self) -> str:
        """The before -> after part, e.g. ``0644 -> 0000``."""
        b, a = self.before, self.after
        if self.kind == "created" and a is not None:
            return _what(a)
        if self.kind == "deleted" and b is not None:
            return f"was {_what(b)}"
        if b is None or a is None:
            return ""
        if self.kind == "type_changed":
            return f"{_what(b)} -> {_what(a)}"
        if self.kind == "content_changed":
            return f"{b.size} bytes sha256 {_short(b.sha256)} -> {a.size} bytes sha256 {_short(a.sha256)}"
        if self.kind == "mode_changed":
            return f"{b.mode:04o} -> {a.mode:04o}"
        if self.kind == "owner_changed":
            return f"{b.uid}:{b.gid} -> {a.uid}:{a.gid}"
        if self.kind == "link_changed":
            return f"{b.target!r} -> {a.target!r}"
        return ""

    def describe(self) -> str:
        """One line, e.g. ``notes.txt: mode_changed 0644 -> 0000``."""
        detail = self.detail()
        return f"{show_path(self.path)}: {self.kind}" + (f" {detail}" if detail else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "before": self.before.to_dict() if self.before else None,
            "after": self.after.to_dict() if self.after else None,
            "detail": self.detail(),
        }


def compare_entries(path: str, before: Entry, after: Entry) -> list[Change]:
    """The changes between two Entries of the same path (none when equal)."""
    if before is after or before == after:
        return []
    if before.kind != after.kind:
        return [Change(path, "type_changed", before, after)]
    out: list[Change] = []
    if before.kind == "file" and (before.sha256 != after.sha256 or before.size != after.size):
        out.append(Change(path, "content_changed", before, after))
    if before.mode != after.mode:
        out.append(Change(path, "mode_changed", before, after))
    if before.uid != after.uid or before.gid != after.gid:
        out.append(Change(path, "owner_changed", before, after))
    if before.kind == "symlink" and before.target != after.target:
        out.append(Change(path, "link_changed", before, after))
    return out


def diff_manifests(baseline: Manifest, current: Manifest) -> list[Change]:
    """Every change from ``baseline`` to ``current``, sorted by path, then kind."""
    old, new = baseline.entries, current.entries
    out: list[Change] = []
    for path, before in old.items():
        after = new.get(path)
        if after is None:
            out.append(Change(path, "deleted", before, None))
        elif after is not before:
            out.extend(compare_entries(path, before, after))
    if len(new) != len(old) or out:
        for path, after in new.items():
            if path not in old:
                out.append(Change(path, "created", None, after))
    out.sort(key=lambda c: (c.path, _ORDER[c.kind]))
    return out
