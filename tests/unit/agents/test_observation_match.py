"""What a replay's output must share with the recorded observation, once what always differs is taken out."""

from pytest_termrl.agents.observation_match import DIVERGENCE_BELOW, normalise, similarity


def test_prompts_hosts_colours_and_framing_are_taken_out():
    recorded = "New Terminal Output:\n\nroot@4f2a9c1b7d3e:/app# ls\n\x1b[01;34mdata\x1b[0m  notes.txt\nroot@4f2a9c1b7d3e:/app# "
    assert normalise(recorded) == ["ls", "data notes.txt"]


def test_timings_dates_and_ids_do_not_count():
    recorded = "real\t0m0.004s\nbuilt 2025-11-02T10:11:12 in 3.2 s\ncontainer 4f2a9c1b7d3e0011 up"
    replayed = "real\t0m0.019s\nbuilt 2026-12-05T07:00:00 in 0.4 s\ncontainer 9e9e9e9e9e9e0000 up"
    assert similarity(recorded, replayed) == 1.0


def test_a_screen_that_shows_more_still_matches():
    recorded = "Current Terminal Screen:\n>>> 1+1\n2\n>>> "
    replayed = "user@sandbox:~$ python3\nPython 3.11.7\n>>> 1+1\n2\n>>>"
    assert similarity(recorded, replayed) == 1.0


def test_other_output_is_a_divergence():
    recorded = "total 8\n-rw-r--r-- 1 root root 13 greeting.txt\n-rw-r--r-- 1 root root 18 notes.txt"
    replayed = "ls: cannot access '/app': No such file or directory"
    assert similarity(recorded, replayed) < DIVERGENCE_BELOW


def test_nothing_recorded_is_nothing_to_diverge_from():
    assert similarity("", "anything at all") == 1.0
    assert similarity("[exit code: 0]\n", "") == 1.0


def test_terminus_framing_and_the_file_systems_folder_sizes_do_not_count():
    recorded = ("Previous response had warnings:\nWARNINGS: - Extra text detected before JSON object\n- Extra text detected after JSON object\n\n"
                "New Terminal Output:\n\nroot@4e36d1e7dfe7:/home/user# ls -la /srv\ntotal 20\ndrwxrwxrwx 1 root root 4096 Apr 14 21:49 .\n"
                "-rw-r--r-- 1 root root   49 Apr 14 21:49 database.py\nroot@4e36d1e7dfe7:/home/user#\n\n\n"
                "Are you sure you want to mark the task as complete? This will trigger your solution to be graded.")
    replayed = ("root@sandbox:/home/user# ls -la /srv\ntotal 8\ndrwxrwxrwx 3 root root  120 Dec  5 06:46 .\n"
                "-rw-r--r-- 1 root root   49 Dec  5 06:46 database.py\nroot@sandbox:/home/user#")
    assert similarity(recorded, replayed) == 1.0
    assert similarity(recorded, replayed.replace("database.py", "db.py")) < 1.0
