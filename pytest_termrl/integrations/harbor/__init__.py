"""Harbor on this project's sandbox: ``harbor run -e pytest_termrl.integrations.harbor:TermrlEnvironment``.

``TermrlEnvironment`` is made on first access (:func:`.environment.environment_class`), so
the package imports without Harbor (which needs Python 3.12: ``pip install
'pytest-termrl[harbor]'``); asking for it without Harbor names the extra.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TermrlEnvironment"]


def __getattr__(name: str) -> Any:
    if name != "TermrlEnvironment":
        raise AttributeError(name)
    try:
        from .environment import environment_class  # noqa: PLC0415

        return environment_class()
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "harbor":
            raise ImportError("TermrlEnvironment needs Harbor: pip install 'pytest-termrl[harbor]' (Python >= 3.12)") from exc
        raise
