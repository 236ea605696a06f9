"""The episode log: one JSON line per finished episode, flushed and synced as it ends.

A crash or kill loses no finished episode, and a resumed run skips what is recorded.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .record import EpisodeRecord, episode_key  # noqa: F401  (episode_key: the resume key of a line)



class EpisodeLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle = None

    def rotate(self) -> Path | None:
        """Move an earlier run's log aside so this run starts a fresh file; return where it went."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return None
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self.path.stat().st_mtime))
        target = self.path.with_name(f"{self.path.stem}.{stamp}{self.path.suffix}")
        self.path.replace(target)
        return target

    def append(self, record: dict | EpisodeRecord) -> None:
        if isinstance(record, EpisodeRecord):
            record = record.to_dict()
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = open(self.path, "a", encoding="utf-8")
            if self._handle.tell() > 0:
                with open(self.path, "rb") as existing:
                    existing.seek(-1, os.SEEK_END)
                    if existing.read(1) != b"\n":
                        self._handle.write("\n")  # end a torn line left by a killed writer
        self._handle.write(json.dumps(record, sort_keys=True, ensure_ascii=True) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def read_episodes(path: Path) -> list[dict]:
    """Every complete record of a log; a torn last line (a killed writer) is ignored."""
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


def read_records(path: Path) -> list[EpisodeRecord]:
    """The log's episodes as typed records (what the summary, resume and training read)."""
    return [EpisodeRecord.from_dict(r) for r in read_episodes(path)]
