"""The admission command under its documented name, ``python -m pytest_termrl.admission``: it runs :mod:`pytest_termrl.validity.admission`.

Forwarded by name, so this alias adds no import arrow between the packages.
"""

import runpy

if __name__ == "__main__":
    runpy.run_module("pytest_termrl.validity.admission", run_name="__main__", alter_sys=True)
