"""Archive creation with checksums: tar.gz / tar.xz / tar.bz2 / zip from a file list."""

from __future__ import annotations

import random

from ..common import INPUT_UNCHANGED_TEST, PROJECT_WORDS, TaskSpec, input_hashes, pick, test_module

FAMILY = "tarball"
CATEGORY = "archive"
FORMATS = ("tar.gz", "tar.xz", "zip", "tar.bz2")
ALGOS = {"sha256": 64, "md5": 32, "sha1": 40, "sha512": 128}
MAGIC = {"tar.gz": b"\x1f\x8b", "tar.xz": b"\xfd7zXZ\x00", "tar.bz2": b"BZh", "zip": b"PK\x03\x04"}
TAR_FLAG = {"tar.gz": "z", "tar.xz": "J", "tar.bz2": "j"}
TARFILE_MODE = {"tar.gz": "r:gz", "tar.xz": "r:xz", "tar.bz2": "r:bz2"}


def _project_files(rng: random.Random, proj: str) -> dict[str, str]:
    files = {
        "README.md": f"# {proj}\n\nA small tool. Version {rng.randint(1, 4)}.{rng.randint(0, 9)}.\n",
        "LICENSE": "MIT License\n\nCopyright (c) 2024\n",
        f"src/{proj}/__init__.py": f'__version__ = "{rng.randint(1, 4)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}"\n',
        f"src/{proj}/cli.py": "def main():\n    print('hello')\n",
        f"src/{proj}/util.py": f"def clamp(x, lo={rng.randint(0, 5)}, hi={rng.randint(10, 99)}):\n    return max(lo, min(hi, x))\n",
        "docs/usage.md": f"# Usage\n\nRun `{proj} --help`.\n",
        "docs/changelog.md": f"# Changelog\n\n- {rng.randint(1, 30)} fixes\n",
        "config/default.toml": f"[core]\nthreads = {rng.randint(1, 16)}\n",
        "tests/test_util.py": "def test_clamp():\n    assert True\n",
        "build/tmp.o": "not really an object file\n",
        ".env": f"TOKEN=dev-{rng.randint(1000, 9999)}\n",
        "scripts/release.sh": "#!/bin/sh\necho release\n",
    }
    return files


def generate(rng: random.Random, task_id: str, index: int) -> TaskSpec:
    fmt = FORMATS[index % len(FORMATS)]
    algo = pick(rng, list(ALGOS))
    proj = pick(rng, PROJECT_WORDS)
    version = f"{rng.randint(0, 3)}.{rng.randint(0, 12)}.{rng.randint(0, 9)}"
    base_parent = pick(rng, ["projects", "src", "work", "code"])
    base = f"{base_parent}/{proj}"
    pfiles = _project_files(rng, proj)
    candidates = [p for p in pfiles if not p.startswith(("build/", "tests/", ".env"))]
    chosen = sorted(rng.sample(candidates, rng.randint(5, min(8, len(candidates)))))
    if "README.md" not in chosen:
        chosen[0] = "README.md"
        chosen.sort()
    list_name = pick(rng, ["MANIFEST", "dist-files.txt", "RELEASE_FILES", "package.list"])
    manifest_rel = f"{base}/{list_name}"
    manifest_lines = [f"# files shipped in {proj} {version}", ""]
    order = list(chosen)
    rng.shuffle(order)
    for i, p in enumerate(order):
        manifest_lines.append(p)
        if i == 2:
            manifest_lines += ["", "# documentation and code"]
    files = {f"{base}/{p}": c for p, c in pfiles.items()}
    files[manifest_rel] = "\n".join(manifest_lines) + "\n"
    prefixed = rng.random() < 0.5
    prefix = f"{proj}-{version}"
    out_dir = pick(rng, ["dist", "releases", "artifacts", "backups/releases"])
    archive_name = f"{proj}-{version}.{fmt}"
    archive_rel = f"{out_dir}/{archive_name}"
    sum_rel = f"{archive_rel}.{algo}"
    members = {(f"{prefix}/{p}" if prefixed else p): pfiles[p] for p in chosen}

    kind = {"tar.gz": "a gzip-compressed tar archive", "tar.xz": "an xz-compressed tar archive",
            "tar.bz2": "a bzip2-compressed tar archive", "zip": "a zip archive"}[fmt]
    naming = (f"named `{prefix}/<path>` (every member under the top-level folder `{prefix}`, e.g. `{prefix}/README.md`)"
              if prefixed else "named exactly as the list writes them (e.g. `README.md`, relative, no leading `./`)")
    text = (f"`/home/user/{manifest_rel}` lists the files of the {proj} {version} release, one path per line, relative to "
            f"`/home/user/{base}`. Blank lines and lines starting with `#` are not paths.\n\n"
            f"1. Create `/home/user/{archive_rel}` (create `/home/user/{out_dir}` if needed), {kind} holding exactly the "
            f"listed files as regular-file members {naming}, with their current contents. No other files, and no "
            "directory entries.\n"
            f"2. Write `/home/user/{sum_rel}` with the {algo.upper()} checksum of the finished archive in the format of "
            f"`{algo}sum` run inside `/home/user/{out_dir}`: the lower-case hex digest, two spaces, `{archive_name}`, and a "
            f"newline, so that `cd /home/user/{out_dir} && {algo}sum -c {archive_name}.{algo}` succeeds.\n\n"
            f"Do not modify anything under `/home/user/{base}`.")
    strip = "grep -v -e '^#' -e '^[[:space:]]*$' " + list_name
    if fmt == "zip":
        py = ["import zipfile", f"paths = [l.strip() for l in open('/home/user/{manifest_rel}') if l.strip() and not l.startswith('#')]",
              f"with zipfile.ZipFile('/home/user/{archive_rel}', 'w', zipfile.ZIP_DEFLATED) as z:",
              "    for p in paths:",
              f"        z.write('/home/user/{base}/' + p, {repr(prefix + '/') + ' + p' if prefixed else 'p'})"]
        make = "python3 - <<'PY'\n" + "\n".join(py) + "\nPY\n"
    else:
        transform = f" --transform 's|^|{prefix}/|'" if prefixed else ""
        make = (f"( cd /home/user/{base} && {strip} | tar --no-recursion{transform} -c{TAR_FLAG[fmt]}f "
                f"/home/user/{archive_rel} -T - )\n")
    solution = (f"mkdir -p /home/user/{out_dir}\n" + make
                + f"( cd /home/user/{out_dir} && {algo}sum {archive_name} > {archive_name}.{algo} )\n")
    constants = [("ARCHIVE", f"/home/user/{archive_rel}"), ("SUMFILE", f"/home/user/{sum_rel}"), ("FORMAT", fmt),
                 ("MAGIC", MAGIC[fmt]), ("ALGO", algo), ("NAME", archive_name), ("MEMBERS", members),
                 ("INPUT_SHA256", input_hashes(files, [manifest_rel]))]
    if fmt == "zip":
        reader = '''
        def _members():
            path = Path(ARCHIVE)
            assert path.is_file(), f"{ARCHIVE} does not exist"
            with zipfile.ZipFile(path) as z:
                assert z.testzip() is None, "corrupt member"
                return [(i.filename, i.is_dir(), None if i.is_dir() else z.read(i)) for i in z.infolist()]
        '''
        imports = ["import zipfile"]
    else:
        reader = f'''
        def _members():
            path = Path(ARCHIVE)
            assert path.is_file(), f"{{ARCHIVE}} does not exist"
            with tarfile.open(path, "{TARFILE_MODE[fmt]}") as tar:
                return [(m.name, not m.isfile(), tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]
        '''
        imports = ["import tarfile"]
    body = '''
    def test_compression_format():
        path = Path(ARCHIVE)
        assert path.is_file(), f"{ARCHIVE} does not exist"
        assert path.read_bytes()[: len(MAGIC)] == MAGIC, f"{ARCHIVE} is not a {FORMAT} file"


    def test_member_names_exact():
        names = [name for name, _is_dir, _data in _members()]
        assert len(names) == len(set(names)), f"duplicate members: {names}"
        assert sorted(names) == sorted(MEMBERS), "members must be exactly the listed files, no directories"


    def test_member_contents():
        members = _members()
        assert members, "the archive is empty"
        for name, is_dir, data in members:
            assert not is_dir, f"{name} is not a regular file member"
            assert name in MEMBERS, f"unexpected member {name}"
            assert data.decode() == MEMBERS[name], f"content of {name} differs"


    def test_checksum_file_format():
        path = Path(SUMFILE)
        assert path.is_file(), f"{SUMFILE} does not exist"
        width = len(hashlib.new(ALGO).hexdigest())
        assert re.fullmatch("[0-9a-f]{%d}  %s\\n" % (width, re.escape(NAME)), path.read_text()), path.read_text()


    def test_checksum_matches_archive():
        assert Path(SUMFILE).is_file() and Path(ARCHIVE).is_file()
        assert Path(SUMFILE).read_text().split()[0] == hashlib.new(ALGO, Path(ARCHIVE).read_bytes()).hexdigest()
    '''
    tests = test_module(task_id, ["import hashlib", "import re", "from pathlib import Path", *imports], constants, reader,
                        body, INPUT_UNCHANGED_TEST)
    return TaskSpec(task_id=task_id, title=f"Package a release as {fmt} with a {algo} checksum", difficulty="medium",
                    category=CATEGORY, tags=["archive", fmt.replace(".", "-"), algo, "generated"], inputs=[manifest_rel],
                    requires=["bash", "tar", f"{algo}sum"] if fmt != "zip" else ["bash", "python3", f"{algo}sum"],
                    instruction=text, solution=solution, tests=tests, files=files)
