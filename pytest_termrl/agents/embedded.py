"""The embedded model's command under its documented name, ``python -m pytest_termrl.agents.embedded``: it runs :mod:`pytest_termrl.serving.embedded`.

Forwarded by name, so this alias adds no import arrow between the packages.
"""

import runpy

if __name__ == "__main__":
    runpy.run_module("pytest_termrl.serving.embedded", run_name="__main__", alter_sys=True)
