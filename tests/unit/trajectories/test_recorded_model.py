"""The records round-trip through plain builtins, and a call's kind and a trial's format are their plain strings."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_termrl.trajectories import read_recorded
from pytest_termrl.trajectories.model import CallKind, RecordedCall, RecordedTrial, RecordFormat, Skipped, one_line

DATA = Path(__file__).resolve().parents[2] / "data" / "trajectories"


def _plain(value) -> bool:
    if type(value) is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    if type(value) is list:
        return all(_plain(v) for v in value)
    return value is None or type(value) in (str, int, float, bool)


def test_every_trial_read_from_the_fixtures_round_trips_through_plain_builtins():
    trials = []
    for path in (DATA / "job-demo", DATA / "lone-trajectory.json", DATA / "episodes.jsonl"):
        trials += read_recorded(path)[0]
    assert len(trials) == 8
    for trial in trials:
        data = trial.to_dict()
        assert _plain(data)
        assert RecordedTrial.from_dict(json.loads(json.dumps(data))) == trial


def test_a_call_and_a_skipped_line_round_trip():
    call = RecordedCall(3, "call_1_1", CallKind.KEYS, keys=("C-c",), duration_s=0.5, observation="^C", function_name="bash_command")
    assert call.to_dict()["kind"] == "keys" and type(call.to_dict()["kind"]) is str
    assert RecordedCall.from_dict(call.to_dict()) == call
    skipped = Skipped("a/result.json", "a/result.json: missing; expected it")
    assert Skipped.from_dict(skipped.to_dict()) == skipped and str(skipped) == skipped.reason
    assert RecordFormat("harbor-trial") is RecordFormat.HARBOR_TRIAL


def test_one_line_folds_whitespace_and_cuts():
    assert one_line("Boom:\n  the  disk\tis full\n") == "Boom: the disk is full"
    assert one_line("x" * 400, limit=10) == "xxxxxxx..."
