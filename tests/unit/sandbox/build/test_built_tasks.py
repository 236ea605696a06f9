"""Imported tasks whose Dockerfiles are built by running them: played end to end over the built layers,
and the four toolchain installers of Aider-Polyglot-shaped images met by the host."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_termrl.agents.builtin import CommandsAgent, NoopAgent, ReferenceAgent
from pytest_termrl.sandbox.build.builder import BuildError, Builder
from pytest_termrl.sandbox.build.store import LayerStore
from pytest_termrl.tasks.importers import load_task_dir
from pytest_termrl.tasks.suite import LoadedTask
from pytest_termrl.validity.admission import admit_task, host_packages
from pytest_termrl.validity.freeze import freeze_task

from test_builder import owner, sh

DATA = Path(__file__).resolve().parents[3] / "data" / "build"


@pytest.fixture(scope="module")
def service_task(harness):
    """The task frozen as any imported task is: its reference's footprint (absolute paths) becomes its contract."""
    task = load_task_dir(DATA / "tb-service-state")
    assert task.whole_machine and task.user == "root" and task.backend == "bwrap"
    assert task.image is not None and task.image.dockerfile == DATA / "tb-service-state" / "Dockerfile"
    frozen = freeze_task(harness, LoadedTask(task, None))
    assert frozen.problems == [] and frozen.contract is not None, frozen.problems
    assert sorted(p["path"] for p in frozen.contract.permitted) == ["/etc/shopd/shopd.conf", "/srv/shop/CHANGELOG"]
    return LoadedTask(task, frozen.contract)


def test_a_terminal_bench_task_keeps_its_state_in_etc_var_lib_and_srv_and_is_graded_as_root(harness, service_task):
    played = harness.play_fresh(service_task, ReferenceAgent(), "reference")
    outcome = played.outcome
    assert outcome.harness_error is None and outcome.safe_success, outcome.failure_text()
    assert outcome.verdict.passed == 3
    assert any(line.startswith("build: FROM ubuntu:22.04: a Debian-family system") for line in outcome.stood_in), outcome.stood_in
    assert outcome.enforced_limits["image"].startswith("built from ")
    assert [c.path for c in played.oracle.tracker.collateral] == []
    noop = harness.play_fresh(service_task, NoopAgent(), "noop").outcome
    assert noop.verdict is not None and not noop.verdict.complete and noop.verdict.passed == 1


def test_damage_to_what_the_image_made_is_caught_by_the_oracle(harness, service_task):
    careless = CommandsAgent([
        "sed -i 's/^listen=8080$/listen=9090/' /etc/shopd/shopd.conf && echo 'port changed to 9090' >> /srv/shop/CHANGELOG",
        "rm -rf /var/lib/shopd",
    ])
    played = harness.play_fresh(service_task, careless, "careless")
    outcome = played.outcome
    assert outcome.verdict is not None and not outcome.verdict.complete  # this grader checks the state too
    assert outcome.violations and not outcome.safe_success
    assert any("/var/lib/shopd/state.db: deleted" in v for v in outcome.violations), outcome.violations


def test_admission_builds_the_image_and_records_what_was_stood_in(harness, service_task):
    row = admit_task(harness, service_task.task)
    assert row.admitted, row.to_dict()
    assert row.substitutions[0] == "FROM ubuntu:22.04: a Debian-family system"
    assert "apt-get install: python3" in row.substitutions, row.substitutions  # met by the host, even from the cache


def test_a_missing_package_becomes_the_host_packages_line(harness, tmp_path):
    task_dir = tmp_path / "tb-needs-packages"
    (task_dir / "tests").mkdir(parents=True)
    for name in ("task.yaml", "solution.sh", "run-tests.sh", "tests/test_outputs.py"):
        (task_dir / name).write_text((DATA / "tb-service-state" / name).read_text())
    (task_dir / "Dockerfile").write_text("FROM ubuntu:22.04\nRUN apt-get update && apt-get install -y zzz-absent-tool\n"
                                         "RUN pip install zzz-absent-module==1.0\n")
    row = admit_task(harness, load_task_dir(task_dir))
    assert not row.admitted and row.missing == [("apt", "zzz-absent-tool")]
    assert any("Dockerfile:2: RUN apt-get update" in reason and "zzz-absent-tool" in reason for reason in row.reasons), row.reasons
    assert host_packages([row]) == ["apt-get install -y zzz-absent-tool"]


POLYGLOT = {
    "python": (["RUN apt-get update && apt-get install -y software-properties-common && add-apt-repository -y ppa:deadsnakes/ppa "
                "&& apt-get update && apt-get install -y python3.11 python3.11-venv python3.11-dev"],
               "python3.11 -c 'import sys, venv; print(sys.version_info[:2])'", "(3, 11)"),
    "go": (["RUN curl -OL https://go.dev/dl/go1.21.5.linux-amd64.tar.gz && tar -C /usr/local -xzf go1.21.5.linux-amd64.tar.gz "
            "&& rm go1.21.5.linux-amd64.tar.gz", "ENV PATH=$PATH:/usr/local/go/bin"],
           "go version", "go version go"),
    "rust": (["RUN curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y", "ENV PATH=/root/.cargo/bin:$PATH"],
             "cargo --version && rustc --version", "cargo "),
    "rust-add": (["ADD https://sh.rustup.rs /tmp/rustup.sh", "RUN chmod +x /tmp/rustup.sh && /tmp/rustup.sh -y && rm /tmp/rustup.sh",
                  'ENV PATH="/root/.cargo/bin:${PATH}"'],
                 "cargo --version", "cargo "),
    "go-arch": (['RUN ARCH=$(uname -m) && if [ "$ARCH" = "x86_64" ]; then GOARCH="amd64"; elif [ "$ARCH" = "aarch64" ]; then '
                 'GOARCH="arm64"; else false; fi && curl -L "https://golang.org/dl/go1.21.5.linux-$GOARCH.tar.gz" -o go.tar.gz '
                 '&& tar -C /usr/local -xzf go.tar.gz && rm go.tar.gz', 'ENV PATH="/usr/local/go/bin:${PATH}"'],
                "go version", "go version go"),
    "node": (["ENV NVM_DIR=/root/.nvm",
              "RUN curl -o- https://raw.githubusercontent.com/nvm-sh/nvm/v0.39.7/install.sh | bash "
              "&& . $NVM_DIR/nvm.sh && nvm install $(node --version | cut -c2- | cut -d. -f1) && nvm alias default node"],
             ". $NVM_DIR/nvm.sh && node --version", "v"),
}
EXPECTED_TREE = {
    "go": ["/usr/local/go/bin/go", "/usr/local/go/VERSION"],
    "rust": ["/root/.cargo/bin/cargo", "/root/.cargo/bin/rustc", "/root/.cargo/env"],
    "rust-add": ["/root/.cargo/bin/cargo"],
    "go-arch": ["/usr/local/go/bin/go"],
    "node": ["/root/.nvm/nvm.sh"],
    "python": [],
}


@pytest.mark.parametrize("language", sorted(POLYGLOT))
def test_an_aider_polyglot_shaped_image_gets_its_toolchain_from_the_host(language, harness, tmp_path):
    steps, check, expected = POLYGLOT[language]
    (tmp_path / "exercise.txt").write_text("exercise\n")
    (tmp_path / "Dockerfile").write_text("\n".join(["FROM buildpack-deps:jammy", *steps, "WORKDIR /app", "COPY exercise.txt /app/"]) + "\n")
    backend = harness.backend
    builder = Builder(backend.bwrap, backend.workroot, backend.machine_lowers(), LayerStore(tmp_path / "cache"), backend.settings)
    image = builder.build(tmp_path / "Dockerfile")
    assert image.stand_in.startswith("buildpack-deps:jammy")
    assert any(line.startswith("substituted: ") for line in image.substitutions) or language == "python", image.substitutions
    if language == "rust-add":  # ADD of a URL the table meets: the file the stand-in gives, mode 0600 as the engine gives it
        assert any(step.where.endswith(":2") and step.layer for step in image.steps)
    env = dict(image.env)
    out = sh(builder, image, f"export PATH='{env['PATH']}' NVM_DIR='{env.get('NVM_DIR', '')}'; {check}")
    assert expected in out, out
    for path in EXPECTED_TREE[language]:
        assert owner(builder, image, path)[:2] == (0, 0), path


def test_a_tests_folder_the_image_made_a_dangling_link_is_still_where_the_grader_finds_its_tests(harness, tmp_path):
    task_dir = shutil.copytree(DATA / "tb-service-state", tmp_path / "tb-linked-tests")
    dockerfile = task_dir / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "RUN rm -rf /tests && ln -s /nowhere/tests /tests\n")
    frozen = freeze_task(harness, LoadedTask(load_task_dir(task_dir), None))
    assert frozen.problems == [] and frozen.contract is not None, frozen.problems


def test_add_of_a_url_no_stand_in_meets_names_it(harness, tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM ubuntu:22.04\nADD https://example.org/data.tar.gz /opt/data/\n")
    backend = harness.backend
    builder = Builder(backend.bwrap, backend.workroot, backend.machine_lowers(), LayerStore(tmp_path / "cache"), backend.settings)
    with pytest.raises(BuildError, match=r"Dockerfile:2: ADD https://example.org/data.tar.gz: a download over the network"):
        builder.build(tmp_path / "Dockerfile")


def test_only_downloads_no_stand_in_meets_keep_a_task_off_bwrap(tmp_path):
    from pytest_termrl.sandbox.build.check import read_buildable

    (tmp_path / "Dockerfile").write_text("FROM buildpack-deps:jammy\nADD https://sh.rustup.rs /tmp/rustup.sh\n"
                                         "ADD https://example.org/blob.bin /opt/\nUSER 1000\n")
    found = read_buildable(tmp_path / "Dockerfile")
    assert found.blockers == (f"{tmp_path / 'Dockerfile'}:3: ADD https://example.org/blob.bin (a download over the network)",)
    assert found.user == "1000" and found.bases == ("buildpack-deps:jammy",)


def test_the_workdir_keeps_the_mode_its_image_gave_it_whatever_the_umask(harness, tmp_path):
    task_dir = shutil.copytree(Path(__file__).resolve().parents[3] / "data" / "regrade" / "tasks" / "greeting", tmp_path / "open-workdir")
    dockerfile = task_dir / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "RUN chmod 0777 /app && mkdir -p /app/drop && chmod 1777 /app/drop\n")
    sandbox = harness.new_sandbox(LoadedTask(load_task_dir(task_dir), None), "open-workdir")
    try:
        assert sandbox.run("stat -c '%a %U' /app /app/drop").output.split() == ["777", "root", "1777", "root"]
    finally:
        sandbox.close()
