"""The admission command under its documented name: ``python -m pytest_termrl.admission`` (see :mod:`.validity.admission`)."""

import sys

from .validity.admission import main

if __name__ == "__main__":
    sys.exit(main())
