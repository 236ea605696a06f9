"""How the record monitor's per-command cost grows with the lowers' size and with what changed.

For two lower trees (1,000 and 200,000 small files, in folders of 50) it mounts a real
overlay on each (``userxattr``, no redirects, no metacopy; where no overlay can be
mounted, the upper is changed by hand the way overlayfs would), changes a handful of
files through it, and times one :meth:`RecordMonitor.after_command` (median of
repeats, each after one more append). The ratio large/small is the point: a check
costs what changed, not what the lowers hold. Then 10,000 new files are written in
the large tree and it times the check that first sees them and a later check with
nothing new changed (after the files age past manifest.RACY_NS, so their digests are
reused), each per changed file.

    python benchmarks/bench_change_record.py                # 1,000 and 200,000 files
    python benchmarks/bench_change_record.py --large 50000 --repeat 9
"""

from __future__ import annotations

import argparse
import os
import shutil
import stat
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_termrl.oracle import manifest as manifest_mod
from pytest_termrl.oracle.policy import Permission, Policy
from pytest_termrl.oracle.record import ChangeRecord, Slot
from pytest_termrl.oracle.record_monitor import RecordMonitor
from pytest_termrl.sandbox.base import CommandResult

OK = CommandResult("", 0)
MOUNT_OPTIONS = ("userxattr,redirect_dir=off,metacopy=off", "userxattr,redirect_dir=nofollow,metacopy=off")


def build_lower(root: Path, files: int, per_dir: int) -> Path:
    """``files`` small files, ``per_dir`` to a folder, 20 folders to a parent folder."""
    for i in range(files):
        d, f = divmod(i, per_dir)
        folder = root / f"p{d // 20:04d}" / f"d{d:05d}"
        if f == 0:
            folder.mkdir(parents=True)
        (folder / f"f{f:03d}.txt").write_bytes(b"line %d of a small file\n" % i * 4)
    return root


class Overlay:
    """A lower tree with its upper; changed through a real overlay mount, or by hand where none mounts."""

    def __init__(self, top: Path, name: str, lower: Path) -> None:
        self.lower = lower
        self.upper = top / f"{name}-upper"
        self.work = top / f"{name}-work"
        self.merged = top / f"{name}-merged"
        for d in (self.upper, self.work, self.merged):
            d.mkdir()
        self.mounted = False
        self.real = False
        """Whether the changes went through a kernel overlay (kept after close)."""
        self.why_not = ""
        if os.geteuid() != 0 or shutil.which("mount") is None:
            self.why_not = "not root, or no mount(8)"
            return
        for options in MOUNT_OPTIONS:
            done = subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                                   f"lowerdir={lower},upperdir={self.upper},workdir={self.work},{options}",
                                   str(self.merged)], capture_output=True, text=True)
            if done.returncode == 0:
                self.mounted = self.real = True
                self.why_not = ""
                return
            self.why_not = done.stderr.strip()

    def record(self) -> ChangeRecord:
        return ChangeRecord((Slot("/", self.upper, (self.lower,)),))

    def _by_hand(self, rel: str) -> Path:
        """The upper's path for ``rel``, its folders copied up first."""
        parts = rel.split("/")
        for i in range(1, len(parts)):
            sub = "/".join(parts[:i])
            if not (self.upper / sub).exists():
                (self.upper / sub).mkdir()
                if (self.lower / sub).exists():
                    shutil.copystat(self.lower / sub, self.upper / sub)
        return self.upper / rel

    def append(self, rel: str, data: bytes) -> None:
        if self.mounted:
            with open(self.merged / rel, "ab") as f:
                f.write(data)
            return
        path = self._by_hand(rel)
        if not path.exists() and (self.lower / rel).exists():
            shutil.copy2(self.lower / rel, path)
        with open(path, "ab") as f:
            f.write(data)

    def write(self, rel: str, data: bytes) -> None:
        path = self.merged / rel if self.mounted else self._by_hand(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def unlink(self, rel: str) -> None:
        if self.mounted:
            (self.merged / rel).unlink()
        elif os.geteuid() == 0:
            os.mknod(self._by_hand(rel), stat.S_IFCHR, 0)
        else:
            self._by_hand(rel).write_bytes(b"")
            os.setxattr(self.upper / rel, "user.overlay.whiteout", b"")

    def close(self) -> None:
        if self.mounted:
            subprocess.run(["umount", str(self.merged)], check=True)
            self.mounted = False


def ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def measure(ov: Overlay, repeat: int) -> tuple[RecordMonitor, float]:
    """The median time of one check after a command that appended to one file (a handful changed in all)."""
    policy = Policy([Permission("/p0000", frozenset({"content_changed"}), prefix=True)])
    monitor = RecordMonitor.start(ov.record(), policy, [])
    ov.append("p0000/d00000/f000.txt", b"edited\n")
    ov.append("p0000/d00001/f001.txt", b"edited\n")
    ov.unlink("p0000/d00002/f002.txt")
    ov.write("p0000/d00003/new.txt", b"created\n")
    times = []
    for i in range(repeat):
        ov.append("p0000/d00004/f004.txt", b"x")
        t = time.perf_counter()
        monitor.after_command(i, "echo x >> f004.txt", OK)
        times.append(ms(t))
    assert [(c.path, c.kind) for c in monitor.tracker.collateral] == [("/p0000/d00002/f002.txt", "deleted")]
    return monitor, statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1_000, help="files in the small lower (default 1,000)")
    parser.add_argument("--large", type=int, default=200_000, help="files in the large lower (default 200,000)")
    parser.add_argument("--new", type=int, default=10_000, help="files written for the per-file cost (default 10,000)")
    parser.add_argument("--per-dir", type=int, default=50, help="files per folder (default 50)")
    parser.add_argument("--repeat", type=int, default=15, help="checks per tree (median shown)")
    parser.add_argument("--workdir", type=Path, default=None, help="where to build the trees (default: a temp dir)")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="termrl-bench-record-", dir=args.workdir))
    overlays: list[Overlay] = []
    try:
        t = time.perf_counter()
        small = Overlay(workdir, "small", build_lower(workdir / "small-lower", args.small, args.per_dir))
        large = Overlay(workdir, "large", build_lower(workdir / "large-lower", args.large, args.per_dir))
        overlays = [small, large]
        build_s = ms(t) / 1000
        # The lowers' files age past the racy window, as an image's files have long before an episode.
        time.sleep(manifest_mod.RACY_NS / 1e9 + 0.1)
        _, small_ms = measure(small, args.repeat)
        monitor, large_ms = measure(large, args.repeat)

        for i in range(args.new):
            large.write(f"out/n{i // 100:03d}/f{i % 100:02d}.txt", b"new file %d\n" % i)
        t = time.perf_counter()
        monitor.after_command(args.repeat, f"write {args.new} files", OK)
        first_ms = ms(t)
        time.sleep(manifest_mod.RACY_NS / 1e9 + 0.1)
        monitor.after_command(args.repeat + 1, "ls", OK)  # the first read that may keep their stat keys
        later = []
        for i in range(max(3, args.repeat // 3)):
            t = time.perf_counter()
            monitor.after_command(args.repeat + 2 + i, "ls", OK)
            later.append(ms(t))
        later_ms = statistics.median(later)
        changed = args.new + 5  # the new files, plus the handful of measure()
        t = time.perf_counter()
        monitor.finish()
        finish_ms = ms(t)
        assert len(monitor.final_manifest().entries) >= args.new
    finally:
        for ov in overlays:
            ov.close()
        shutil.rmtree(workdir, ignore_errors=True)

    how = ("a real overlay (userxattr)" if small.real
           else f"hand-built uppers (no overlay mounted: {small.why_not})")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus; {how}; trees built in {build_s:.1f} s; "
          f"check = one RecordMonitor.after_command, median of {args.repeat}")
    header = f"{'lower files':>12} {'changed':>8} {'check ms':>9}"
    print(header)
    print("-" * len(header))
    print(f"{args.small:>12,} {5:>8} {small_ms:>9.3f}")
    print(f"{args.large:>12,} {5:>8} {large_ms:>9.3f}")
    print(f"large/small: {large_ms / small_ms:.2f}x for {args.large / args.small:,.0f}x the lower files")
    print(f"after writing {args.new:,} files ({changed:,} changed in all, {args.large:,} lower files):")
    print(f"  first check that sees them  {first_ms:9.1f} ms  {first_ms * 1000 / changed:7.1f} us per changed file")
    print(f"  later check, nothing new    {later_ms:9.1f} ms  {later_ms * 1000 / changed:7.1f} us per changed file"
          f"  (median of {len(later)})")
    print(f"  finish (final read, judge, manifests)  {finish_ms:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
