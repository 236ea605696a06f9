"""The embedded model's command under its documented name: ``python -m pytest_termrl.agents.embedded`` (see :mod:`pytest_termrl.serving.embedded`)."""

import sys

from ..serving.embedded import main

if __name__ == "__main__":
    sys.exit(main())
