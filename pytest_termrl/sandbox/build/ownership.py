"""``--chown`` and ``--chmod``: the owner and mode COPY and ADD give what they write.

Owner: ``--chown`` or 0:0, names looked up in the image's own /etc/passwd and /etc/group (the
layer writers then shift it by ``host_id``: the layer sits in a user namespace). Mode: the
source's (setuid bits included) unless ``--chmod`` is given, octal (exact) or symbolic (chmod(1),
Dockerfile 1.14; no umask), for files and folders alike.
"""

from __future__ import annotations

import re
import stat
from dataclasses import dataclass

from pytest_termrl.errors import TaskFormatError

__all__ = ["ROOT", "Owner", "SymbolicMode", "mode_for", "parse_chmod", "parse_chown"]


@dataclass(frozen=True)
class Owner:
    """The owner ``--chown`` names, as numbers inside the image."""

    uid: int
    gid: int


ROOT = Owner(0, 0)
"""Who owns what COPY writes without ``--chown``, and the folders an archive member implies."""


def _find_line(text: str, name: str) -> list[str] | None:
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split(":")
        if fields[0] == name:
            return fields
    return None


def _number(value: str) -> int | None:
    if value.isdigit() and value.isascii():
        number = int(value)
        if number < 2**32:
            return number
    return None


def parse_chown(value: str, passwd: str, group: str, where: str) -> Owner:
    """``--chown``'s owner: ``user``, ``user:group``, ``uid``, ``uid:gid``, ``:group`` and mixes,
    names looked up in the image's /etc/passwd and /etc/group text. A user alone keeps its
    primary group when named and gives gid = uid when numeric (BuildKit's readUser); a name the
    files lack is an error."""
    field = "--chown"
    if not value.strip():
        raise TaskFormatError(where, field, "an empty --chown names no owner")
    user, sep, grp = value.partition(":")
    uid = gid = 0
    number = _number(user)
    if number is not None:
        uid = gid = number
    elif user:
        fields = _find_line(passwd, user)
        if fields is None:
            raise TaskFormatError(where, field, f"no user {user!r} in the image's /etc/passwd")
        if len(fields) < 4 or _number(fields[2]) is None or _number(fields[3]) is None:
            raise TaskFormatError(where, field, f"the image's /etc/passwd line for {user!r} is malformed")
        uid, gid = int(fields[2]), int(fields[3])
    if sep and grp:
        number = _number(grp)
        if number is not None:
            gid = number
        else:
            fields = _find_line(group, grp)
            if fields is None:
                raise TaskFormatError(where, field, f"no group {grp!r} in the image's /etc/group")
            if len(fields) < 3 or _number(fields[2]) is None:
                raise TaskFormatError(where, field, f"the image's /etc/group line for {grp!r} is malformed")
            gid = int(fields[2])
    return Owner(uid, gid)


_SYMBOLIC = re.compile(r"[ugoa]*(?:[-+=](?:[rwxXst]*|[ugo]))+")


@dataclass(frozen=True)
class SymbolicMode:
    """A symbolic ``--chmod`` (``u+x``, ``go-w``, ``u=rwX,go=rX``, ``g=u``), applied to each
    copied file's own mode as chmod(1) does, with no umask."""

    text: str

    def __str__(self) -> str:
        return self.text

    def apply(self, mode: int, is_dir: bool) -> int:
        original = mode & 0o7777
        cur = original
        any_exec = bool(original & 0o111) or is_dir
        for clause in self.text.split(","):
            m = re.match(r"[ugoa]*", clause)
            assert m is not None
            who = m.group(0)
            rest = clause[len(who):]
            everyone = not who or "a" in who
            rwx = 0o777 if everyone else sum({"u": 0o700, "g": 0o070, "o": 0o007}[w] for w in set(who))
            ids = 0o6000 if everyone else (0o4000 if "u" in who else 0) | (0o2000 if "g" in who else 0)
            sticky_ok = everyone or "u" in who or "g" in who
            for op, perms in re.findall(r"([-+=])([ugo]|[rwxXst]*)", rest):
                if perms in ("u", "g", "o"):
                    shift = {"u": 6, "g": 3, "o": 0}[perms]
                    v = (cur >> shift) & 0o7
                    bits = (v << 6 | v << 3 | v) & rwx
                else:
                    bits = 0
                    for p in perms:
                        if p == "r":
                            bits |= 0o444 & rwx
                        elif p == "w":
                            bits |= 0o222 & rwx
                        elif p == "x" or (p == "X" and any_exec):
                            bits |= 0o111 & rwx
                        elif p == "s":
                            bits |= ids
                        elif p == "t" and sticky_ok:
                            bits |= 0o1000
                if op == "+":
                    cur |= bits
                elif op == "-":
                    cur &= ~bits
                else:
                    cur = (cur & ~(rwx | ids | (0o1000 if "t" in perms else 0))) | bits
        return cur & 0o7777


def parse_chmod(value: str, where: str) -> int | SymbolicMode:
    """``--chmod``: octal (``755``, ``0755``, up to ``7777``) as an int, or, since Dockerfile
    1.14 documents it, a symbolic mode as a SymbolicMode; anything else is an error."""
    text = value.strip()
    if re.fullmatch(r"[0-7]+", text):
        number = int(text, 8)
        if number <= 0o7777:
            return number
        raise TaskFormatError(where, "--chmod", f"{value!r} sets bits beyond 7777")
    if text and all(_SYMBOLIC.fullmatch(c) for c in text.split(",")):
        return SymbolicMode(text)
    raise TaskFormatError(where, "--chmod", f"{value!r} is neither an octal mode (0755) nor a symbolic one (u+x, go-w, u=rwX)")


def mode_for(src_mode: int, chmod: int | SymbolicMode | None, is_dir: bool) -> int:
    """The mode a copy of a file or folder with ``src_mode`` gets under ``--chmod`` (its own without)."""
    if chmod is None:
        return stat.S_IMODE(src_mode)
    if isinstance(chmod, SymbolicMode):
        return chmod.apply(stat.S_IMODE(src_mode), is_dir)
    return chmod & 0o7777
