"""Hooks other plugins (and conftest files) implement to extend pytest-termrl."""

import pluggy

hookspec = pluggy.HookspecMarker("pytest")

class TermrlHookSpecs:
    @hookspec(firstresult=True)
    def pytest_termrl_make_sandbox(self, config, name, settings, workroot):
        """Return a SandboxBackend for the run (``name`` is --termrl-sandbox), or None to defer."""

    @hookspec(firstresult=True)
    def pytest_termrl_make_agent(self, config, spec, task):
        """Return the Agent that plays this episode, or None to defer to --termrl-agent."""

    @hookspec
    def pytest_termrl_episode_done(self, config, record):
        """Called on the process that ran an episode, with its record (a dict), once it is graded."""

    @hookspec
    def pytest_termrl_modify_report(self, config, summary):
        """Called on the controller before the JSON summary is written; may edit it in place."""
