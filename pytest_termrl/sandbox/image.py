"""The image command under its documented name, ``python -m pytest_termrl.sandbox.image``: it runs :mod:`pytest_termrl.sandbox.docker.images.base`.

Forwarded by name, so this alias adds no import arrow between the packages.
"""

import runpy

if __name__ == "__main__":
    runpy.run_module("pytest_termrl.sandbox.docker.images.base", run_name="__main__", alter_sys=True)
