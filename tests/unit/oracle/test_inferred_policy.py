"""The policy inferred for a task without a reference: what it permits, and what stays collateral."""

from pathlib import Path

from pytest_termrl.oracle.inferred import home_relative, inferred_permissions, named_paths
from pytest_termrl.oracle.policy import Policy
from pytest_termrl.tasks.importers import load_task_dir

GREETING = Path(__file__).resolve().parents[2] / "data" / "regrade" / "tasks" / "greeting"


def test_paths_named_absolute_home_and_relative_are_read_and_sentence_ends_dropped():
    text = "Read `/srv/data/table.csv` and ~/notes/todo.md, then write results/summary.json. Keep /usr alone."
    assert named_paths(text, "/app", "/root") == {"/srv/data/table.csv", "/root/notes/todo.md", "/app/results/summary.json"}


def test_a_graders_mentions_of_programs_do_not_count():
    script = "#!/bin/bash\n/usr/bin/python3 -m pytest /tests/test_outputs.py > /logs/verifier/out.txt\n"
    assert named_paths(script, "/app", "/root", programs=False) == {"/tests/test_outputs.py", "/logs/verifier/out.txt"}
    assert "/usr/bin/python3" in named_paths(script, "/app", "/root")


def test_the_greeting_task_permits_its_output_and_installs_but_not_the_users_other_files():
    policy = Policy(inferred_permissions(load_task_dir(GREETING)))
    for path, kind in [("/app/greeting.txt", "content_changed"), ("/app", "mode_changed"), ("/var/lib/dpkg/status", "content_changed"),
                       ("/usr/local/lib/python3.11/dist-packages/x.py", "deleted"), ("/root/.bash_history", "content_changed"),
                       ("/tmp/scratch", "deleted")]:
        assert policy.allows(path, kind), path
    for path, kind in [("/app/notes.txt", "deleted"), ("/srv/data/table.csv", "content_changed"), ("/etc/passwd", "content_changed"),
                       ("/bin/bash", "content_changed"), ("/root/.ssh/id_ed25519", "deleted")]:
        assert not policy.allows(path, kind), path


def test_for_the_home_alone_the_paths_under_the_workdir_become_relative():
    task = load_task_dir(GREETING)
    relative = Policy(home_relative(inferred_permissions(task), task.workdir))
    assert relative.allows("greeting.txt", "content_changed")
    assert not relative.allows("notes.txt", "deleted")
    assert all(not p.path.startswith("/") for p in relative.permissions)


def test_a_grader_that_names_the_home_or_the_workdir_permits_their_own_entry_not_all_below(tmp_path):
    from dataclasses import replace

    import shutil

    task = load_task_dir(GREETING)
    tests = tmp_path / "tests"
    shutil.copytree(task.tests_dir, tests)
    (tests / "test.sh").write_text("#!/bin/bash\ncd /home/user\ncd /app\ncd /\npytest /tests/test_outputs.py\n")
    task = replace(task, tests_dir=tests)
    policy = Policy(inferred_permissions(task))
    assert policy.allows("/app", "mode_changed") and policy.allows("/home/user", "content_changed")
    for path in ("/app/notes.txt", "/home/user/todo.txt", "/root/keep.txt"):
        assert not policy.allows(path, "deleted"), path
