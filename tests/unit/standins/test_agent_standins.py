"""The offline installer stand-ins of the agent's sandbox: pip, uv, uvx, apt-get met from what is already there.

Real bwrap sandboxes and a real episode: an install of what the sandbox's own python3 (or
the sandbox, for apt) has succeeds with one line, one of what it lacks fails with one line
naming it, a task's setup script meets the same stand-ins, and the episode record lists
what was stood in for. The standard-library reading of version specifiers (the sandbox's
python3 need not have ``packaging``) is checked against ``packaging`` itself.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from conftest import write_tiny_task
from pytest_termrl.agents.builtin import ReferenceAgent
from pytest_termrl.report.record import EpisodeRecord
from pytest_termrl.sandbox.standin_shims import BIN_INSIDE, TOOLS
from pytest_termrl.tasks.native import load_native_task
from pytest_termrl.tasks.suite import LoadedTask

STANDINS = Path(__file__).resolve().parents[3] / "pytest_termrl" / "standins" / "inside" / "tools.py"
ABSENT = "definitely-absent-pkg"
DEMO_METADATA = "printf 'Metadata-Version: 2.1\\nName: termrl-demo\\nVersion: 1.2.3\\n' > \"$d/termrl_demo-1.2.3.dist-info/METADATA\""


def _standins_module():
    spec = importlib.util.spec_from_file_location("_standins_under_test", STANDINS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("specifier", ["==1.2.3", "==1.2", "==1.2.*", "!=1.2.3", ">=1.2", ">=1.3", "<=1.2.3", "<1.2.3", ">1.2",
                                       "~=1.2", "~=1.3", "~=1.2.0", ">=1.0,<2", ">=2,<3", "!=1.2.*", "==1.2.3.0", "<1.10", ""])
@pytest.mark.parametrize("version", ["1.2.3", "1.2", "1.10.0", "2.0.1", "1.2.3rc1", "1.2.post1", "1.2.3+local", "1.3.dev1"])
def test_the_stdlib_reading_of_a_specifier_agrees_with_packaging(version, specifier):
    name, _, contains = _standins_module()._fallback_requirement(f"demo[extra] {specifier} ; python_version >= '3'")
    assert name == "demo"
    assert contains(version) == SpecifierSet(specifier).contains(version, prereleases=True)


@pytest.mark.parametrize("text", [".", "demo >= banana", "demo ~= 1", "demo >= 1.*", "-e ."])
def test_the_stdlib_reading_refuses_what_is_no_requirement(text):
    assert _standins_module()._fallback_requirement(text) is None


def _run(sandbox, command: str):
    result = sandbox.run(command)
    return result.exit_code, result.output.strip()


@pytest.mark.parametrize("kind", ["bwrap", "docker-local", pytest.param("docker-remote", marks=pytest.mark.slow)])
def test_installers_in_the_agent_sandbox_are_met_from_what_is_there(kind):
    from contextlib import ExitStack

    from conftest import backend_factory
    from pytest_termrl.sandbox import SandboxSettings

    with ExitStack() as made:
        backend = backend_factory(kind)(SandboxSettings(command_timeout_s=30))
        made.callback(backend.close)
        sandbox = backend.create("standins")
        made.callback(sandbox.close)
        sandbox.shell.start()
        _check_installers(sandbox)


def _check_installers(sandbox) -> None:
    code, found = _run(sandbox, "command -v " + " ".join(TOOLS))
    assert code == 0 and found.splitlines() == [f"{BIN_INSIDE}/{tool}" for tool in TOOLS]
    assert _run(sandbox, f"touch {BIN_INSIDE}/pip 2>/dev/null || echo read-only") == (0, "read-only")

    # A package present for the sandbox's python3 (on its PYTHONPATH, as the agent may make one).
    assert _run(sandbox, f"d=$HOME/site; mkdir -p $d/termrl_demo-1.2.3.dist-info && {DEMO_METADATA}; export PYTHONPATH=$d")[0] == 0
    code, said = _run(sandbox, "pip install termrl-demo==1.2.3")
    assert (code, said) == (0, "termrl offline stand-in: pip: already present, nothing fetched: termrl-demo==1.2.3 (present: termrl-demo 1.2.3)")
    assert _run(sandbox, "pip3 install -q 'termrl_demo>=1.2,<2' && uv pip install termrl-demo && uv add 'termrl-demo~=1.2'")[0] == 0
    code, said = _run(sandbox, "pip install 'termrl-demo~=1.3'")
    assert code == 1 and said == "termrl offline stand-in: pip: termrl-demo~=1.3: termrl-demo 1.2.3 is installed here, which does not satisfy ~=1.3"

    code, said = _run(sandbox, f"pip install termrl-demo {ABSENT}==1.0")
    assert (code, said) == (1, f"termrl offline stand-in: pip: the package '{ABSENT}' is not installed here and there is no network to fetch it")

    code, said = _run(sandbox, "apt-get update && apt-get install -y bash coreutils")
    assert (code, said) == (0, "termrl offline stand-in: apt-get: already present, nothing fetched: bash, coreutils")
    code, said = _run(sandbox, "apt-get install -y definitely-not-a-tool")
    assert code == 1 and len(said.splitlines()) == 1 and "'definitely-not-a-tool' is not installed here" in said

    # uvx pytest runs the sandbox's own pytest: there is no trusted one in the agent's sandbox.
    has_pytest = _run(sandbox, "python3 -c 'import pytest' 2>/dev/null")[0] == 0
    code, said = _run(sandbox, "uvx pytest --version")
    if has_pytest:
        assert code == 0 and "pytest" in said
    else:
        assert (code, said) == (1, "termrl offline stand-in: uvx: the package 'pytest' is not installed here and there is no network to fetch it")

    assert sandbox.stood_in() == [
        "pip install: termrl-demo==1.2.3 (present: termrl-demo 1.2.3)",
        "pip3 install: termrl_demo>=1.2,<2 (present: termrl_demo 1.2.3)",
        "uv pip install: termrl-demo (present: termrl-demo 1.2.3)",
        "uv add install: termrl-demo~=1.2 (present: termrl-demo 1.2.3)",
        "pip: refused: termrl-demo~=1.3: termrl-demo 1.2.3 is installed here, which does not satisfy ~=1.3",
        f"pip: refused: the package '{ABSENT}' is not installed here and there is no network to fetch it",
        "apt-get update: nothing done",
        "apt-get install: bash, coreutils",
        "apt-get: refused: the package 'definitely-not-a-tool' is not installed here (no 'definitely-not-a-tool' on PATH) and there is no network to fetch it",
        "uvx: ran pytest" if has_pytest else "uvx: refused: the package 'pytest' is not installed here and there is no network to fetch it",
    ]


def test_an_episode_records_the_installs_of_its_setup_and_its_agent(harness, tmp_path):
    root = write_tiny_task(tmp_path / "suite", "tiny_installs")
    (root / "setup.sh").write_text(
        "set -e\n"
        "d=$(python3 -c 'import site; print(site.getusersitepackages())')\n"
        f"mkdir -p \"$d/termrl_demo-1.2.3.dist-info\"\n{DEMO_METADATA}\n"
        "pip install termrl-demo==1.2.3\n"
    )
    (root / "solution.sh").write_text(
        f"pip install {ABSENT} || echo 'install refused'\napt-get install -y coreutils\necho hello > /home/user/out.txt\n"
    )
    outcome, _, _ = harness.play_fresh(LoadedTask(load_native_task(root), None), ReferenceAgent(), "reference")
    assert outcome.safe_success, outcome.failure_text()
    record = outcome.to_record()
    assert record.stood_in == [
        "setup: pip install: termrl-demo==1.2.3 (present: termrl-demo 1.2.3)",
        f"pip: refused: the package '{ABSENT}' is not installed here and there is no network to fetch it",
        "apt-get install: coreutils",
    ]
    assert EpisodeRecord.from_dict(record.to_dict()).stood_in == record.stood_in
    earlier = {k: v for k, v in record.to_dict().items() if k != "stood_in"}
    assert EpisodeRecord.from_dict(earlier).stood_in == [] and "stood_in" not in EpisodeRecord.from_dict(earlier).extra


@pytest.mark.parametrize("runner", [["uv", "run"], ["uv", "run", "--with", "requests"]])
def test_uv_run_of_a_python_script_runs_it_with_python_executable_or_not(tmp_path, runner):
    """``uv run server.py`` runs the script with Python, as uv does; the file need not be executable."""
    import subprocess
    import sys

    script = tmp_path / "server.py"
    script.write_text("import sys\nprint('ran', sys.argv[1:])\n")
    script.chmod(0o644)
    done = subprocess.run([sys.executable, str(STANDINS), *runner, str(script), "--port", "8000"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "ran ['--port', '8000']"), done.stderr


def test_terminal_benchs_terminal_recorders_are_left_out_not_said_to_be_present(tmp_path):
    """tmux and asciinema, which Terminal-Bench's images install for its own harness: an install of one the host lacks
    succeeds (a Dockerfile's step goes on), and the stand-in says it was left out rather than present."""
    import shutil
    import subprocess
    import sys

    absent = "/nonexistent-bin"  # a PATH on which neither recorder is found, as on a host without them
    done = subprocess.run([sys.executable, str(STANDINS), "apt-get", "install", "-y", "tmux", "asciinema", "bash"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, env={"PATH": f"{absent}:/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    recorders = [name for name in ("tmux", "asciinema") if shutil.which(name, path="/usr/bin:/bin") is None]
    present = ["bash"] + [name for name in ("tmux", "asciinema") if name not in recorders]
    assert "already present, nothing fetched: " + ", ".join(sorted(present, key=["tmux", "asciinema", "bash"].index)) in said
    if recorders:
        assert f"left out: {', '.join(recorders)} (Terminal-Bench's terminal recorder" in said
