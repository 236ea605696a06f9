"""The substitutions' table: toolchain installers of Dockerfiles met from what the host already has.

Each row is run as the daemonless builder runs a RUN step: ``sh -c`` (Debian's dash) with the
agent's own shims (standin_shims's text) first on PATH, HOME in tmp_path and
``tools.OFFLINE_PIP_ENV`` in the environment, or the stand-in called directly as
``python -I tools.py --sandbox=agent --shims=DIR --log=FILE TOOL ...``. The trees they leave are
checked by running what is in them (``go version``, ``cargo --version``, ``node --version``).
Each row's absent case points ``TERMRL_STANDIN_ROOT`` at a folder that does not exist (or at
a partial tree), so its host condition fails and the one line names the Debian package.
Present cases need the host's toolchain: where the host lacks it they skip, saying which, and fail in CI.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import require_service

from pytest_termrl.sandbox import standin_shims
from pytest_termrl.standins import substitution_table
from pytest_termrl.standins.inside import tools

TOOLS_PY = Path(tools.__file__)
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
NOWHERE = "/nonexistent-termrl-host"
PREFIX = "termrl offline stand-in: "
ROWS = ("uv-installer", "get-pip", "go-tarball", "rustup", "nvm", "nodesource", "deadsnakes-ppa", "ubuntu-component",
        "python3.X", "python3.X-venv", "python3.X-dev", "python3.X-distutils")


def _version_of(command: list[str]) -> str | None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


HOST_GO = Path("/usr/lib/go/bin/go")
HOST_NODE = _version_of(["/usr/bin/node", "--version"])
HOST_NODE_MAJOR = HOST_NODE[1:].split(".")[0] if HOST_NODE else None
HOST_RUSTC = _version_of(["/usr/bin/rustc", "-vV"]) if Path("/usr/bin/cargo").exists() else None
HOST_PYTHON = next((f"3.{m}" for m in range(20, 5, -1) if Path(f"/usr/bin/python3.{m}").exists()), None)
ABSENT_PYTHON = next(f"3.{m}" for m in (9, 8, 7, 5, 4) if not Path(f"/usr/bin/python3.{m}").exists())

def _needs(problem: str | None):
    """A present case needs the host's toolchain: it skips on a developer's machine without it, and fails in CI."""
    def mark(function):
        @functools.wraps(function)
        def wrapped(*args, **kwargs):
            require_service(problem, "the host's toolchain")
            return function(*args, **kwargs)
        return wrapped
    return mark


needs_go = _needs(None if os.access(HOST_GO, os.X_OK) else "the host has no /usr/lib/go/bin/go (golang-go)")
needs_rust = _needs(None if HOST_RUSTC is not None else "the host has no /usr/bin/cargo and /usr/bin/rustc (cargo)")
needs_node = _needs(None if HOST_NODE is not None else "the host has no /usr/bin/node that runs (nodejs)")
needs_python = _needs(None if HOST_PYTHON is not None else "the host has no /usr/bin/python3.X")


class Step:
    """A RUN step's world: the agent's shims first on PATH, HOME, the stand-ins' log."""

    def __init__(self, tmp_path: Path):
        self.home = tmp_path
        self.log = tmp_path / "standins.log"
        self.shims = tmp_path / "shims"
        (self.shims / "bin").mkdir(parents=True)
        shutil.copy(TOOLS_PY, self.shims / "standins.py")
        for tool in tools.TOOLS:
            shim = self.shims / "bin" / tool
            shim.write_text(standin_shims._SHIM.format(tool=tool, shims=self.shims, bin=self.shims / "bin", log=self.log))
            shim.chmod(0o755)

    def env(self, root: str | None = None, **extra: str) -> dict[str, str]:
        env = {"PATH": f"{self.shims / 'bin'}:{SYSTEM_PATH}", "HOME": str(self.home), "LANG": "C.UTF-8", **tools.OFFLINE_PIP_ENV}
        if root is not None:
            env[tools.ROOT_VARIABLE] = root
        env.update(extra)
        return env

    def run(self, command: str, root: str | None = None, shell: str = "sh", **extra: str) -> subprocess.CompletedProcess:
        """``sh -c COMMAND`` as a RUN step runs it."""
        return subprocess.run([shell, "-c", command], cwd=self.home, env=self.env(root, **extra), capture_output=True,
                              text=True, timeout=180)

    def standin(self, tool: str, *args: str, root: str | None = None, **extra: str) -> subprocess.CompletedProcess:
        """The stand-in called directly, as the builder's shims call it (output as bytes: it may be a tarball)."""
        command = [sys.executable, "-I", str(TOOLS_PY), "--sandbox=agent", f"--shims={self.shims / 'bin'}", f"--log={self.log}",
                   tool, *args]
        return subprocess.run(command, cwd=self.home, env=self.env(root, **extra), capture_output=True, timeout=120)

    def lines(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture
def step(tmp_path: Path) -> Step:
    return Step(tmp_path)


def _one_line(stderr: str | bytes) -> str:
    """The stand-ins' own line in a failing step's error output (there must be exactly one)."""
    text = stderr.decode() if isinstance(stderr, bytes) else stderr
    ours = [line for line in text.splitlines() if line.startswith(PREFIX)]
    assert len(ours) == 1, text
    return ours[0]


# -- the table ---------------------------------------------------------------------------------------------
def test_the_table_has_one_row_per_shape_and_the_package_reads_it_back():
    assert tuple(row.name for row in tools.SUBSTITUTIONS) == ROWS
    for row in tools.SUBSTITUTIONS:
        re.compile(row.pattern)
        assert row.tool in ("curl/wget", "add-apt-repository", "apt-get") and row.host and row.package and callable(row.apply)
    assert substitution_table() == [(r.name, f"{r.tool}: {r.pattern}", r.host, r.package) for r in tools.SUBSTITUTIONS]
    assert tools.UV_INSTALLER.pattern.strip("^$") == tools.SUBSTITUTIONS[0].pattern


def _docstring_table() -> list[tuple[str, str, str, str]]:
    """The reST table of pytest_termrl/standins/__init__.py's docstring, continuation lines joined."""
    import pytest_termrl.standins as package

    doc = ast.get_docstring(ast.parse(Path(package.__file__).read_text()))
    lines = doc.splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("=====")]
    assert len(rules) == 3, rules
    starts = [m.start() for m in re.finditer(r"=+", lines[rules[0]])]
    ends = starts[1:] + [None]
    rows: list[list[str]] = []
    for line in lines[rules[1] + 1:rules[2]]:
        cells = [line[a:b].strip() for a, b in zip(starts, ends)]
        if cells[0]:
            rows.append(cells)
        else:
            rows[-1] = [f"{old} {new}".strip() for old, new in zip(rows[-1], cells)]
    return [tuple(cell.replace("``", "").replace("\\-", "-") for cell in row) for row in rows]  # type: ignore[misc]


def test_the_documented_table_is_the_one_the_stand_ins_apply():
    documented = _docstring_table()
    assert [row[0] for row in documented] == list(ROWS)
    for (name, _, host, package), (doc_name, _, doc_host, doc_package) in zip(substitution_table(), documented):
        assert (name, host, package) == (doc_name, doc_host, doc_package)


def test_the_new_tools_have_shims_in_the_agent_sandbox_and_the_verifier():
    assert {"wget", "add-apt-repository"} <= set(tools.TOOLS) and "update-alternatives" not in tools.TOOLS
    contents = standin_shims._contents()
    assert {f"bin/{tool}" for tool in tools.TOOLS} <= set(contents)
    assert "software-properties-common" in tools.APT_ALWAYS  # its add-apt-repository is a stand-in


@pytest.mark.parametrize("word, row", [
    ("https://astral.sh/uv/install.sh", "uv-installer"),
    ("https://bootstrap.pypa.io/get-pip.py", "get-pip"),
    ("https://bootstrap.pypa.io/pip/3.7/get-pip.py", "get-pip"),
    ("https://go.dev/dl/go1.21.5.linux-amd64.tar.gz", "go-tarball"),
    ("https://golang.org/dl/go1.21.5.linux-arm64.tar.gz", "go-tarball"),
    ("https://dl.google.com/go/go1.20.1.linux-amd64.tar.gz", "go-tarball"),
    ("https://storage.googleapis.com/golang/go1.12.7.linux-amd64.tar.gz", "go-tarball"),
    ("https://sh.rustup.rs", "rustup"),
    ("https://static.rust-lang.org/rustup/rustup-init.sh", "rustup"),
    ("https://static.rust-lang.org/rustup/dist/x86_64-unknown-linux-gnu/rustup-init", "rustup"),
    ("https://raw.githubusercontent.com/nvm-sh/nvm/v0.39.7/install.sh", "nvm"),
    ("https://raw.githubusercontent.com/creationix/nvm/v0.33.0/install.sh", "nvm"),
    ("https://deb.nodesource.com/setup_20.x", "nodesource"),
    ("https://deb.nodesource.com/setup_lts.x", "nodesource"),
    ("https://go.dev/dl/go1.21.5.src.tar.gz", None),
    ("https://deb.nodesource.com/gpgkey/nodesource-repo.gpg.key", None),
    ("https://example.com/sh.rustup.rs", None),
])
def test_a_url_is_met_by_its_row_alone(word, row):
    found = tools._row("curl/wget", word)[0]
    assert (found.name if found else None) == row


@pytest.mark.parametrize("word, row", [
    ("python3.11", "python3.X"), ("python3.12-minimal", "python3.X"), ("python3.11-venv", "python3.X-venv"),
    ("python3-venv", "python3.X-venv"), ("python3.11-dev", "python3.X-dev"), ("python3.10-distutils", "python3.X-distutils"),
    ("python3-pip", None), ("python3.11-full", None), ("python3", None),
])
def test_an_apt_package_is_met_by_its_row_alone(word, row):
    found = tools._row("apt-get", word)[0]
    assert (found.name if found else None) == row


# -- the Go tarball ----------------------------------------------------------------------------------------
GO_URL = "https://go.dev/dl/go1.21.5.linux-amd64.tar.gz"


def _check_go_tree(folder: Path) -> None:
    go = folder / "go" / "bin" / "go"
    assert os.readlink(go) == str(HOST_GO) and os.readlink(folder / "go" / "bin" / "gofmt") == "/usr/lib/go/bin/gofmt"
    said = subprocess.run([go, "version"], capture_output=True, text=True, timeout=60)
    assert said.returncode == 0 and said.stdout.startswith("go version go"), said.stderr
    version = Path("/usr/lib/go/VERSION").read_text().splitlines()[0]
    assert (folder / "go" / "VERSION").read_text() == version + "\n" and version in said.stdout
    assert (folder / "go" / "src").resolve() == Path("/usr/lib/go/src").resolve()  # GOROOT=/usr/local/go works too


@needs_go
def test_the_go_tarball_extracts_to_a_working_go(step):
    done = step.standin("curl", "-L", GO_URL, "-o", "go.tar.gz")
    assert done.returncode == 0, done.stderr
    (step.home / "local").mkdir()
    untar = subprocess.run(["tar", "-C", str(step.home / "local"), "-xzf", str(step.home / "go.tar.gz")], capture_output=True)
    assert untar.returncode == 0, untar.stderr
    _check_go_tree(step.home / "local")
    assert step.lines() == [f"substituted: go-tarball: curl {GO_URL} -> go.tar.gz: go1.21.5 asked, the host's "
                            f"{(step.home / 'local/go/VERSION').read_text().strip()} linked (go/bin/go -> {HOST_GO})"]


@needs_go
@pytest.mark.parametrize("command", [
    f"curl -L {GO_URL} | tar -C local -xz",
    f"curl -fsSL {GO_URL} | tar -xz -C local",
    f"wget -qO- {GO_URL} | tar -C local -xzf -",
    f"wget -q -O - {GO_URL} | tar -C local -xz",
    f"curl -OL {GO_URL} && tar -C local -xzf go1.21.5.linux-amd64.tar.gz && rm go1.21.5.linux-amd64.tar.gz",
    f"wget {GO_URL} && tar -C local -xzf go1.21.5.linux-amd64.tar.gz",
    f"wget -O go.tgz {GO_URL} && tar -C local -xzf go.tgz",
    f"wget --output-document=go.tgz {GO_URL} && tar -C local -xzf go.tgz",
    f"mkdir -p dl && curl -fSsl -o dl/go.tar.gz {GO_URL} && tar -C local -xzf dl/go.tar.gz",
])
def test_the_go_tarball_in_each_shape_of_a_run_step(step, command):
    (step.home / "local").mkdir()
    done = step.run(command)
    assert done.returncode == 0, done.stderr
    _check_go_tree(step.home / "local")
    assert len(step.lines()) == 1 and step.lines()[0].startswith("substituted: go-tarball: ")
    said = step.run("PATH=$PATH:$HOME/local/go/bin go env GOROOT")
    assert said.returncode == 0 and Path(said.stdout.strip()).resolve() == Path("/usr/lib/go").resolve()


def test_without_go_on_the_host_the_fetch_fails_naming_golang_go(step):
    done = step.standin("curl", "-L", GO_URL, "-o", "go.tar.gz", root=NOWHERE)
    assert done.returncode == 1 and not (step.home / "go.tar.gz").exists()
    assert _one_line(done.stderr) == (f"{PREFIX}curl: go-tarball: the host has no {NOWHERE}/usr/lib/go/bin/go (go1.21.5 asked), "
                                      "and there is no network to fetch it: install the Debian package golang-go on the host")
    assert step.lines() == [_one_line(done.stderr)[len(PREFIX):].replace("curl: ", "curl: refused: ", 1)]
    (step.home / "local").mkdir()
    piped = step.run(f"curl -L {GO_URL} | tar -C local -xz", root=NOWHERE)
    assert piped.returncode != 0 and "install the Debian package golang-go on the host" in piped.stderr


# -- rustup ------------------------------------------------------------------------------------------------
RUSTUP = "curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y"


@needs_rust
def test_rustup_links_the_hosts_cargo_into_cargo_home(step):
    (step.home / ".bashrc").write_text("# root's\n")
    done = step.run(RUSTUP)
    assert done.returncode == 0, done.stderr
    cargo_bin = step.home / ".cargo" / "bin"
    assert os.readlink(cargo_bin / "cargo") == "/usr/bin/cargo" and os.readlink(cargo_bin / "rustc") == "/usr/bin/rustc"
    said = subprocess.run([cargo_bin / "cargo", "--version"], capture_output=True, text=True, timeout=60)
    assert said.returncode == 0 and said.stdout.startswith("cargo "), said.stderr
    used = step.run('. "$HOME/.cargo/env" && command -v cargo && rustc --version && rustup --version')
    assert used.returncode == 0, used.stderr
    assert used.stdout.splitlines()[0] == str(cargo_bin / "cargo") and used.stdout.splitlines()[1].startswith("rustc ")
    env_line = f'. "{step.home}/.cargo/env"'
    assert env_line in (step.home / ".profile").read_text() and env_line in (step.home / ".bashrc").read_text()
    assert step.lines()[0].startswith("substituted: rustup: curl https://sh.rustup.rs: a rustup-init linking the host's rustc")


@needs_rust
def test_rustup_honours_cargo_home_rustup_home_and_the_docker_shapes(step):
    cargo_home, rustup_home = step.home / "usr-local-cargo", step.home / "usr-local-rustup"
    release = re.search(r"^release: (\S+)", HOST_RUSTC, re.M).group(1)
    done = step.run("curl -sSf https://sh.rustup.rs -o rustup.sh && chmod +x rustup.sh && ./rustup.sh -y --no-modify-path "
                    f"--default-toolchain {release} --profile minimal && rm rustup.sh",
                    CARGO_HOME=str(cargo_home), RUSTUP_HOME=str(rustup_home))
    assert done.returncode == 0, done.stderr
    assert (cargo_home / "bin" / "cargo").exists() and rustup_home.is_dir() and not (step.home / ".profile").exists()
    (step.home / "proj" / "src").mkdir(parents=True)
    (step.home / "proj" / "Cargo.toml").write_text('[package]\nname = "proj"\nversion = "0.1.0"\nedition = "2018"\n')
    (step.home / "proj" / "src" / "main.rs").write_text('fn main() { println!("built offline"); }\n')
    built = step.run(f"PATH={cargo_home}/bin:$PATH; cd proj && cargo build -q --offline && ./target/debug/proj",
                     CARGO_HOME=str(cargo_home))
    assert built.returncode == 0 and built.stdout == "built offline\n", built.stderr


@needs_rust
def test_rustup_without_y_and_no_terminal_fails_as_rustup_does(step):
    done = step.run("curl -sSf https://sh.rustup.rs | sh")
    assert done.returncode == 1
    assert _one_line(done.stderr) == f"{PREFIX}rustup: rustup-init: Unable to run interactively. Run with -y to accept defaults"


@needs_rust
def test_the_rustup_it_leaves_does_what_the_host_has_and_names_the_rest(step):
    assert step.run(RUSTUP).returncode == 0
    target = re.search(r"^host: (\S+)", HOST_RUSTC, re.M).group(1)
    release = re.search(r"^release: (\S+)", HOST_RUSTC, re.M).group(1)
    rustup = f'"$HOME/.cargo/bin/rustup"'
    for ok in ("default stable", f"toolchain install {release} --profile minimal", "component add rust-std",
               f"target add {target}", "update", "show", "toolchain list"):
        done = step.run(f"{rustup} {ok}")
        assert done.returncode == 0, (ok, done.stderr)
    done = step.run(f"{rustup} default nightly")
    assert done.returncode == 1 and _one_line(done.stderr) == (
        f"{PREFIX}rustup: the Rust toolchain 'nightly' is not here (the host has rustc {release}), and there is no network to fetch "
        "it: install the Debian packages rustc and cargo of that version on the host")
    if not Path("/usr/lib/rustlib/wasm32-unknown-unknown").exists():
        done = step.run(f"{rustup} target add wasm32-unknown-unknown")
        assert done.returncode == 1 and "install the Debian package libstd-rust-dev-wasm32 on the host" in _one_line(done.stderr)
    if not Path("/usr/bin/rustfmt").exists():
        done = step.run(f"{rustup} component add rustfmt")
        assert done.returncode == 1 and _one_line(done.stderr).endswith("install the Debian package rustfmt on the host")
    done = step.run(f"{rustup} self uninstall -y")
    assert done.returncode == 1 and "'rustup self uninstall' is not something the offline stand-in does" in done.stderr
    assert "rustup: refused: the Rust toolchain 'nightly' is not here" in "\n".join(step.lines())


def test_without_cargo_on_the_host_rustup_fails_naming_cargo(step):
    done = step.run(RUSTUP, root=NOWHERE)
    assert done.returncode == 1 and not (step.home / ".cargo").exists()
    assert _one_line(done.stderr) == (f"{PREFIX}rustup: the host has no {NOWHERE}/usr/bin/cargo, and there is no network to "
                                      "fetch it: install the Debian package cargo on the host")
    assert step.lines() == [f"curl: refused: rustup: https://sh.rustup.rs: the host has no {NOWHERE}/usr/bin/cargo "
                            "(the script it gets fails saying so)"]


# -- nvm ---------------------------------------------------------------------------------------------------
NVM = "curl -o- https://raw.githubusercontent.com/nvm-sh/nvm/v0.39.7/install.sh | bash"


@needs_node
@pytest.mark.parametrize("nvm_dir", [None, "usr-local-nvm"])
def test_nvm_installs_and_uses_the_hosts_node(step, nvm_dir):
    extra = {"NVM_DIR": str(step.home / nvm_dir)} if nvm_dir else {}
    where = step.home / (nvm_dir or ".nvm")
    (step.home / ".bashrc").write_text("# root's\n")
    done = step.run(NVM, **extra)
    assert done.returncode == 0, done.stderr
    m = HOST_NODE_MAJOR
    done = step.run(f'. "{where}/nvm.sh" && nvm install {m} && nvm use {m} && nvm alias default {m} && nvm current && '
                    f"nvm which {m} && node --version && npm --version && command -v node", **extra)
    assert done.returncode == 0, done.stderr
    bin_dir = where / "versions" / "node" / HOST_NODE / "bin"
    out = done.stdout.splitlines()
    assert out[-5:-3] == [HOST_NODE, str(bin_dir / "node")] and out[-3] == HOST_NODE and out[-1] == str(bin_dir / "node")
    assert {p.name: os.readlink(p) for p in bin_dir.iterdir()}.items() >= {"node": "/usr/bin/node", "npm": "/usr/bin/npm",
                                                                          "npx": "/usr/bin/npx"}.items()
    assert (where / "alias" / "default").read_text() == f"{m}\n"
    # a later RUN step: sourcing nvm.sh puts the default's node first on PATH, as nvm does
    later = step.run(f'. "{where}/nvm.sh" && command -v node && nvm --version && nvm ls', **extra)
    assert later.returncode == 0 and later.stdout.splitlines()[:2] == [str(bin_dir / "node"), "0.39.7"], later.stderr
    assert f'export NVM_DIR="{where}"' in (step.home / ".bashrc").read_text()
    assert step.lines()[0].startswith("substituted: nvm: curl https://raw.githubusercontent.com/nvm-sh/nvm/v0.39.7/install.sh: ")
    assert step.lines()[1] == f"substituted: nvm: nvm install {m}: the host node {HOST_NODE}"


@needs_node
@pytest.mark.parametrize("version", ["node", "lts/*", "--lts", "stable", f"v{HOST_NODE_MAJOR}"])
def test_nvm_names_for_the_hosts_node_are_met(step, version):
    assert step.run(NVM).returncode == 0
    done = step.run(f'. "$HOME/.nvm/nvm.sh" && nvm install {version} && node --version')
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == HOST_NODE, done.stderr


@needs_node
def test_nvm_refuses_a_version_the_host_does_not_have_naming_it(step):
    assert step.run(NVM).returncode == 0
    other = str(int(HOST_NODE_MAJOR) - 2)
    for command in (f"nvm install {other}", f"nvm use {other}", f"nvm alias default {other}"):
        done = step.run(f'. "$HOME/.nvm/nvm.sh" && {command} && echo reached')
        assert done.returncode == 3 and "reached" not in done.stdout
        assert _one_line(done.stderr) == (f"{PREFIX}nvm: nodejs {other} is not here (the host has node {HOST_NODE}), and there is "
                                          f"no network to fetch it: install nodejs {other} on the host")
    assert not (step.home / ".nvm" / "versions").exists()
    done = step.run('. "$HOME/.nvm/nvm.sh" && nvm ls-remote')
    assert done.returncode == 3 and "'nvm ls-remote' is not something the offline stand-in does" in done.stderr


def test_without_node_on_the_host_nvm_fails_naming_nodejs(step):
    done = step.run(NVM, root=NOWHERE)
    assert done.returncode == 1 and not (step.home / ".nvm").exists()
    assert _one_line(done.stderr) == (f"{PREFIX}nvm: the host has no {NOWHERE}/usr/bin/node that runs, and there is no network "
                                      "to fetch it: install the Debian package nodejs on the host")


# -- NodeSource --------------------------------------------------------------------------------------------
@needs_node
def test_nodesource_of_the_hosts_major_then_apt_get_install_nodejs(step):
    done = step.run(f"curl -fsSL https://deb.nodesource.com/setup_{HOST_NODE_MAJOR}.x | bash - && apt-get install -y nodejs && "
                    "node --version")
    assert done.returncode == 0 and done.stdout.strip() == HOST_NODE, done.stderr
    assert step.lines()[0] == (f"substituted: nodesource: curl https://deb.nodesource.com/setup_{HOST_NODE_MAJOR}.x: nodejs "
                               f"{HOST_NODE_MAJOR} asked, the host's node {HOST_NODE}")
    done = step.run(f"wget -qO- https://deb.nodesource.com/setup_{HOST_NODE_MAJOR}.x | bash -")
    assert done.returncode == 0, done.stderr


@needs_node
def test_nodesource_of_another_major_fails_naming_it(step):
    other = str(int(HOST_NODE_MAJOR) + 2)
    done = step.run(f"curl -fsSL https://deb.nodesource.com/setup_{other}.x | bash - && apt-get install -y nodejs")
    assert done.returncode == 1
    assert _one_line(done.stderr) == (f"{PREFIX}nodesource: nodejs {other} (the host has {HOST_NODE_MAJOR}: node {HOST_NODE}) is "
                                      f"not here, and there is no network to fetch it: install the Debian package nodejs {other} "
                                      "on the host")


def test_without_node_on_the_host_nodesource_fails_naming_nodejs(step):
    done = step.run("curl -sL https://deb.nodesource.com/setup_20.x -o nodesource_setup.sh && bash nodesource_setup.sh", root=NOWHERE)
    assert done.returncode == 1
    assert _one_line(done.stderr).endswith("(nodejs 20 asked), and there is no network to fetch it: install the Debian package "
                                           "nodejs on the host")


# -- get-pip.py --------------------------------------------------------------------------------------------
def _python_with_pip() -> str | None:
    for python in ("/usr/bin/python3", sys.executable):
        if subprocess.run([python, "-c", "import pip"], capture_output=True).returncode == 0:
            return python
    return None


def test_get_pip_succeeds_for_a_python_that_has_pip(step):
    python = _python_with_pip()
    if python is None:
        require_service("no python here has pip (python3-pip)", "get-pip's host side")
    done = step.run(f"curl -sS https://bootstrap.pypa.io/get-pip.py | {python}")
    assert done.returncode == 0 and done.stderr.startswith(f"{PREFIX}get-pip: pip "), done.stderr
    assert step.lines() == ["substituted: get-pip: curl https://bootstrap.pypa.io/get-pip.py: a get-pip.py that checks the "
                            "python running it has pip"]


def test_get_pip_fails_for_a_python_without_pip_naming_python3_pip(step):
    made = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(step.home / "bare")], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    done = step.run("wget -q https://bootstrap.pypa.io/get-pip.py && bare/bin/python get-pip.py")
    assert done.returncode == 1
    assert _one_line(done.stderr) == (f"{PREFIX}get-pip: {step.home}/bare/bin/python has no pip, and there is no network to "
                                      "fetch it: install the Debian package python3-pip on the host")
    assert step.lines()[-1].startswith("get-pip: refused: ")


# -- the deadsnakes PPA and python3.X ----------------------------------------------------------------------
def _deadsnakes(version: str) -> str:
    return ("apt-get update && apt-get install -y software-properties-common cmake && add-apt-repository -y ppa:deadsnakes/ppa && "
            f"apt-get update && apt-get install -y python{version} python{version}-venv python{version}-dev "
            f"python{version}-distutils python3-pip")


@needs_python
def test_the_deadsnakes_flow_is_met_by_the_hosts_python(step):
    if not shutil.which("cmake", path=SYSTEM_PATH):
        require_service("the host has no cmake", "the deadsnakes flow's build")
    v = HOST_PYTHON
    done = step.run(f"{_deadsnakes(v)} && python{v} -m venv venv && "
                    "venv/bin/python -c 'import sys; print(sys.version_info[:2])'")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"({v.replace('.', ', ')})"
    assert step.lines() == [
        "apt-get update: nothing done",
        "apt-get install: cmake",
        "substituted: deadsnakes-ppa: add-apt-repository ppa:deadsnakes/ppa: nothing to add: apt-get meets its python3.X packages "
        "from the host",
        "apt-get update: nothing done",
        f"substituted: python3.X: apt-get install python{v} (the host's /usr/bin/python{v})",
        f"substituted: python3.X-venv: apt-get install python{v}-venv (the host's python{v} has venv and ensurepip)",
        f"substituted: python3.X-dev: apt-get install python{v}-dev (the host has /usr/include/python{v}/Python.h)",
        f"substituted: python3.X-distutils: apt-get install python{v}-distutils (the host's python{v} has distutils or setuptools)",
        "apt-get install: python3-pip",
    ]


def test_the_deadsnakes_flow_for_a_python_the_host_lacks_fails_naming_it(step):
    v = ABSENT_PYTHON
    done = step.run(_deadsnakes(v).replace(" cmake", ""))
    assert done.returncode == 1
    said = done.stderr.splitlines()  # the steps before it say one line each what they met; the failure is one line
    assert [line for line in said if "no network" in line] == said[-1:] == [
        f"{PREFIX}apt-get: python3.X: the host has no /usr/bin/python{v}, and there is no network to fetch it: install the Debian "
        f"package python{v} on the host"]


@needs_python
def test_each_python_companion_names_its_own_package_when_the_host_lacks_it(step, tmp_path):
    """A partial host tree under TERMRL_STANDIN_ROOT: the interpreter is there, its headers are not."""
    v = HOST_PYTHON
    root = tmp_path / "host"
    (root / "usr" / "bin").mkdir(parents=True)
    (root / "usr" / "bin" / f"python{v}").symlink_to(f"/usr/bin/python{v}")
    done = step.standin("apt-get", "install", "-y", f"python{v}", f"python{v}-venv", root=str(root))
    assert done.returncode == 0, done.stderr
    done = step.standin("apt-get", "install", "-y", f"python{v}-dev", root=str(root))
    assert done.returncode == 1 and _one_line(done.stderr) == (
        f"{PREFIX}apt-get: python3.X-dev: the host has no {root}/usr/include/python{v}/Python.h, and there is no network to "
        f"fetch it: install the Debian package python{v}-dev on the host")
    done = step.standin("apt-get", "install", "-y", f"python{v}-venv", root=NOWHERE)
    assert done.returncode == 1 and _one_line(done.stderr).endswith(f"install the Debian package python{v}-venv on the host")
    done = step.standin("apt-get", "install", "-y", "python3-distutils", root=NOWHERE)
    assert done.returncode == 1 and _one_line(done.stderr).endswith("install the Debian package python3 on the host")


def test_add_apt_repository_accepts_what_the_table_knows_and_names_the_rest(step):
    for args in (["-y", "ppa:deadsnakes/ppa"], ["ppa:deadsnakes/ppa", "-uy"], ["-P", "deadsnakes/ppa"], ["universe"]):
        done = step.standin("add-apt-repository", *args)
        assert done.returncode == 0, (args, done.stderr)
    done = step.standin("add-apt-repository", "-y", "ppa:ondrej/php")
    assert done.returncode == 1 and _one_line(done.stderr) == (
        f"{PREFIX}add-apt-repository: the repository 'ppa:ondrej/php' cannot be reached (there is no network), and the offline "
        "stand-in knows only ppa:deadsnakes/ppa, main, universe, multiverse, restricted: install what you need from it on the host")
    assert [line.split(":")[1].strip() for line in step.lines()] == ["deadsnakes-ppa", "deadsnakes-ppa", "deadsnakes-ppa",
                                                                      "ubuntu-component", "refused"]


@needs_python
def test_update_alternatives_needs_no_stand_in(step, tmp_path):
    """The host's update-alternatives, run as a RUN step's root over the layer, makes python3 the asked python itself."""
    tool = shutil.which("update-alternatives", path=SYSTEM_PATH)
    if tool is None:
        require_service("the host has no update-alternatives (dpkg)", "update-alternatives")
    root = tmp_path / "layer"
    for folder in ("usr/bin", "etc/alternatives", "var/lib/dpkg/alternatives"):
        (root / folder).mkdir(parents=True)
    (root / "usr" / "bin" / f"python{HOST_PYTHON}").symlink_to(f"/usr/bin/python{HOST_PYTHON}")
    (root / "usr" / "bin" / "python3").symlink_to(f"python{HOST_PYTHON}")
    done = step.run(f"update-alternatives --root {root} --install /usr/bin/python3 python3 /usr/bin/python{HOST_PYTHON} 1")
    assert done.returncode == 0, done.stderr
    assert os.readlink(root / "usr" / "bin" / "python3") == "/etc/alternatives/python3"
    assert os.readlink(root / "etc" / "alternatives" / "python3") == f"/usr/bin/python{HOST_PYTHON}"


# -- uv's installer, a row like the others ----------------------------------------------------------------
def test_uvs_installer_is_a_row_of_the_table(step):
    done = step.run("curl -LsSf https://astral.sh/uv/install.sh | sh && . $HOME/.local/bin/env && command -v uv")
    assert done.returncode == 0 and done.stdout.strip() == str(step.shims / "bin" / "uv"), done.stderr
    assert step.lines() == ["substituted: uv-installer: curl https://astral.sh/uv/install.sh: uv's installer: the uv stand-in is "
                            "already on PATH"]


# -- a real pip in a venv, offline -------------------------------------------------------------------------
ABSENT_PACKAGE = "termrl-definitely-absent-package"


def test_a_venvs_own_pip_fails_at_once_naming_what_is_not_there(step):
    made = step.run(f"{sys.executable} -m venv venv")
    assert made.returncode == 0, made.stderr
    started = time.monotonic()
    done = step.run(f"venv/bin/pip install {ABSENT_PACKAGE}", PIP_CONFIG_FILE=os.devnull)
    assert time.monotonic() - started < 30
    assert done.returncode == 1 and f"No matching distribution found for {ABSENT_PACKAGE}" in done.stderr, done.stderr
    done = step.run("venv/bin/pip install --upgrade pip && venv/bin/python -m pip install -q pip", PIP_CONFIG_FILE=os.devnull)
    assert done.returncode == 0 and "Requirement already satisfied: pip" in done.stdout, done.stderr


def _system_package() -> tuple[str, str] | None:
    """(python, a distribution its own site-packages has that a bare venv does not), from the host's python3."""
    for python in ("/usr/bin/python3", sys.executable):
        for name in ("six", "pyparsing", "distro", "packaging", "pluggy"):
            code = f"from importlib import metadata; metadata.version({name!r})"
            if Path(python).exists() and subprocess.run([python, "-I", "-c", code], capture_output=True).returncode == 0:
                return python, name
    return None


def test_a_venv_over_the_hosts_site_packages_is_already_satisfied(step):
    found = _system_package()
    if found is None:
        require_service("the host's python3 has none of six, pyparsing, distro, packaging, pluggy", "a system site package")
    python, name = found
    made = subprocess.run([python, "-m", "venv", "--system-site-packages", str(step.home / "venv")], capture_output=True, text=True)
    if made.returncode != 0:
        require_service(f"{python} cannot make a venv here: {made.stderr.strip()[-200:]}", "a venv over the host's site-packages")
    done = step.run(f"venv/bin/pip install {name}", PIP_CONFIG_FILE=os.devnull)
    assert done.returncode == 0 and f"Requirement already satisfied: {name}" in done.stdout, done.stderr


def test_the_pip_stand_in_asks_the_interpreter_first_on_path(step):
    """The shim runs the stand-in with the python3 PATH gives: a venv's, when the venv's bin comes next."""
    found = _system_package()
    if found is None:
        require_service("the host's python3 has none of six, pyparsing, distro, packaging, pluggy", "a system site package")
    python, name = found
    for venv, options in (("with-site", ["--system-site-packages"]), ("bare", [])):
        made = subprocess.run([python, "-m", "venv", "--without-pip", *options, str(step.home / venv)], capture_output=True, text=True)
        if made.returncode != 0:
            require_service(f"{python} cannot make a venv here: {made.stderr.strip()[-200:]}", "a venv over the host's site-packages")
    path = f"{step.shims / 'bin'}:{step.home}/%s/bin:{SYSTEM_PATH}"
    done = step.run(f"pip install {name}", PATH=path % "with-site")
    assert done.returncode == 0 and done.stderr.startswith(f"{PREFIX}pip: already present, nothing fetched: {name} "), done.stderr
    done = step.run(f"pip install {name}", PATH=path % "bare")
    assert done.returncode == 1 and _one_line(done.stderr) == (
        f"{PREFIX}pip: the package {name!r} is not installed here and there is no network to fetch it")


def test_the_offline_pip_environment_is_what_the_builder_documents():
    assert tools.OFFLINE_PIP_ENV == {
        "PIP_NO_INDEX": "1", "PIP_RETRIES": "0", "PIP_DEFAULT_TIMEOUT": "5", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INPUT": "1", "PIP_NO_BUILD_ISOLATION": "0", "PIP_BREAK_SYSTEM_PACKAGES": "1",
    }
    source = TOOLS_PY.read_text()
    documented = source[source.index("OFFLINE_PIP_ENV = {"):source.index("class Substitution")]
    for key, value in tools.OFFLINE_PIP_ENV.items():
        assert f"``{key}={value}``" in documented
