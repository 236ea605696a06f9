"""The episode log: one JSON line per finished episode, synced as it ends, read back one record per episode.

A crash or kill loses no finished episode; a write that fails (a full disk) raises and
leaves no torn line behind; reading a log for resume or for a report keeps the last record
of each episode key and counts what it dropped.
"""

from __future__ import annotations

import errno
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from .record import EndReason, EpisodeRecord, key_of

WORKER_CRASHED = EndReason.WORKER_CRASHED
"""The end reason of an episode whose worker process died while playing it (:attr:`EndReason.WORKER_CRASHED`)."""


class EpisodeLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._torn = False

    def rotate(self) -> Path | None:
        """Move an earlier run's log aside so this run starts a fresh file; return where it went."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return None
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self.path.stat().st_mtime))
        target = self.path.with_name(f"{self.path.stem}.{stamp}{self.path.suffix}")
        self.path.replace(target)
        return target

    def append(self, record: dict | EpisodeRecord) -> None:
        """Append one line and sync it; on an OSError (ENOSPC, EIO) the file is cut back to where it was, then it raises."""
        if isinstance(record, EpisodeRecord):
            record = record.to_dict()
        data = (json.dumps(record, sort_keys=True, ensure_ascii=True) + "\n").encode("ascii")
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
            self._torn = _ends_without_newline(self.path)  # a torn line left by a killed writer
        start = os.fstat(self._fd).st_size
        if self._torn:
            data = b"\n" + data
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
            os.fsync(self._fd)
        except OSError:
            try:
                os.ftruncate(self._fd, start)
            except OSError:
                pass
            raise
        self._torn = False

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _ends_without_newline(path: Path) -> bool:
    with open(path, "rb") as existing:
        if existing.seek(0, os.SEEK_END) == 0:
            return False
        existing.seek(-1, os.SEEK_END)
        return existing.read(1) != b"\n"


def read_episodes(path: Path) -> list[dict]:
    """Every complete record of a log, as written (duplicates too); a torn line (a killed writer) is ignored."""
    if not path.exists():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and "episode_id" in record:
            records.append(record)
    return records


def settled(record: dict) -> bool:
    """Whether a resume counts this episode as done: it has a record without a harness error.

    An episode whose worker crashed, whose sandbox or setup failed, whose model server or
    grader broke is the harness's failure, never the agent's: a resume plays it again, and
    its new record replaces the old one.
    """
    return not record.get("harness_error") and record.get("end_reason") != EndReason.WORKER_CRASHED


@dataclass
class LogContents:
    """A log read back one record per episode key: the last complete record of each, in first-seen order."""

    source: str
    records: list[dict]
    duplicates: int = 0
    """Records dropped that were finished episodes recorded again (two runs on one log)."""
    retried: int = 0
    """Harness-error records dropped because a later run played the episode again (what resume does)."""

    def warning(self) -> str | None:
        if not self.duplicates:
            return None
        return (f"{self.source}: dropped {self.duplicates} duplicate record(s) of finished episodes "
                f"(kept the last record of each episode key: {len(self.records)} episode(s))")


def latest_per_key(records: list[dict], source: str = "") -> LogContents:
    """One record per episode key, the last one; what was dropped, counted."""
    by_key: dict[tuple, dict] = {}
    duplicates = retried = 0
    for record in records:
        key = key_of(record)
        earlier = by_key.get(key)
        if earlier is not None:
            if settled(earlier):
                duplicates += 1
            else:
                retried += 1
        by_key[key] = record
    return LogContents(source, list(by_key.values()), duplicates, retried)


def read_log(path: Path) -> LogContents:
    """A log for resume or for a report: one record per episode key."""
    return latest_per_key(read_episodes(path), str(path))


def describe_os_error(exc: OSError) -> str:
    """'No space left on device (ENOSPC)': the reason of a failed write, for a message naming the path."""
    name = errno.errorcode.get(exc.errno or 0)
    reason = exc.strerror or str(exc)
    return f"{reason} ({name})" if name else reason
