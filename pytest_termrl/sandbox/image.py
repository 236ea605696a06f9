"""The image command under its documented name: ``python -m pytest_termrl.sandbox.image`` (see :mod:`.docker.images.base`)."""

import sys

from .docker.images.base import main

if __name__ == "__main__":
    sys.exit(main())
