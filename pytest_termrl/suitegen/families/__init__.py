"""One module per task family; FAMILIES lists them in a fixed order."""

from __future__ import annotations

import importlib

NAMES = (
    "logfilter",
    "logagg",
    "csvreshape",
    "jsonextract",
    "confedit",
    "tarball",
    "snapshot",
    "permfix",
    "filemove",
    "dedup",
    "textreport",
    "sumverify",
    "schedcheck",
    "gitchores",
    "templating",
    "sqlreport",
)


def load(name: str):
    return importlib.import_module(f"{__name__}.{name}")


def available() -> list[str]:
    """The families whose module exists (all of NAMES in a finished tree)."""
    found = []
    for name in NAMES:
        try:
            load(name)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            continue
        found.append(name)
    return found
