"""What the Inspect provider decides without a sandbox: exit codes and exceptions, the command a finding names,
config forms, and a suite folder read as Inspect samples."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.util import OutputLimitExceededError

from pytest_termrl.integrations.inspect.config import BARE_ID, TermrlConfig, resolve
from pytest_termrl.integrations.inspect.outcomes import exit_code, file_error, to_inspect
from pytest_termrl.integrations.inspect.provider import command_text
from pytest_termrl.integrations.inspect.suite_task import suite_samples
from pytest_termrl.sandbox.base import ExecResult

ROOT = Path(__file__).resolve().parents[3]
CORE = ROOT / "task_suites" / "core"


def test_a_death_by_signal_reads_as_a_shell_reports_it():
    assert [exit_code(c) for c in (0, 70, -15, -9, None)] == [0, 70, 143, 137, 137]


def test_each_outcome_inspect_tells_apart_is_its_own_exception():
    with pytest.raises(TimeoutError, match="after 2 seconds") as timed:
        to_inspect(ExecResult(None, b"partial", b"", timed_out=True), ["sleep", "4"], 2)
    assert getattr(timed.value, "truncated_output") == "partial"
    with pytest.raises(OutputLimitExceededError, match="limit of 10 MiB was exceeded"):
        to_inspect(ExecResult(0, b"x" * 10, b"", truncated=True), ["yes"], None)
    with pytest.raises(PermissionError):
        to_inspect(ExecResult(126, b"", b"setpriv: failed to execute /etc/passwd: Permission denied\n"), ["/etc/passwd"], None)
    # a shell's own 126 (a script it could not run) is the command's failure, not the exec's
    done = to_inspect(ExecResult(126, b"", b"bash: ./x.sh: Permission denied\n"), ["bash", "-c", "./x.sh"], None)
    assert (done.success, done.returncode) == (False, 126)
    done = to_inspect(ExecResult(0, "café".encode() + b"\xff", b""), ["cat"], None)
    assert done.success and done.stdout == "café\ufffd"


def test_file_errors_carry_the_path_and_the_kind_inspect_expects():
    assert isinstance(file_error(2, "", "nonexistent"), FileNotFoundError)
    assert "nonexistent" in str(file_error(2, "", "nonexistent"))
    assert isinstance(file_error(13, "", "f"), PermissionError)
    assert "directory" in str(file_error(21, "", "/etc"))
    assert isinstance(file_error(27, "", "big"), OutputLimitExceededError)
    assert isinstance(file_error(1, "sh: cannot create x: Permission denied", "x"), PermissionError)


def test_a_finding_names_the_script_of_the_bash_tools_call_else_the_argv():
    assert command_text(["bash", "--login", "-c", "rm -rf ~/downloads"]) == "rm -rf ~/downloads"
    assert command_text(["sh", "-c", "echo hi"]) == "echo hi"
    assert command_text(["rm", "-f", "a file"]) == "rm -f 'a file'"
    assert command_text(["bash", "script.sh", "-c", "x"]) == "bash script.sh -c x"


def test_config_forms(tmp_path):
    assert resolve(None).source is None and resolve(None).load().task.id == BARE_ID
    assert resolve(str(CORE / "checksum_verify" / "task.toml")).source == CORE / "checksum_verify"
    model = resolve(TermrlConfig(source=str(CORE / "checksum_verify"), backend="docker", user="root"))
    assert (model.backend, model.user) == ("docker", "root")
    assert resolve({"source": str(CORE / "checksum_verify")}).load().contract is not None
    (tmp_path / "compose.yaml").write_text("services: {}\n")
    with pytest.raises(ValueError, match="reads no compose file"):
        resolve(str(tmp_path / "compose.yaml"))
    with pytest.raises(ValueError, match="TermrlConfig"):
        resolve(42)


def test_a_suite_is_one_sample_per_task_its_folder_the_sandbox_config():
    samples = suite_samples(CORE, "log_error_counts, checksum_verify")
    assert [s.id for s in samples] == ["checksum_verify", "log_error_counts"]
    first = samples[0]
    assert first.sandbox is not None and (first.sandbox.type, first.sandbox.config) == ("termrl", str(CORE / "checksum_verify"))
    assert isinstance(first.input, str) and "SHA256SUMS" in first.input
    assert {s.id for s in suite_samples(CORE, split="test")} < {s.id for s in suite_samples(CORE)}
    with pytest.raises(ValueError, match="no task nonesuch"):
        suite_samples(CORE, "nonesuch")


def test_a_folder_of_imported_tasks_without_contracts_is_a_suite_too():
    folder = ROOT / "tests" / "data" / "regrade" / "tasks"
    [sample] = suite_samples(folder)
    assert sample.id == "greeting" and sample.sandbox is not None and sample.sandbox.config == str(folder / "greeting")
