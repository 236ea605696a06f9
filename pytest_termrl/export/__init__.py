"""Export: a suite's tasks written in other harnesses' formats (Harbor 1.x task directories)."""

from .harbor import export_suite, export_task

__all__ = ["export_suite", "export_task"]
