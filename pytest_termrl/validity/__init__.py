"""Validity work on tasks, free of pytest: freeze, self-check, grader audit, admission of imports, accidents."""
