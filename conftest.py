"""Root conftest: the repository's own suites run with the installed pytest-termrl plugin."""
