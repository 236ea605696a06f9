"""Shared helpers for the plugin's own tests: small suites, sandboxes, the backends they run on.

The tests of a package are under unit/<package>/, pytester runs of the plugin under plugin/,
and those that need a Docker engine, a browser, a model server, ssh or a built wheel under
integration/. Suites for pytester runs are built from real tasks of task_suites/core (copied, with their
frozen contract lines) or from tiny native tasks written here and frozen with
``--termrl-freeze``. Sandboxes (``make_sandbox``) are real bubblewrap sandboxes in the default
workroot, except in the tests of the shipped conformance suite (pytest_termrl.sandbox.conformance,
collected by tests/unit/sandbox/test_isolation.py, test_shell.py, test_terminal_conformance.py and
test_exec_conformance.py and by tests/unit/verifier/test_verifier.py and test_verifier_hardening.py), which run for every backend: bwrap, docker on a local engine, docker
as on a remote one, and for the shell also docker with every transfer by the archive API (the whole-machine
ones only where a backend makes such sandboxes: EXEC_BACKENDS, WHOLE_MACHINE_BACKENDS).
"""

from __future__ import annotations

# Task folders used as data by the importer and audit tests: their own tests are never ours.
collect_ignore = ["data"]

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from pytest_termrl.sandbox.conformance.fixtures import make_sandbox  # noqa: F401  (fixture)
from pytest_termrl.sandbox.conformance.host import host_pids_appearing, host_pids_with, unique_sleep  # noqa: F401
from pytest_termrl.sandbox.conformance.scripts import dedent  # noqa: F401
from pytest_termrl.sandbox.conformance.tasks import solution_of  # noqa: F401

def pytest_configure(config: pytest.Config) -> None:
    """One build cache for the run, fresh, shared by its workers (they inherit the environment): the user's is left alone."""
    if "TERMRL_BUILD_CACHE" not in os.environ and not hasattr(config, "workerinput"):
        os.environ["TERMRL_BUILD_CACHE"] = config._termrl_build_cache = tempfile.mkdtemp(prefix="termrl-test-build-")  # type: ignore[attr-defined]


def pytest_unconfigure(config: pytest.Config) -> None:
    made = getattr(config, "_termrl_build_cache", None)
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)


TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
DATA = TESTS / "data"
CORE = REPO / "task_suites" / "core"
CORE_CONTRACTS = CORE / "contracts.jsonl"

# Three quick core tasks the noop agent fails and the oracle passes.
SMALL_TASKS = ("checksum_verify", "config_ini_update", "log_error_counts")


def load_tool(name: str):
    """A script of the repository's tools/ folder (README tooling, not part of the package), as a module."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"termrl_tool_{name}", REPO / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def core_task_ids(contracts: Path = CORE_CONTRACTS) -> list[str]:
    return sorted(json.loads(line)["task_id"] for line in contracts.read_text().splitlines() if line.strip())


def core_sample(limit: int = 12) -> list[str]:
    """One frozen core task per category (the first by id), at most ``limit``: a quick cross-section."""
    import tomllib

    frozen = set(core_task_ids())
    by_category: dict[str, str] = {}
    for task_id in sorted(frozen):
        toml = CORE / task_id / "task.toml"
        if not toml.is_file():
            continue
        category = tomllib.loads(toml.read_text()).get("category", "general")
        by_category.setdefault(category, task_id)
    return sorted(by_category.values())[:limit]


def snapshot_core(dest: Path) -> Path:
    """A copy of the whole real core suite, so edits to the repo during a run don't race it."""
    shutil.copytree(CORE, dest, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    return dest


def core_contract_lines(task_ids) -> list[str]:
    """The frozen contract lines of some core tasks, in the file's order."""
    wanted = set(task_ids)
    lines = [line for line in CORE_CONTRACTS.read_text().splitlines() if line.strip() and json.loads(line)["task_id"] in wanted]
    assert len(lines) == len(wanted), f"core contracts lack some of {sorted(wanted)}"
    return lines


def copy_core_suite(dest: Path, task_ids=SMALL_TASKS, contracts: bool = True) -> Path:
    """A suite folder holding copies of core tasks and (unless told not to) their contracts."""
    dest.mkdir(parents=True, exist_ok=True)
    for task_id in task_ids:
        shutil.copytree(CORE / task_id, dest / task_id, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    text = "\n".join(core_contract_lines(task_ids)) + "\n" if contracts else ""
    (dest / "contracts.jsonl").write_text(text)
    return dest


def write_tiny_task(
    suite: Path,
    task_id: str,
    *,
    word: str = "hello",
    difficulty: str = "easy",
    category: str = "files",
    tests: int = 2,
) -> Path:
    """A minimal native task: write ``word`` to ~/out.txt. The reference does; noop doesn't."""
    root = suite / task_id
    (root / "tests").mkdir(parents=True)
    (root / "environment").mkdir()
    (root / "environment" / "README").write_text(f"task {task_id}\n")
    (root / "task.toml").write_text(
        f'id = "{task_id}"\ntitle = "Write {word}"\ndifficulty = "{difficulty}"\ncategory = "{category}"\n'
        'inputs = ["README"]\n'
    )
    (root / "instruction.md").write_text(f"Write the word {word} followed by a newline to /home/user/out.txt.\n")
    (root / "solution.sh").write_text(f"echo {word} > /home/user/out.txt\n")
    body = ['"""Hidden tests."""', "from pathlib import Path", 'OUT = Path("/home/user/out.txt")', ""]
    body.append(f"def test_exists():\n    assert OUT.is_file()\n")
    for index in range(1, tests):
        body.append(f"def test_content_{index}():\n    assert OUT.read_text() == {word + chr(10)!r}\n")
    (root / "tests" / "test_outputs.py").write_text("\n".join(body))
    return root


def predictions_file(path: Path, scripts: dict[str, str]) -> Path:
    path.write_text("".join(json.dumps({"task_id": k, "agent_script": v}) + "\n" for k, v in sorted(scripts.items())))
    return path


# -- pytester ------------------------------------------------------------------------
class TermrlPytester:
    """pytester plus the run folder, so every inner run writes inside pytester.path."""

    def __init__(self, pytester: pytest.Pytester) -> None:
        self.pytester = pytester
        self.path = pytester.path
        self.episodes = self.path / "run" / "episodes.jsonl"
        pytester.makeini("[pytest]\n")

    def suite(self, task_ids=SMALL_TASKS, name: str = "suite") -> Path:
        return copy_core_suite(self.path / name, task_ids)

    def imported_suite(self, *task_dirs: Path, name: str = "suite") -> Path:
        """A suite folder of copies of these task directories, frozen by the plugin (``--termrl-freeze``)."""
        suite = self.path / name
        suite.mkdir()
        (suite / "contracts.jsonl").write_text("")
        for task_dir in task_dirs:
            shutil.copytree(task_dir, suite / task_dir.name)
        self.run(name, "--termrl-freeze", timeout=300).assert_outcomes(passed=len(task_dirs))
        return suite

    def run(self, *args: str, cache: bool = False, timeout: float = 240):
        argv = [f"--termrl-run-dir={self.path / 'run'}", f"--termrl-episodes={self.episodes}", *args]
        if not cache:
            argv = ["-p", "no:cacheprovider", *argv]
        return self.pytester.runpytest_subprocess(*argv, timeout=timeout)


@pytest.fixture
def tp(pytester: pytest.Pytester) -> TermrlPytester:
    return TermrlPytester(pytester)


# -- imported tasks ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def import_cache(tmp_path_factory):
    """Imports land in a cache of this run's own, never in ~/.cache (a module marks itself with it)."""
    patch = pytest.MonkeyPatch()
    patch.setenv("TERMRL_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "termrl-cache"))
    yield
    patch.undo()


@pytest.fixture(scope="module")
def harness():
    """A bwrap harness with the plugin's defaults, shared by a module's episodes."""
    from pytest_termrl.harness import default_harness

    return default_harness()


# -- sandboxes and the backends they run on -------------------------------------------
CONFORMANCE = "pytest_termrl.sandbox.conformance"
CONFORMANCE_BACKENDS = ["bwrap", "docker-local", pytest.param("docker-remote", marks=pytest.mark.slow)]
"""Every conformance test runs for each: docker-remote is ``local=False`` (home, commands and
outputs in volumes, nothing bind-mounted, everything through the API), what a ``DOCKER_HOST``
on another machine gets."""
WHOLE_MACHINE_BACKENDS = ["bwrap", "docker-userns"]
"""The root-inside cases run on bwrap and on a local engine that remaps user namespaces (.ci/docker-userns-setup.sh).
On the first engine (not remapped) root inside is the host's root, confined by the engine's namespaces and default
capabilities, so the two cases about the id map fail there by design; tests/integration/test_docker_machine.py covers
the docker whole-machine sandbox itself on it."""
USERNS_DOCKER_HOST = os.environ.get("TERMRL_DOCKER_USERNS_HOST", "unix:///var/run/termrl-docker-userns.sock")
"""The second engine, started with ``userns-remap=default`` by .ci/docker-userns-setup.sh."""
EXEC_BACKENDS = ["bwrap", "docker-local"]
"""The exec cases run in a whole-machine sandbox, which docker makes on a local engine only: docker-remote refuses one
by name (tests/integration/test_docker_machine.py)."""
SHELL_BACKENDS = [pytest.param("docker-archive", marks=pytest.mark.slow)]
"""And the shell's tests once more: remote, with every transfer by the archive API, as over ssh."""
DOCKER_IMAGE = os.environ.get("TERMRL_DOCKER_IMAGE", "termrl-base:1")


def pytest_generate_tests(metafunc):
    module = metafunc.function.__module__
    if module.startswith(CONFORMANCE + ".") and "termrl_backend_factory" in metafunc.fixturenames:
        kinds = CONFORMANCE_BACKENDS + SHELL_BACKENDS * (module == f"{CONFORMANCE}.test_shell")
        if module == f"{CONFORMANCE}.test_root_isolation":
            kinds = WHOLE_MACHINE_BACKENDS
        if module == f"{CONFORMANCE}.test_exec":
            kinds = EXEC_BACKENDS
        metafunc.parametrize("termrl_backend_factory", kinds, indirect=True, scope="module")


@pytest.fixture(scope="module")
def termrl_backend_factory(request):
    """Makes the backends of ``make_sandbox`` (and the conformance suite's ``backend``): bwrap,
    or the backend a test of the conformance suite is parametrised with."""
    return backend_factory(getattr(request, "param", "bwrap"))


def backend_factory(kind: str):
    """A callable from SandboxSettings to a new backend of ``kind``: bwrap, or docker-local,
    docker-remote, docker-archive, docker-userns (the remapped engine; each skips, or fails in CI, when its
    engine is unusable)."""
    if kind == "bwrap":
        from pytest_termrl.sandbox.bwrap.backend import BwrapBackend

        return BwrapBackend
    if kind == "docker-userns":
        require_service(engine_problem(USERNS_DOCKER_HOST), "the engine that remaps user namespaces")
        return remapped_docker_backend
    require_engine(engine_problem())
    from pytest_termrl.sandbox.docker import DockerBackend

    mode = kind.removeprefix("docker-")
    assert mode in ("local", "remote", "archive"), kind

    def make(settings):
        backend = DockerBackend(settings, local=mode == "local")
        if mode == "archive":
            create = backend.create

            def create_archive_only(label: str):
                sandbox = create(label)
                sandbox.execs_are_cheap = False
                return sandbox

            backend.create = create_archive_only
        return backend

    return make


def remapped_docker_backend(settings):
    """A docker backend on the engine that remaps user namespaces (its machine sandboxes: root inside is dockremap's id)."""
    import docker

    from pytest_termrl.sandbox.docker import DockerBackend

    return DockerBackend(settings, client=docker.DockerClient(base_url=USERNS_DOCKER_HOST), local=True)


def engine_problem(host: str | None = None) -> str | None:
    """Why the docker backend cannot run here (on the engine at ``host``; None: the environment's), or None."""
    try:
        import docker
    except ImportError:
        return "the Docker SDK is not installed (pip install 'pytest-termrl[docker]')"
    setup = ".ci/docker-setup.sh" if host is None else ".ci/docker-userns-setup.sh"
    try:
        client = docker.from_env() if host is None else docker.DockerClient(base_url=host)
        client.ping()
    except Exception as exc:  # noqa: BLE001
        return f"no Docker engine answers ({type(exc).__name__}: {exc}); run {setup}"
    try:
        client.images.get(DOCKER_IMAGE)
    except docker.errors.ImageNotFound:
        return f"the base image {DOCKER_IMAGE} is missing; run {setup} or python -m pytest_termrl.sandbox.docker.images.base build"
    finally:
        client.close()
    if os.geteuid() != 0:
        return "the docker backend's tests run as root (the backend owns the agent's files as uid 1000)"
    return None


def in_ci() -> bool:
    """Whether this is CI (``CI=true``), where every service the tests need must be there."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def require_service(problem: str | None, what: str) -> None:
    """Skip (developer machine) or fail (CI) when a service a test needs is missing: a skip in CI would hide it."""
    if problem is None:
        return
    if in_ci():
        pytest.fail(f"CI requires {what}: {problem}", pytrace=False)
    pytest.skip(f"{what} unavailable: {problem}")


OVERLAY_OPTIONS = (
    "userxattr,redirect_dir=off,metacopy=off",
    # With the overlay module's redirect_always_follow (the default) the kernel reads
    # redirect_dir=off as "follow", which it refuses beside userxattr; nofollow is the
    # same for an upper: no redirect is ever written.
    "userxattr,redirect_dir=nofollow,metacopy=off",
)


def require_root(what: str) -> None:
    """Skip (developer machine) or fail (CI, which runs as root) where a test needs root."""
    require_service(None if os.geteuid() == 0 else "the tests do not run as root", what)


def mount_overlay(lowerdir: str, upper: Path, work: Path, at: Path) -> None:
    """Mount a real kernel overlay at ``at`` (userxattr, no redirects, no metacopy); skip or fail (CI) where none mounts."""
    require_root("mounting an overlay (root and mount(8))")
    require_service(None if shutil.which("mount") else "no mount(8)", "mounting an overlay")
    errors = []
    for options in OVERLAY_OPTIONS:
        done = subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                               f"lowerdir={lowerdir},upperdir={upper},workdir={work},{options}", str(at)],
                              capture_output=True, text=True)
        if done.returncode == 0:
            return
        errors.append(f"{options}: {done.stderr.strip()}")
    require_service(f"the kernel mounts no overlay here: {errors}", "a kernel overlay")


def require_engine(problem: str | None) -> None:
    """Skip (developer machine) or fail (CI=true) when the docker engine is unusable."""
    require_service(problem, "the docker backend")


@pytest.fixture(scope="module")
def engine_check() -> str | None:
    """What keeps the Docker engine from being used here (None: usable), asked once per module."""
    return engine_problem()


@pytest.fixture
def docker_engine(engine_check):
    """Skip (developer machine) or fail (CI=true) a test when the engine is unusable: ``pytestmark = usefixtures("docker_engine")``."""
    require_engine(engine_check)


@pytest.fixture(scope="module")
def machine_suite():
    """task_suites/machine (whole-machine tasks) as its frozen contracts load it."""
    from pytest_termrl.tasks.suite import load_suite

    loaded = load_suite(REPO / "task_suites" / "machine" / "contracts.jsonl")
    assert not loaded.problems, loaded.problems
    return loaded


@pytest.fixture(scope="module")
def local_docker_backend(engine_check):
    """A module's docker backend on the local engine, default settings, after clearing what earlier runs left;
    skips (developer machine) or fails (CI=true) when the engine is unusable."""
    require_engine(engine_check)
    from pytest_termrl.sandbox.docker import DockerBackend
    from pytest_termrl.sandbox import SandboxSettings

    made = DockerBackend(SandboxSettings(), local=True)
    made.cleanup_stale()
    yield made
    made.close()


@pytest.fixture
def serve():
    """``serve(policy, **params)``: an in-process scripted chat server (tests/chat_server.py, real HTTP) with the named
    policy, started now and stopped at teardown; the model agents' tests point their endpoint at it."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from chat_server import ChatServer, make_policy  # noqa: PLC0415 - a test helper beside this file, not a package

    servers = []

    def _serve(policy: str, **params):
        server = ChatServer(make_policy(policy, **params)).start()
        servers.append(server)
        return server

    yield _serve
    for server in servers:
        server.stop()
