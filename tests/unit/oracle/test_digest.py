"""A file's digest costs what it holds: holes are skipped, yet the digest is of the bytes, however they are stored."""

from __future__ import annotations

import hashlib
import os
import time

from pytest_termrl.oracle.digest import BLOCK, BLOCKED_ABOVE, digest_fd
from pytest_termrl.oracle.manifest import take_manifest


def _digest(path) -> tuple[str, int]:
    fd = os.open(path, os.O_RDONLY)
    try:
        return digest_fd(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)


def test_a_small_file_keeps_the_plain_sha256_of_its_bytes(tmp_path):
    path = tmp_path / "small"
    path.write_bytes(b"hello\n" * 1000)
    assert _digest(path) == (hashlib.sha256(b"hello\n" * 1000).hexdigest(), 6000)


def test_a_sparse_file_and_the_same_bytes_written_out_have_one_digest(tmp_path):
    size = BLOCKED_ABOVE + 3 * BLOCK + 12345  # a tail block shorter than a block
    sparse, dense = tmp_path / "sparse", tmp_path / "dense"
    with open(sparse, "wb") as handle:
        handle.truncate(size)
        handle.seek(5 * BLOCK + 100)
        handle.write(b"data in the middle")
        handle.seek(size - 10)
        handle.write(b"tail bytes")
    content = bytearray(size)
    content[5 * BLOCK + 100:5 * BLOCK + 118] = b"data in the middle"
    content[size - 10:] = b"tail bytes"
    dense.write_bytes(bytes(content))
    assert os.stat(sparse).st_blocks * 512 < 4 * BLOCK < os.stat(dense).st_blocks * 512, "one is sparse, one is not"
    got = _digest(sparse)
    assert got == _digest(dense) and got[0].startswith("blocks:") and got[1] == size


def test_any_changed_byte_or_length_changes_the_digest(tmp_path):
    size = BLOCKED_ABOVE + BLOCK
    path = tmp_path / "f"
    with open(path, "wb") as handle:
        handle.truncate(size)
    empty = _digest(path)[0]
    with open(path, "r+b") as handle:
        handle.seek(7 * BLOCK + 5)
        handle.write(b"\1")
    one = _digest(path)[0]
    with open(path, "r+b") as handle:
        handle.seek(7 * BLOCK + 5)
        handle.write(b"\0")
        handle.seek(8 * BLOCK + 5)
        handle.write(b"\1")  # the same byte one block later
    later = _digest(path)[0]
    with open(path, "r+b") as handle:
        handle.seek(8 * BLOCK + 5)
        handle.write(b"\0")
        handle.truncate(size + 1)
    longer = _digest(path)[0]
    assert len({empty, one, later, longer}) == 4


def test_thousands_of_long_empty_files_are_read_in_moments(tmp_path):
    """What ``for i in $(seq 2000); do truncate -s 255M f$i; done`` leaves: 500 GB long, nothing to read."""
    home = tmp_path / "home"
    home.mkdir()
    for i in range(2000):
        with open(home / f"f{i}", "wb") as handle:
            handle.truncate(255 << 20)
    start = time.perf_counter()
    manifest = take_manifest(home)
    seconds = time.perf_counter() - start
    digests = {e.sha256 for rel, e in manifest.entries.items() if rel.startswith("f")}
    assert len(digests) == 1 and next(iter(digests)).startswith("blocks:")
    assert seconds < 60, f"{seconds:.1f} s: holes were read"  # a plain sha256 reads 500 GB of zeros: hours
