"""Toolchain variants of the docker backend's base image, and imported tasks that run in them.

The table (names, Debian packages, tags) and the refusals are plain code. Against a real
engine: the ``cpp`` variant (the smallest; .ci/docker-setup.sh ensures it) is the base image
plus g++, make and cmake in one layer on top of it, and the fixture task tc-make-c
(tests/data/toolchains: its Dockerfile starts FROM ubuntu:24.04 and installs gcc and make;
its run-tests.sh builds the agent's C program with make and gcc in /app) runs on docker in
that variant, agent and verifier, the reference passing and the no-op failing. Without an
engine, the base image or root, the engine tests skip on a developer machine and fail in CI.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import DOCKER_IMAGE, REPO, engine_problem, require_engine, require_service

from pytest_termrl.errors import SandboxError
from pytest_termrl.sandbox.base import SandboxSettings
from pytest_termrl.sandbox.docker.images.client import DEFAULT_TAG
from pytest_termrl.sandbox.docker.images.task import heredoc_lines
from pytest_termrl.sandbox.docker.images.toolchain import (
    COMMAND_TOOLCHAIN, TOOLCHAIN_PACKAGES, TOOLCHAINS_LABEL, ToolchainError, toolchain_image_for, toolchain_need, toolchain_names,
    toolchain_packages, toolchain_tag,
)
from pytest_termrl.tasks.importers.toolchains import TOOLCHAINS

MAKE_C = Path(__file__).resolve().parents[1] / "data" / "toolchains" / "tc-make-c"
CPP = toolchain_tag(DOCKER_IMAGE, "cpp")

pytestmark = pytest.mark.usefixtures("import_cache")


# -- the table -------------------------------------------------------------------------------
def test_names_packages_and_tags():
    assert toolchain_names("golang, CPP,cpp") == ("cpp", "golang")
    assert toolchain_packages("rust,cpp") == ("g++", "make", "cmake", "rustc", "cargo")
    assert toolchain_packages(["java", "golang"]) == ("golang-go", "default-jdk-headless")
    assert toolchain_tag("termrl-base:1", "rust,cpp,golang") == "termrl-base:1-cpp-golang-rust"
    with pytest.raises(ToolchainError, match=r"^unknown toolchain node: the names are cpp, golang, java, rust$"):
        toolchain_names("cpp,node")
    # Every command a variant brings is one the loaders detect, and its variant installs its package
    # (gcc comes with g++, the JRE with the JDK).
    brought_with = {"gcc": "g++", "default-jre-headless": "default-jdk-headless"}
    for command, name in COMMAND_TOOLCHAIN.items():
        package = TOOLCHAINS[command].package
        assert brought_with.get(package, package) in TOOLCHAIN_PACKAGES[name], command


def test_every_package_of_the_table_is_in_the_debian_archive():
    require_service(None if shutil.which("apt-cache") else "apt-cache is not installed", "Debian's package index (apt-cache)")
    packages = [p for name in sorted(TOOLCHAIN_PACKAGES) for p in TOOLCHAIN_PACKAGES[name]]
    policy = subprocess.run(["apt-cache", "policy", *packages], capture_output=True, text=True, check=True).stdout
    candidates = dict(zip(packages, [line.split(":", 1)[1].strip() for line in policy.splitlines() if "Candidate:" in line]))
    assert sorted(p for p, c in candidates.items() if c and c != "(none)") == sorted(packages), candidates


def test_the_variant_a_task_needs_and_the_command_that_builds_it():
    assert toolchain_need(("bash", "python3")).names == ()
    assert toolchain_image_for(("bash", "python3"), DEFAULT_TAG, DEFAULT_TAG, lambda tag: False, "task t") is None
    need = toolchain_need(("bash", "go", "gcc", "make"))
    assert (need.commands, need.names, need.uncovered) == (("go", "gcc", "make"), ("cpp", "golang"), ())
    assert toolchain_image_for(("gcc",), "termrl-base:1", DEFAULT_TAG, {"termrl-base:1-cpp"}.__contains__, "t") == "termrl-base:1-cpp"
    with pytest.raises(ToolchainError) as info:
        toolchain_image_for(("bash", "go", "gcc"), DEFAULT_TAG, DEFAULT_TAG, lambda tag: False, "task tc (/x)")
    assert str(info.value) == (
        f"task tc (/x): its grader runs `go`, `gcc`, which the docker backend brings in the image {DEFAULT_TAG}-cpp-golang, "
        f"not in the engine; build it with `python -m pytest_termrl.sandbox.docker.images.base ensure --with cpp,golang`"
    )
    with pytest.raises(ToolchainError, match=r"build it with `python -m pytest_termrl.sandbox.docker.images.base ensure --with rust --tag my-base:2`$"):
        toolchain_image_for(("cargo",), "my-base:2", DEFAULT_TAG, lambda tag: False, "t")
    with pytest.raises(ToolchainError) as info:
        toolchain_image_for(("bash", "npm"), DEFAULT_TAG, DEFAULT_TAG, lambda tag: True, "task web")
    assert str(info.value).startswith(
        "task web: its grader runs `npm` (Node.js (npm), Debian package npm), which no toolchain image of the docker backend "
        "brings (those are cpp: g++ make cmake, golang: golang-go, java: default-jdk-headless, rust: rustc cargo)"
    )


def test_a_heredoc_in_a_dockerfile_is_found_by_its_line(tmp_path):
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("# syntax=docker/dockerfile:1.4\nFROM termrl-base:1\nRUN <<EOF\necho hi > /etc/hd\nEOF\nRUN echo done\n")
    assert heredoc_lines(dockerfile) == [3]
    assert heredoc_lines(MAKE_C / "Dockerfile") == []


# -- on the engine -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def engine():
    require_engine(engine_problem())
    import docker

    client = docker.from_env()
    yield client
    client.close()


@pytest.fixture(scope="module")
def cpp_image(engine) -> str:
    """The cpp variant, built here when the engine lacks it (CI ensures it in .ci/docker-setup.sh)."""
    from pytest_termrl.sandbox.docker.images.base import ensure_toolchain_image

    started = time.monotonic()
    tag = ensure_toolchain_image("cpp", DOCKER_IMAGE, client=engine, log=lambda line: None)
    print(f"{tag} ready in {time.monotonic() - started:.1f} s")
    return tag


def test_the_cpp_variant_is_one_layer_on_the_base_image(engine, cpp_image):
    assert cpp_image == CPP
    base, variant = engine.images.get(DOCKER_IMAGE), engine.images.get(CPP)
    base_layers, layers = base.attrs["RootFS"]["Layers"], variant.attrs["RootFS"]["Layers"]
    assert layers[:-1] == base_layers and len(layers) == len(base_layers) + 1
    labels = variant.attrs["Config"]["Labels"]
    assert labels[TOOLCHAINS_LABEL] == "cpp" and labels["termrl.toolchain-packages"] == "g++,make,cmake"
    assert variant.attrs["Config"]["Cmd"] == ["/bin/bash"] and variant.attrs["Config"]["WorkingDir"] == "/home/user"
    probe = (
        "gcc --version | head -n1; cc --version >/dev/null && g++ --version >/dev/null && make --version | head -n1; "
        "cmake --version | head -n1; cat /etc/apt/sources.list; ls -A /etc/apt/sources.list.d; "
        "ls -A /var/lib/apt/lists | grep -v -x -e partial -e lock; id -u"
    )
    out = engine.containers.run(CPP, ["bash", "-c", probe], user="1000:1000", network_mode="none", remove=True).decode()
    lines = out.splitlines()
    assert lines[0].startswith("gcc (Debian") and lines[1].startswith("GNU Make") and lines[2].startswith("cmake version")
    assert lines[3:] == ["1000"], out  # no apt source, list or host name left in the image
    # ensure on a present variant does nothing.
    cli = subprocess.run([sys.executable, "-m", "pytest_termrl.sandbox.docker.images.base", "ensure", "--with", "cpp", "--tag", DOCKER_IMAGE],
                         capture_output=True, text=True, cwd=REPO, timeout=60)
    assert cli.returncode == 0 and cli.stdout.startswith(f"{CPP} present ("), cli.stdout + cli.stderr


def test_a_c_task_runs_in_the_cpp_variant_on_docker(engine, cpp_image):
    from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent
    from pytest_termrl.episode import EpisodeSettings
    from pytest_termrl.harness import Harness
    from pytest_termrl.sandbox.docker import DockerBackend, task_image_for
    from pytest_termrl.tasks.importers import load_task_dir
    from pytest_termrl.tasks.suite import LoadedTask

    task = load_task_dir(MAKE_C)
    assert task.requires == ("bash", "gcc", "make") and task.workdir == "/app" and task.image.base_images == ("ubuntu:24.04",)
    backend = DockerBackend(SandboxSettings(command_timeout_s=60), local=True)
    try:
        assert task_image_for(task, backend) == CPP  # not its Dockerfile: ubuntu:24.04 would be pulled
        harness = Harness(backend, EpisodeSettings(command_timeout_s=60, test_timeout_s=60))
        loaded = LoadedTask(task, None)
        reference = harness.play_fresh(loaded, ReferenceAgent(), "reference").outcome
        assert reference.harness_error is None and reference.verdict.complete and reference.verdict.total == 4, reference.verdict.to_dict()
        # Without a frozen contract the reference's own edit is not permitted: the oracle names just it, as on bwrap.
        assert [v.split(" ")[:3] for v in reference.violations] == [["collateral:", "/app/mean.c:", "content_changed"]]
        noop = harness.play_fresh(loaded, NoopAgent(), "noop").outcome
        assert noop.verdict.error is None and not noop.verdict.complete and noop.verdict.passed == 3, noop.verdict.to_dict()
        # The agent's shell starts in /app, where its home shows too.
        sandbox = backend.create("tc-alias")
        try:
            sandbox.prepare(task)
            assert sandbox.image == CPP
            assert sandbox.run("pwd; ls; gcc --version | head -n1").output.splitlines()[:3] == ["/app", "Makefile", "mean.c"]
        finally:
            sandbox.close()
    finally:
        backend.close()


def test_a_missing_variant_is_refused_naming_the_command_to_run(engine):
    from pytest_termrl.sandbox.docker import DockerBackend
    from pytest_termrl.tasks.importers import load_task_dir

    task = load_task_dir(MAKE_C)
    backend = DockerBackend(SandboxSettings(), image="termrl-absent-base:9", local=True)
    sandbox = backend.create("tc-missing")
    try:
        with pytest.raises(SandboxError) as info:
            sandbox.prepare(task)
        assert str(info.value) == (
            f"task {task.id} ({MAKE_C}): its grader runs `gcc`, `make`, which the docker backend brings in the image "
            f"termrl-absent-base:9-cpp, not in the engine; build it with "
            f"`python -m pytest_termrl.sandbox.docker.images.base ensure --with cpp --tag termrl-absent-base:9`"
        )
    finally:
        sandbox.close()
        backend.close()


def test_a_workdir_outside_the_home_is_refused_on_an_engine_of_another_machine(engine, cpp_image):
    from pytest_termrl.sandbox.docker import DockerBackend
    from pytest_termrl.tasks.importers import load_task_dir

    backend = DockerBackend(SandboxSettings(), local=False)
    sandbox = backend.create("tc-remote")
    try:
        with pytest.raises(SandboxError, match=r"^the task's workdir /app is not under /home/user: on an engine of another machine"):
            sandbox.prepare(load_task_dir(MAKE_C))
    finally:
        sandbox.close()
        backend.close()


def test_a_heredoc_dockerfile_is_refused_saying_why(engine, tmp_path):
    from pytest_termrl.sandbox.docker.images.client import ImageError
    from pytest_termrl.sandbox.docker.images.task import build_task_image

    (tmp_path / "Dockerfile").write_text(f"FROM {DOCKER_IMAGE}\nRUN <<EOF\necho hi > /etc/hd\nEOF\n")
    with pytest.raises(ImageError) as info:
        build_task_image(tmp_path)
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 'Dockerfile'}: line 2 opens a heredoc: heredocs in a Dockerfile")
    assert "BuildKit's Dockerfile frontend 1.4" in message and "DOCKER_BUILDKIT=1 docker build -t termrl-task-" in message
