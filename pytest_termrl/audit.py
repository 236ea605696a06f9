"""The grader audit command under its documented name: ``python -m pytest_termrl.audit`` (see :mod:`.validity.audit`)."""

import sys

from .validity.audit import main

if __name__ == "__main__":
    sys.exit(main())
