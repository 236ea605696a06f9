"""The verifier: the shipped attack, inventory and forgery tests (pytest_termrl.sandbox.conformance.test_verifier),
run here for every backend the project has (tests/conftest.py parametrises them: bwrap,
docker-local, docker-remote), and the result channel's MAC check, which involves no backend.
"""

from __future__ import annotations

import json
import secrets

from pytest_termrl.sandbox.conformance.test_verifier import *  # noqa: F401,F403  (the tests and their fixtures)
from pytest_termrl.sandbox.conformance.test_verifier import signed_payload
from pytest_termrl.verifier.inside.channel import authenticated_body

from conftest import termrl_backend_factory  # noqa: F401  (the project's backends, not --termrl-sandbox's)


def test_authenticated_body_accepts_only_the_right_mac():
    key = secrets.token_bytes(32)
    body = {"exit_code": 0, "outcomes": {"test_outputs.py::test_a": "passed"}, "collected": ["test_outputs.py::test_a"]}
    assert authenticated_body(signed_payload(body, key), key) == body
    # Wrong key, wrong MAC, a MAC of the wrong type, a tampered body, garbage: all rejected.
    assert authenticated_body(signed_payload(body, secrets.token_bytes(32)), key) is None
    assert authenticated_body(signed_payload(body, key, mac="0" * 64), key) is None
    assert authenticated_body(signed_payload(body, key, mac=""), key) is None
    good = json.loads(signed_payload(body, key))
    assert authenticated_body(json.dumps({"body": good["body"], "mac": 12345}).encode(), key) is None
    tampered = dict(good, body=good["body"].replace("passed", "failed"))
    assert authenticated_body(json.dumps(tampered).encode(), key) is None
    assert authenticated_body(b"", key) is None
    assert authenticated_body(b"\xff\xfe not json", key) is None
    assert authenticated_body(b'{"body": "{}"}', key) is None
    assert authenticated_body(b"[1, 2]", key) is None
