"""The conformance suite every sandbox backend must pass, shipped as pytest tests.

Run it for a backend by name::

    pytest --pyargs pytest_termrl.sandbox.conformance --termrl-sandbox=NAME

The backend under test is the one a run with ``--termrl-sandbox=NAME`` gets: a
``pytest_termrl_make_sandbox`` hook (a plugin's, or a conftest's in the folder pytest is
started from) first, then the registry (:func:`pytest_termrl.sandbox.make_backend`).

One job per module:

- :mod:`.fixtures`: the backend under test and the sandboxes made from it, all closed at the end;
- :mod:`.host`: the host's view of a sandbox's processes;
- :mod:`.tasks`: the task suites the verifier's tests play (those of a source checkout);
- :mod:`.scripts`: shell scripts written in tests;
- :mod:`.test_isolation`: no network, no writes or reads outside the home, no host processes,
  limits, nothing left after the episode, snapshots;
- :mod:`.test_shell`: the persistent shell: state, timeouts, restarts, odd input and output;
- :mod:`.test_terminal`: the terminal session of a backend that has one: keys in, the screen out;
- :mod:`.test_exec`: one-shot processes beside the shell in a whole-machine sandbox, of a backend that runs them;
- :mod:`.test_verifier`: hidden tests in a fresh sandbox whose results the agent cannot forge;
- :mod:`.test_verifier_hardening`: code the hidden tests run cannot reach the verifier's key or channel.

A project that tests several backends collects these modules in its own test files
(``from pytest_termrl.sandbox.conformance.test_shell import *``) and overrides the
``termrl_backend_factory`` fixture there, as this project's tests/ does.
"""
