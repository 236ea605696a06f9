"""The default backend, bubblewrap: the backend and its sandboxes, spare processes started ahead, mounts.

Nothing is imported here: the backend table in :mod:`pytest_termrl.sandbox` loads
:mod:`.backend` when bwrap is chosen.
"""
