"""Offline stand-ins for installers (pip, uv, uvx, apt-get, uv's curl installer) and the rules they follow.

The tools and their rules live once, in :mod:`.inside.tools`, which runs inside sandboxes
(the agent's, through :mod:`pytest_termrl.sandbox.standin_shims`, and the verifier's,
through its script runner) and is read as a module by the importer's static check
(:mod:`pytest_termrl.tasks.importers.standin_check`).
"""
