"""The build cache: layers by digest, each written once, shared by every worker and safe under concurrent builds.

Layout of the store (``$TERMRL_BUILD_CACHE``, else ``$TERMRL_CACHE_DIR/build``, else
``$XDG_CACHE_HOME/pytest-termrl/build``)::

    layers/<key>/tree         the layer: what one step created, changed or deleted (overlay whiteouts and
                              opaque marks kept), owners in the sandboxes' shifted id range
    layers/<key>/layer.json   the step that made it (file, line, instruction), its parent, time, size
    images/<key>.json         a built image (its layers, ENV, USER, WORKDIR, ...), by its top layer's key
    logs/<key>.log            the last build log of that image
    locks/                    one lock file per key being built; ``use.lock`` is held shared while a run uses layers
    tmp/                      layers being written; moved into ``layers/`` whole, only when their step succeeded

A key is computed before its step runs (:func:`layer_key`), so a cached layer is found
without running anything; two builds of one key wait for each other (:meth:`LayerStore.building`)
and the second finds the first's layer. ``prune`` waits for no run: it refuses while any
holds ``use.lock``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import secrets
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from ...errors import SandboxError
from ..hostfs import pid_alive


def default_store_root() -> Path:
    explicit = os.environ.get("TERMRL_BUILD_CACHE")
    if explicit:
        return Path(explicit)
    cache_dir = os.environ.get("TERMRL_CACHE_DIR")
    if cache_dir:
        return Path(cache_dir) / "build"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-termrl" / "build"


def layer_key(parent: str, *parts: object) -> str:
    """The digest of a layer: its parent's key and what its step is (instruction, environment, files read)."""
    payload = json.dumps([parent, *parts], sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass(frozen=True)
class LayerInfo:
    """What ``layers/<key>/layer.json`` says of a layer."""

    key: str
    parent: str
    where: str
    """The Dockerfile and line of the step that made it."""
    step: str
    """The instruction, shortened."""
    seconds: float
    bytes: int
    created: float
    standins: tuple[str, ...] = ()
    """What the offline stand-ins did while the step ran (substitutions, installs met), replayed on every cache hit."""


class LayerStore:
    """A folder of layers and images; every method is safe for several processes at once."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_store_root()
        for name in ("layers", "images", "logs", "locks", "tmp"):
            (self.root / name).mkdir(parents=True, exist_ok=True)
        # Layers hold files owned by the sandboxes' id range (setuid ones too): no other host user reaches them here;
        # the sandboxes reach them through a read-only, nosuid bind (MachineLowers.reach).
        os.chmod(self.root, 0o700)
        os.chmod(self.root / "layers", 0o755)
        self._use_fd: int | None = None

    @property
    def layers(self) -> Path:
        return self.root / "layers"

    def tree(self, key: str) -> Path:
        return self.layers / key / "tree"

    def has(self, key: str) -> bool:
        return (self.layers / key / "layer.json").is_file()

    @contextmanager
    def building(self, key: str) -> Iterator[bool]:
        """Hold the key's lock; yields True when the layer must still be made (False: another build made it meanwhile)."""
        fd = os.open(self.root / "locks" / f"{key}.lock", os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield not self.has(key)
        finally:
            os.close(fd)

    def remove_stale_scratch(self) -> list[str]:
        """Remove what killed builds left in ``tmp/`` (layers never committed: their folders name a dead process)."""
        removed = []
        for path in (self.root / "tmp").iterdir():
            pid = path.name.split("-", 1)[0]
            if pid.isdigit() and not pid_alive(int(pid)):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path.name)
        return removed

    def scratch(self) -> Path:
        """A new folder in ``tmp/`` on the store's filesystem, where a layer is assembled before :meth:`commit`."""
        path = self.root / "tmp" / f"{os.getpid()}-{secrets.token_hex(4)}"
        path.mkdir(mode=0o755)
        return path

    def commit(self, key: str, scratch: Path, info: LayerInfo) -> Path:
        """Move an assembled layer (``scratch/tree``) into place under its key; the caller holds :meth:`building`."""
        (scratch / "layer.json").write_text(json.dumps(asdict(info), indent=1))
        os.chmod(scratch, 0o755)
        target = self.layers / key
        if target.exists():  # a layer.json-less leftover of a killed commit: never a good layer
            shutil.rmtree(target)
        os.rename(scratch, target)
        return self.tree(key)

    def info(self, key: str) -> LayerInfo:
        data = json.loads((self.layers / key / "layer.json").read_text())
        data["standins"] = tuple(data.get("standins", ()))
        return LayerInfo(**data)

    # -- images -------------------------------------------------------------------------
    def save_image(self, key: str, record: dict) -> None:
        path = self.root / "images" / f"{key}.json"
        tmp = path.with_suffix(f".{secrets.token_hex(4)}.tmp")
        tmp.write_text(json.dumps(record, indent=1))
        os.replace(tmp, path)

    def load_image(self, key: str) -> dict | None:
        try:
            return json.loads((self.root / "images" / f"{key}.json").read_text())
        except (OSError, ValueError):
            return None

    def log_path(self, key: str) -> Path:
        return self.root / "logs" / f"{key}.log"

    # -- use and pruning ----------------------------------------------------------------
    def hold(self) -> None:
        """Mark the store as in use by this process (a shared lock, dropped at :meth:`release` or exit)."""
        if self._use_fd is None:
            fd = os.open(self.root / "locks" / "use.lock", os.O_CREAT | os.O_RDWR, 0o644)
            fcntl.flock(fd, fcntl.LOCK_SH)
            self._use_fd = fd

    def release(self) -> None:
        if self._use_fd is not None:
            os.close(self._use_fd)
            self._use_fd = None

    def listing(self) -> list[LayerInfo]:
        found = []
        for folder in sorted(self.layers.iterdir()):
            if (folder / "layer.json").is_file():
                found.append(self.info(folder.name))
        return found

    def images(self) -> list[dict]:
        out = []
        for path in sorted((self.root / "images").glob("*.json")):
            try:
                out.append(json.loads(path.read_text()))
            except (OSError, ValueError):
                continue
        return out

    def prune(self, older_than_s: float = 0.0) -> tuple[int, int]:
        """Remove layers (and the images over them) last made more than ``older_than_s`` ago, and leftovers; (layers, bytes)."""
        fd = os.open(self.root / "locks" / "use.lock", os.O_CREAT | os.O_RDWR, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise SandboxError(f"the build cache {self.root} is in use by a running build or test run; prune it afterwards") from None
            now, removed, freed = time.time(), 0, 0
            gone: set[str] = set()
            for folder in sorted(self.layers.iterdir()):
                meta = folder / "layer.json"
                if meta.is_file() and now - self.info(folder.name).created < older_than_s:
                    continue
                freed += self.info(folder.name).bytes if meta.is_file() else 0
                shutil.rmtree(folder, ignore_errors=True)
                gone.add(folder.name)
                removed += 1
            for path in (self.root / "images").glob("*.json"):
                record = self.load_image(path.stem)
                if record is None or any(layer in gone for layer in record.get("layers", [])):
                    path.unlink(missing_ok=True)
                    (self.root / "logs" / f"{path.stem}.log").unlink(missing_ok=True)
            for leftover in (self.root / "tmp").iterdir():
                shutil.rmtree(leftover, ignore_errors=True)
            return removed, freed
        finally:
            os.close(fd)


def tree_bytes(root: Path) -> int:
    total = 0
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                continue
    return total
