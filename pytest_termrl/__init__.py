"""pytest-termrl: every episode of a terminal agent is a pytest test.

The core (tasks, sandbox, oracle, faults, verifier, episode) imports nothing from
pytest; :mod:`pytest_termrl.plugin` is the thin shell that turns it into tests.
"""

__version__ = "0.1.0"
