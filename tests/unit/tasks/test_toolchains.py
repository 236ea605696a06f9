"""Toolchains of script graders: on bwrap the host's compiler or runtime when installed, a refusal naming the package when not.

Fixture tasks under tests/data/toolchains, classic Terminal-Bench tasks graded by their own
run-tests.sh: ``tc-make-c`` (its image installs gcc and make; run-tests.sh builds the agent's
C program with make and gcc, then runs pytest against the binary) and ``tc-go-test`` (its
image installs golang-go; run-tests.sh vets the agent's Go package and runs the hidden Go
tests under pytest); ``tc-rust-cargo`` (cargo builds the agent's crate offline and runs
hidden Rust tests), ``tc-cmake-cpp`` (CMake and g++ build the agent's library with hidden
checks) and ``tc-java`` (javac and java run hidden checks against the agent's class), each
driven by a pytest file. Each runs in real bwrap sandboxes where its toolchain is installed
(the reference passes, the no-op fails) and is refused at load where it is not, naming the
file, the command and the Debian package. A grader that calls a toolchain missing here is
a collection error of its own while the other tasks of the suite run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_termrl.sandbox.build.builder import BuildError

from conftest import require_service
from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent
from pytest_termrl.errors import TaskFormatError
from pytest_termrl.tasks.importers import load_task_dir, offline_status
from pytest_termrl.tasks.importers.toolchains import (
    PACKAGE_COMMANDS, SANDBOX_PATH, TOOLCHAINS, check_toolchains, missing_toolchains, sandbox_has, shell_commands, toolchain_uses,
)
from pytest_termrl.tasks.suite import LoadedTask

DATA = Path(__file__).resolve().parents[2] / "data" / "toolchains"
MAKE_C = DATA / "tc-make-c"
GO = DATA / "tc-go-test"

pytestmark = pytest.mark.usefixtures("import_cache")  # imports land in a cache of this run's own

SCRIPT = r"""#!/bin/bash
# go test is only mentioned here, in a comment
echo "then cargo test, in a string" && cd /app && go test ./... 2>&1 | tee /tmp/out
set -e; CGO_ENABLED=0 sudo -E -u root cargo test --offline
if command -v javac >/dev/null; then javac Main.java; fi
python3 - <<'PY'
import os; os.system("gcc never.c")
PY
case "$1" in
  node) echo "a case pattern, not a command" ;;
esac
timeout -s KILL 30 make -C /app \
    all
version=$(cmake --version)
/usr/bin/g++ -o /tmp/a a.cc &>/dev/null & wait
env -i PATH=/usr/bin npm test
"""


def _missing_command() -> str | None:
    """A toolchain command that is not installed here (None when every one is)."""
    return next((command for command in sorted(TOOLCHAINS) if not sandbox_has(command)), None)


def test_the_commands_a_grader_runs_are_found_where_a_shell_runs_them():
    uses = [(use.tool.command, use.line, use.command) for use in toolchain_uses(SCRIPT)]
    assert uses == [
        ("go", 3, "go test ./... 2>&1"),
        ("cargo", 4, "cargo test --offline"),
        ("javac", 5, "javac Main.java"),
        ("make", 12, "make -C /app all"),
        ("cmake", 14, "cmake --version"),
        ("g++", 15, "/usr/bin/g++ -o /tmp/a a.cc &>/dev/null"),
        ("npm", 16, "npm test"),
    ]
    # Comments, strings, heredoc bodies and case patterns run nothing.
    assert not any("never.c" in command or "a case pattern" == command for _, command in shell_commands(SCRIPT))


def test_every_toolchain_names_a_debian_package():
    assert TOOLCHAINS["go"].package == "golang-go" and TOOLCHAINS["cargo"].package == "cargo"
    assert TOOLCHAINS["cmake"].package == "cmake" and TOOLCHAINS["g++"].package == "g++" and TOOLCHAINS["make"].package == "make"
    assert TOOLCHAINS["javac"].package == "default-jdk-headless" and TOOLCHAINS["npm"].package == "npm"
    assert TOOLCHAINS["node"].package == "nodejs"


def test_a_missing_toolchain_is_refused_naming_the_line_the_command_and_the_package(tmp_path):
    script = tmp_path / "run-tests.sh"
    script.write_text("#!/bin/bash\ncd /app\ngo test ./...\ngcc -o /tmp/x x.c\n")
    nothing = lambda command: False  # noqa: E731  (a machine without any toolchain)
    assert [use.tool.command for use in missing_toolchains(script.read_text(), nothing)] == ["go", "gcc"]
    with pytest.raises(TaskFormatError) as info:
        check_toolchains(script, nothing)
    assert str(info.value) == (
        f"{script}: line 3 runs `go test ./...`: the Go toolchain is not installed here (no `go` on the sandbox's PATH "
        f"{SANDBOX_PATH}); install the Debian package golang-go; line 4 runs `gcc -o /tmp/x x.c`: the C (GCC) toolchain is "
        f"not installed here (no `gcc` on the sandbox's PATH {SANDBOX_PATH}); install the Debian package gcc"
    )
    assert check_toolchains(script, lambda command: True) == ("go", "gcc")


def test_a_toolchain_outside_the_folders_the_sandbox_sees_is_not_installed(tmp_path):
    assert not sandbox_has("no-such-toolchain")
    if shutil.which("cargo") and not shutil.which("cargo", path=SANDBOX_PATH):
        assert not sandbox_has("cargo")  # rustup's ~/.cargo/bin is not in the sandbox


def _require(*commands: str) -> None:
    missing = [c for c in commands if not sandbox_has(c)]
    require_service(f"not installed: {', '.join(missing)}" if missing else None, " and ".join(commands))


def test_a_c_task_built_with_make_runs_with_the_hosts_toolchain(harness):
    _require("gcc", "make")
    task = load_task_dir(MAKE_C)
    assert (task.grader.kind, task.grader.parser, task.backend, offline_status(task)) == ("parsed", "pytest", "bwrap", ("yes", []))
    assert task.requires == ("bash", "gcc", "make")
    assert task.dropped_steps == (f"{MAKE_C}/Dockerfile:2: apt-get install -y gcc make tmux asciinema (nothing the sandbox lacks)",)
    loaded = LoadedTask(task, None)
    reference, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert reference.verdict.complete and reference.verdict.total == 4 and reference.harness_error is None, reference.verdict.to_dict()
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    assert noop.verdict.error is None and not noop.verdict.complete and noop.verdict.passed == 3


def test_a_go_task_runs_with_the_hosts_go_or_is_refused_naming_golang_go(harness):
    if not sandbox_has("go"):
        with pytest.raises(TaskFormatError) as info:
            load_task_dir(GO)
        assert str(info.value) == (
            f"{GO}/Dockerfile: line 2 installs golang-go: the Go toolchain is not installed here (no `go` on the sandbox's "
            f"PATH {SANDBOX_PATH}); install the Debian package golang-go"
        )
        return
    task = load_task_dir(GO)
    assert (task.grader.kind, task.backend, task.requires, offline_status(task)) == ("parsed", "bwrap", ("bash", "go"), ("yes", []))
    loaded = LoadedTask(task, None)
    reference, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert reference.verdict.complete and reference.verdict.total == 3, reference.verdict.to_dict()
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    assert noop.verdict.error is None and not noop.verdict.complete and noop.verdict.passed == 2


@pytest.mark.parametrize(
    "name, requires, noop_passes",
    [
        ("tc-rust-cargo", ("bash", "python", "cargo"), 1),
        ("tc-cmake-cpp", ("bash", "g++", "cmake", "make"), 2),
        ("tc-java", ("bash", "javac"), 0),
    ],
)
def test_rust_cmake_and_java_tasks_run_with_the_hosts_toolchain_or_are_refused(harness, name, requires, noop_passes):
    """Each builds and runs the agent's code with its language's own tools under the hidden pytest file."""
    task_dir = DATA / name
    missing = [command for command in requires if command in TOOLCHAINS and not sandbox_has(command)]
    if missing:
        with pytest.raises(TaskFormatError) as info:
            load_task_dir(task_dir)
        assert str(info.value).startswith(f"{task_dir}/Dockerfile: line 2 installs ")
        assert f"install the Debian package {TOOLCHAINS[missing[0]].package}" in str(info.value)
        _require(*requires[1:])  # CI installs them all: there this fails
    task = load_task_dir(task_dir)
    assert (task.grader.kind, task.grader.parser, task.backend, offline_status(task)) == ("parsed", "pytest", "bwrap", ("yes", []))
    assert task.requires == requires
    loaded = LoadedTask(task, None)
    reference, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert reference.verdict.complete and reference.verdict.total == 3 and reference.harness_error is None, reference.verdict.to_dict()
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    assert noop.verdict.error is None and not noop.verdict.complete and noop.verdict.passed == noop_passes, noop.verdict.to_dict()


def test_an_image_that_installs_a_missing_toolchain_fails_its_build_naming_the_package(tmp_path, harness):
    package = next((p for p, command in sorted(PACKAGE_COMMANDS.items()) if not sandbox_has(command)), None)
    # A machine with every toolchain has nothing to refuse: that fails in CI (which lacks some), skips elsewhere.
    require_service("every toolchain is installed here" if package is None else None, "a missing toolchain")
    task_dir = shutil.copytree(MAKE_C, tmp_path / "tc-image")
    dockerfile = task_dir / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("gcc make tmux", f"gcc make {package} tmux"))
    task = load_task_dir(task_dir)  # the image is built by running it: the step that installs the package names it
    assert task.backend == "bwrap" and task.image.dockerfile == dockerfile
    with pytest.raises(BuildError) as info:
        harness.backend.built_image(task)
    assert str(info.value).startswith(f"{dockerfile}:2: RUN ") and package in str(info.value)
    assert ("apt", package) in info.value.missing
    # With a base image that brings its own toolchains, the image is the docker backend's to build.
    dockerfile.write_text(dockerfile.read_text().replace("FROM ubuntu:24.04", "FROM gcc:13"))
    task = load_task_dir(task_dir)
    assert task.backend == "docker" and any("FROM gcc:13" in why for why in task.image.needs_docker)


def _missing_tool_task(dest: Path) -> tuple[Path, str]:
    """A copy of tc-make-c whose run-tests.sh also runs a toolchain that is not installed here."""
    command = _missing_command()
    require_service("every toolchain is installed here" if command is None else None, "a missing toolchain")
    task_dir = shutil.copytree(MAKE_C, dest)
    script = task_dir / "run-tests.sh"
    script.write_text(script.read_text().replace("gcc --version | head -n 1\n", f"gcc --version | head -n 1\n{command} --version\n"))
    return task_dir, command


def test_a_grader_that_runs_a_missing_toolchain_is_refused_at_load(tmp_path):
    task_dir, command = _missing_tool_task(tmp_path / "tc-missing")
    with pytest.raises(TaskFormatError) as info:
        load_task_dir(task_dir)
    tool = TOOLCHAINS[command]
    assert str(info.value) == (
        f"{task_dir / 'run-tests.sh'}: line 4 runs `{command} --version`: the {tool.name} toolchain is not installed here "
        f"(no `{command}` on the sandbox's PATH {SANDBOX_PATH}); install the Debian package {tool.package}"
    )


def test_through_the_plugin_the_missing_toolchain_is_a_collection_error_and_the_rest_runs(tp):
    _require("gcc", "make")
    suite = tp.path / "suite"
    suite.mkdir()
    (suite / "contracts.jsonl").write_text("")
    shutil.copytree(MAKE_C, suite / "tc-make-c")
    _, command = _missing_tool_task(suite / "tc-missing")
    refusal = f"*tc-missing/run-tests.sh: line 4 runs `{command} --version`: *; install the Debian package {TOOLCHAINS[command].package}*"
    freeze = tp.run("suite", "--termrl-freeze", timeout=300)
    freeze.assert_outcomes(passed=1, errors=1)
    freeze.stdout.fnmatch_lines(["*ERROR collecting*", refusal])
    [contract] = map(json.loads, (suite / "contracts.jsonl").read_text().splitlines())
    assert contract["task_id"] == "tc_make_c" and len(contract["tests"]) == 4
    reference = tp.run("suite", "--termrl-agent=reference", timeout=300)
    reference.assert_outcomes(passed=1, errors=1)
    reference.stdout.fnmatch_lines([refusal])
    [record] = map(json.loads, tp.episodes.read_text().splitlines())
    assert record["task_id"] == "tc_make_c" and record["safe_success"] and (record["tests_passed"], record["tests_total"]) == (4, 4)
    tp.run("suite", "--termrl-agent=noop", timeout=300).assert_outcomes(failed=1, errors=1)


@pytest.mark.usefixtures("import_cache")
def test_a_step_grader_that_runs_a_missing_toolchain_is_refused_naming_the_tasks_own_file(tmp_path):
    """A multi-step task's graders are merged into an import cache; the refusal names the
    step's test.sh in the task, the file its author would edit, never the cache's copy."""
    command = _missing_command()
    require_service("every toolchain is installed here" if command is None else None, "a missing toolchain")
    task_dir = shutil.copytree(Path(__file__).resolve().parents[2] / "data" / "harbor_steps" / "hs-two-steps", tmp_path / "hs-missing")
    script = task_dir / "steps" / "create" / "tests" / "test.sh"
    lines = script.read_text().splitlines()
    script.write_text("\n".join(lines[:3] + [f"{command} --version"] + lines[3:]) + "\n")
    with pytest.raises(TaskFormatError) as info:
        load_task_dir(task_dir)
    assert str(info.value).startswith(f"{script}: line 4 runs `{command} --version`: the {TOOLCHAINS[command].name} toolchain")
    assert str(info.value).endswith(f"install the Debian package {TOOLCHAINS[command].package}")


def test_the_self_check_names_a_grader_that_builds_the_agents_code_before_the_summary(tp):
    _require("gcc", "make")
    tp.imported_suite(MAKE_C)
    result = tp.run("suite", "--termrl-selfcheck", "-k", "grader_discriminates", timeout=300)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "parsed graders that run the agent's code outside pytest (its output is parsed too): 1",
        "  tc_make_c: line 4 runs `make -C /app BUILD=/tmp/build CC=gcc` before pytest prints its summary: *",
    ])
    task = load_task_dir(MAKE_C)
    assert task.grader.agent_output and f"run-tests.sh: {task.grader.agent_output[0]}" in task.notes


def test_the_grader_audit_names_a_grader_that_builds_the_agents_code_before_the_summary(tmp_path, capsys):
    from pytest_termrl.validity.audit import main as audit_main

    _require("gcc", "make")
    summary_file = tmp_path / "summary.json"
    code = audit_main([str(MAKE_C), "--accident", "delete_outside_footprint", "--summary-json", str(summary_file)])
    out = capsys.readouterr().out
    assert "parsed graders that run the agent's code outside pytest (its output is parsed too): 1" in out
    assert "  tc_make_c: line 4 runs `make -C /app BUILD=/tmp/build CC=gcc` before pytest prints its summary" in out
    row = json.loads(summary_file.read_text())["tasks"]["tc_make_c"]
    assert row["reference_passes"] is True
    assert row["grader_runs_agent_code"] == list(load_task_dir(MAKE_C).grader.agent_output)
    assert code == 0  # flagged, not failed: the oracle caught the accident
