"""This project's episode log read as recorded trials: commands and keystroke batches, the transcript's answers, bad lines."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_termrl.report.record import EpisodeRecord
from pytest_termrl.trajectories.episode_log import read_episode_log

LOG = Path(__file__).resolve().parents[2] / "data" / "trajectories" / "episodes.jsonl"


def test_commands_and_keystroke_batches_with_the_transcript_answers_and_a_skipped_line_per_bad_line():
    trials, skipped = read_episode_log(LOG)
    assert [(t.trial, t.task_name, t.recorded_reward, t.rewards, t.format) for t in trials] == [
        ("count_words-clean-p0_default-0", "count_words", 1.0, {"reward": 1.0}, "episode-log"),
        ("make_config-clean-p0_default-1", "make_config", 0.0, {"reward": 0.25}, "episode-log"),
    ]
    bash, keys = trials
    assert (bash.agent, bash.model, bash.attempt_order) == ("openai", "qwen2.5-7b-instruct", (str(LOG), 0, 1))
    assert bash.instruction == "Count the words in ~/input.txt and write the number alone to ~/count.txt."
    # the answer to the second call of the first turn (never run) is passed over
    assert [(c.step, c.kind, c.command, c.observation) for c in bash.calls] == [
        (1, "bash", "wc -w < ~/input.txt", "9\n[exit code: 0]"),
        (2, "bash", "wc -w < ~/input.txt > ~/count.txt", "[exit code: 0]"),
    ]
    assert [(c.kind, c.keys, c.duration_s, c.command, c.observation) for c in keys.calls] == [
        ("keys", ("python3", "Enter"), 1.0, None, "$ python3\nPython 3.11.2\n>>> "),
        ("keys", ("open('config.ini', 'w').write('[server]\\nport = 80\\n')\n",), 0.5, None,
         ">>> open('config.ini', 'w').write('[server]\\nport = 80\\n')\n24\n>>> "),
        ("keys", ("C-d",), 0.5, None, ">>> \n$ "),
    ]
    assert [s.reason for s in skipped] == [
        f"{LOG}:3: episode fix_server-clean-p0_default-0 is a harness error (sandbox setup failed: setup.sh exited 2); expected a played episode",
        f"{LOG}:4: not a JSON line (Unterminated string starting at); expected one EpisodeRecord (a JSON object with an episode_id) per line",
    ]


def test_a_resumed_episode_keeps_its_last_record_and_a_line_without_an_episode_id_is_skipped(tmp_path):
    log = tmp_path / "episodes.jsonl"
    failed = EpisodeRecord(episode_id="t-clean-p0-0", task_id="t", agent="openai", harness_error="worker crashed")
    played = EpisodeRecord(episode_id="t-clean-p0-0", task_id="t", agent="openai", safe_success=True, reward=1.0,
                           commands=[{"command": "true", "exit_code": 0}, {"oops": 1}])
    lines = [json.dumps(failed.to_dict()), "", json.dumps({"task_id": "t"}), json.dumps(played.to_dict())]
    log.write_text("\n".join(lines) + "\n")
    trials, skipped = read_episode_log(log)
    assert [(t.recorded_reward, t.attempt_order) for t in trials] == [(1.0, (str(log), 0, 4))]
    assert [(c.kind, c.command, c.arguments, c.observation) for c in trials[0].calls] == [
        ("bash", "true", {}, None), ("unknown", None, {"oops": 1}, None)]
    assert [s.reason for s in skipped] == [f"{log}:3: no episode_id; expected one EpisodeRecord (a JSON object with an episode_id) per line"]


def test_an_unreadable_log_is_one_skipped_line(tmp_path):
    log = tmp_path / "episodes.jsonl"
    log.write_bytes(b"\xff\xfe")
    trials, skipped = read_episode_log(log)
    assert trials == [] and len(skipped) == 1 and skipped[0].reason.startswith(f"{log}: unreadable (")
