"""Dockerfiles read by Docker's own rules: shell-form RUN starting with '[', continuations, heredocs, ARG/ENV.

The planner turns a Dockerfile into files and a setup replayed on bwrap; each rule is
checked on the plan, and the fixture task tests/data/dockerfile_rules/tb-dockerfile-rules
(a Dockerfile that uses all of them, FROM the harness's own base image) is played in real
bwrap sandboxes: its reference passes and its no-op fails, with the environment built as
docker would build it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent
from pytest_termrl.errors import TaskFormatError
from pytest_termrl.harness import default_harness
from pytest_termrl.sandbox.build.parser import parse
from pytest_termrl.sandbox.build.shell_words import expand, expand_words
from pytest_termrl.sandbox.docker.images.client import DEFAULT_TAG
from pytest_termrl.tasks.importers import load_task_dir, offline_status
from pytest_termrl.tasks.importers.dockerfile import is_generic_base, plan_dockerfile, setup_text
from pytest_termrl.tasks.suite import LoadedTask

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "dockerfile_rules" / "tb-dockerfile-rules"


pytestmark = pytest.mark.usefixtures("import_cache")  # imports land in a cache of this run's own


def _plan(tmp_path: Path, text: str):
    (tmp_path / "Dockerfile").write_text(textwrap.dedent(text))
    return plan_dockerfile(tmp_path / "Dockerfile", tmp_path, {"Dockerfile"})


def test_a_run_that_is_not_a_json_array_is_shell_form(tmp_path):
    plan = _plan(tmp_path, """\
        FROM debian:12
        RUN [ ! -e /usr/bin/python ] && ln -s /usr/bin/python3 /usr/local/bin/python-link || true
        RUN ["echo", "exec form"]
        RUN ["echo", "unclosed"
    """)
    assert plan.setup == [
        "cd / && [ ! -e /usr/bin/python ] && ln -s /usr/bin/python3 /usr/local/bin/python-link || true",
        "cd / && echo 'exec form'",
        'cd / && ["echo", "unclosed"',
    ]
    # A JSON array that holds a non-string is refused by BuildKit, not read as shell form.
    with pytest.raises(TaskFormatError, match=r"Dockerfile:2: field 'RUN': a JSON array of strings only"):
        _plan(tmp_path, 'FROM debian:12\nRUN ["echo", 3]\n')


def test_continuations_drop_comments_and_blank_lines_inside_them():
    found = parse("FROM debian:12\nRUN echo a \\\n  # not part of it\n\n  && echo b\n# a comment\nWORKDIR /app\n").instructions
    assert [(i.lineno, i.keyword, i.args) for i in found] == [(1, "FROM", "debian:12"), (2, "RUN", "echo a   && echo b"), (7, "WORKDIR", "/app")]
    backtick = parse("# escape=`\nFROM debian:12\nRUN echo a `\n  b\n").instructions
    assert backtick[1].args == "echo a   b"


def test_heredocs_are_the_bodies_of_run_and_copy(tmp_path):
    plan = _plan(tmp_path, """\
        FROM debian:12
        WORKDIR /app
        RUN <<EOF
        echo one > one.txt
        echo two >> one.txt
        EOF
        RUN <<'PY'
        #!/usr/bin/env python3
        print("from python")
        PY
        RUN cat <<-EOT > notes.txt
        \tindented
        \tEOT
        ENV NAME=termrl
        COPY <<EOF /app/conf/app.ini
        name=${NAME}
        EOF
        COPY <<'EOF' /app/raw.txt
        name=${NAME}
        EOF
    """)
    assert plan.setup == [
        "cd /app && sh <<'EOF'\necho one > one.txt\necho two >> one.txt\nEOF",
        "cd /app && /usr/bin/env python3 <<'PY'\n#!/usr/bin/env python3\nprint(\"from python\")\nPY",
        "cd /app && cat <<-EOT > notes.txt\nindented\nEOT",
    ]
    assert dict(plan.inline_files) == {"conf/app.ini": b"name=termrl\n", "raw.txt": b"name=${NAME}\n"}
    script = setup_text(plan, "x")
    assert "( cd /app && sh <<'EOF'\necho one > one.txt\necho two >> one.txt\nEOF\n)" in script


def test_a_heredoc_body_with_from_lines_is_no_second_stage(tmp_path):
    # `<< 'EOF'` (a space after <<) is a heredoc under BuildKit 0.22 and later: its body, FROM line
    # included, belongs to the RUN step, so the image is one stage.
    plan = _plan(tmp_path, """\
        FROM debian:12
        WORKDIR /home/user/app
        RUN cat > /home/user/app/x.py << 'EOF'
        from datetime import datetime
        FROM ubuntu
        EOF
    """)
    assert plan.bases == ["debian:12"]
    assert not any("multi-stage" in blocker for blocker in plan.blockers), plan.blockers
    assert plan.setup == [
        "cd /home/user/app && cat > /home/user/app/x.py << 'EOF'\nfrom datetime import datetime\nFROM ubuntu\nEOF"
    ]


def test_arg_and_env_substitution_follows_docker(tmp_path):
    (tmp_path / "payload").mkdir()
    (tmp_path / "payload" / "in.txt").write_text("x\n")
    plan = _plan(tmp_path, """\
        ARG TAG=12
        FROM debian:${TAG}
        ARG TAG
        ARG SRC=payload
        ENV ROOT=/srv OTHER=$ROOT
        ENV ROOT2=${ROOT}/app LABEL='$ROOT' FALLBACK=${UNSET:-fallback} ALT=${ROOT:+set} EMPTY=${UNSET:+set}
        WORKDIR ${ROOT2}
        COPY ${SRC}/in.txt ./
        RUN echo "$SRC" > from-arg.txt
    """)
    assert plan.bases == ["debian:12"] and plan.workdir == "/srv/app"
    assert plan.env == {"ROOT": "/srv", "OTHER": "", "ROOT2": "/srv/app", "LABEL": "$ROOT", "FALLBACK": "fallback", "ALT": "set", "EMPTY": ""}
    assert [rel for _, rel in plan.copies] == ["in.txt"]
    assert plan.args == {"TAG": "12", "SRC": "payload"}
    assert "export SRC=payload" in setup_text(plan, "x")


def test_an_env_that_extends_path_starts_from_the_base_images_path(tmp_path):
    """``ENV PATH=/app/bin:${PATH}`` keeps the image's PATH after it, as the engine expands it from the base's config."""
    plan = _plan(tmp_path, """\
        FROM debian:12
        ENV PATH="/app/bin:${PATH}" OTHER=${PATH}
        ENV PATH=/opt/tool/bin:$PATH
    """)
    base = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    assert plan.env == {"PATH": f"/opt/tool/bin:/app/bin:{base}", "OTHER": base}


def test_the_word_lexer():
    env = {"A": "x y"}
    assert expand_words('KEY="$A" B=\'$A\' C=\\$A', env) == ["KEY=x y", "B=$A", "C=$A"]
    assert expand("${A-none} ${B-none} ${B:-d}", env) == "x y none d"


def test_from_the_harness_base_image_stays_on_bwrap(tmp_path):
    assert is_generic_base(DEFAULT_TAG) and is_generic_base("termrl-base:7") and not is_generic_base("termrl-other:1")
    plan = _plan(tmp_path, f"FROM {DEFAULT_TAG}\nWORKDIR /app\n")
    assert plan.blockers == []


def test_the_fixture_task_plans_onto_bwrap():
    task = load_task_dir(FIXTURE)
    assert (task.backend, offline_status(task)) == ("bwrap", ("yes", []))
    assert task.image.base_images == ("termrl-base:1",)
    assert dict(task.image.env) == {"APP_HOME": "/app", "GREETING": "hello world"}


def test_the_fixture_task_reference_passes_and_noop_fails():
    harness = default_harness()
    loaded = LoadedTask(load_task_dir(FIXTURE), None)
    reference, _, _ = harness.play_fresh(loaded, ReferenceAgent(), "reference")
    assert reference.verdict.complete and reference.safe_success, reference.failure_text()
    noop, _, _ = harness.play_fresh(loaded, NoopAgent(), "noop")
    outcomes = {o.nodeid.rsplit("::", 1)[1]: o.outcome for o in noop.verdict.outcomes}
    assert outcomes == {"test_the_image_was_planned_as_docker_builds_it": "passed", "test_total": "failed"}
