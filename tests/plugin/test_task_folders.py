"""Task folders are data: their own test files are never imported as the run's tests, and the run says how to play them."""

import shutil

from conftest import write_tiny_task

REGRADE = __import__("pathlib").Path(__file__).resolve().parents[1] / "data" / "regrade"


def _poisoned(task_dir):
    """A task test file that fails loudly if anything imports it in the harness's process."""
    (task_dir / "tests" / "test_outputs.py").write_text("raise SystemExit('imported in the harness process')\n")


def test_a_folder_of_harbor_tasks_without_a_contract_collects_nothing_and_says_how_to_play(tp):
    tasks = tp.path / "tasks"
    shutil.copytree(REGRADE / "tasks" / "greeting", tasks / "greeting")
    write_tiny_task(tasks, "tiny")
    _poisoned(tasks / "greeting")
    _poisoned(tasks / "tiny")
    for args in (("tasks",), ("tasks", "-n", "2"), ("tasks/greeting",)):
        result = tp.run(*args)
        assert "imported in the harness process" not in result.stdout.str() + result.stderr.str()
        result.assert_outcomes()
        if args[0] == "tasks/greeting":  # a task itself: the advice names the folder that holds it
            result.stdout.fnmatch_lines(["pytest-termrl: */tasks/greeting is a task, which plays from the folder that holds it: "
                                         "freeze that into a suite with `pytest */tasks --termrl-freeze` (-k greeting*"])
        else:
            result.stdout.fnmatch_lines([f"pytest-termrl: */{args[0]} holds 2 task folder(s) without contracts.jsonl: none was collected*--termrl-freeze*"])


def test_a_task_test_file_named_on_the_command_line_is_refused_by_name(tp):
    tasks = tp.path / "tasks"
    write_tiny_task(tasks, "tiny")
    _poisoned(tasks / "tiny")
    result = tp.run("tasks/tiny/tests/test_outputs.py")
    assert "imported in the harness process" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*tasks/tiny/tests/test_outputs.py belongs to the task at */tasks/tiny: a task's hidden tests run in its grader's sandbox*"])
    assert result.ret != 0


def test_the_projects_own_tests_beside_task_folders_still_run(tp):
    write_tiny_task(tp.path / "tasks", "tiny")
    tp.pytester.makepyfile(test_mine="def test_ok():\n    assert 1 + 1 == 2\n")
    result = tp.run("test_mine.py", "tasks")
    result.assert_outcomes(passed=1)


def test_a_folder_that_gave_tests_of_its_own_gets_no_hint_about_the_task_folders_it_holds(tp):
    write_tiny_task(tp.path / "tests" / "data", "tiny")
    (tp.path / "tests" / "test_mine.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    for extra in ((), ("-n", "2")):
        result = tp.run("tests", *extra)
        result.assert_outcomes(passed=1)
        assert "without contracts.jsonl" not in result.stdout.str()


def test_a_folder_of_terminal_bench_tasks_is_frozen_into_a_suite(tp):
    """Terminal-Bench task folders (task.yaml) make a new suite under --termrl-freeze, as Harbor's and native ones do."""
    shutil.copytree(REGRADE.parent / "tb_graders" / "tb-underscore-tests", tp.path / "tb" / "tb-underscore-tests")
    result = tp.run("tb", "--termrl-freeze", timeout=300)
    result.stdout.fnmatch_lines(["1 of 1 task(s) frozen"])
    assert [line for line in (tp.path / "tb" / "contracts.jsonl").read_text().splitlines() if line.strip()]


def test_a_task_whose_image_the_host_cannot_stand_in_for_is_refused_on_bwrap_by_name_at_collection(tp):
    """Its Dockerfile's steps are never replayed as the agent's user in its stead: the run names the image and the
    backend that runs it, and plays the rest."""
    tasks = tp.path / "tasks"
    shutil.copytree(REGRADE / "tasks" / "greeting", tasks / "greeting")
    shutil.copytree(REGRADE / "tasks" / "greeting", tasks / "gopher")
    dockerfile = tasks / "gopher" / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("FROM ubuntu:24.04", "FROM golang:1.22", 1))
    result = tp.run("tasks", "--termrl-freeze", timeout=300)
    result.stdout.fnmatch_lines(["gopher: needs its docker image (*Dockerfile:1: FROM golang:1.22 (a base image the host cannot "
                                 "stand in for)); the bwrap backend stands the host in for a task's image, and cannot for this "
                                 "one: run it with --termrl-sandbox=docker"])
    result.assert_outcomes(failed=1, errors=1)  # greeting is tried (it has no reference to freeze), gopher is not
    assert "test_freeze[greeting]" in result.stdout.str() and "test_freeze[gopher]" not in result.stdout.str()
