"""``USER name[:group]`` resolved against an image's own /etc/passwd and /etc/group, as the engine resolves it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ImageUser:
    """Who a step or the agent runs as: ids inside the sandbox, the name and home the environment shows, its groups."""

    uid: int
    gid: int
    name: str
    home: str
    groups: tuple[int, ...] = ()


def _table(text: str, fields: int) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        parts = line.split(":")
        if len(parts) >= fields and not line.startswith("#"):
            rows.append(parts)
    return rows


def resolve_user(spec: str, passwd: str, group: str) -> ImageUser:
    """The account ``spec`` names ('' or 'root': root; 'name', 'uid', 'name:group', 'uid:gid'); ValueError naming what is missing.

    A numeric uid need not exist (its group is then 0, its home /); a name must. Without a
    group, the account's primary group and every group of /etc/group listing the name.
    """
    spec = spec.strip() or "root"
    user_part, _, group_part = spec.partition(":")
    users = _table(passwd, 7)
    groups = _table(group, 4)
    row = next((r for r in users if r[0] == user_part), None)
    if row is None and user_part.isdigit():
        row = next((r for r in users if r[2] == user_part), None)
        uid, gid, name, home = int(user_part), int(row[3]) if row else 0, row[0] if row else user_part, row[5] if row else "/"
    elif row is None:
        raise ValueError(f"unable to find user {user_part}: no matching entries in the image's /etc/passwd")
    else:
        uid, gid, name, home = int(row[2]), int(row[3]), row[0], row[5]
    if group_part:
        grow = next((r for r in groups if r[0] == group_part), None)
        if grow is None and group_part.isdigit():
            gid = int(group_part)
        elif grow is None:
            raise ValueError(f"unable to find group {group_part}: no matching entries in the image's /etc/group")
        else:
            gid = int(grow[2])
        return ImageUser(uid, gid, name, home)
    extra = tuple(sorted({int(r[2]) for r in groups if name in r[3].split(",") and r[2].isdigit()} | {gid}))
    return ImageUser(uid, gid, name, home, extra if uid != 0 else ())
