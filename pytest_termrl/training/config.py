"""Options of the training commands: dataclasses, read from a config file and/or flags.

Each command has one dataclass; every field is also a flag (``max_steps`` ->
``--max-steps``). ``--config FILE`` (TOML or JSON, keys as the field names, optionally
under a ``[sft]`` / ``[grpo]`` table) sets values; flags given on the command line win
over the file, the file over the defaults.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tomllib
import types
import typing
from pathlib import Path


def _base_type(tp):
    """(type, is_list) of a field's annotation: int | None -> int; list[str] -> (str, True)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _base_type(args[0])
    if origin in (list, tuple):
        (inner, *_) = typing.get_args(tp) or (str,)
        return inner, True
    return tp, False


def add_dataclass_arguments(parser: argparse.ArgumentParser, cls) -> None:
    """One flag per field; defaults are None so that 'not given' is visible (the file may set it)."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        flag = flag_of(f)
        tp, is_list = _base_type(hints[f.name])
        helptext = f.metadata.get("help", "")
        default = f.default if f.default is not dataclasses.MISSING else (f.default_factory() if f.default_factory is not dataclasses.MISSING else None)  # type: ignore[misc]
        helptext = f"{helptext} (default: {default!r})" if helptext else f"default: {default!r}"
        if tp is bool:
            parser.add_argument(flag, dest=f.name, default=None, action=argparse.BooleanOptionalAction, help=helptext)
        elif is_list:
            parser.add_argument(flag, dest=f.name, default=None, type=_comma_list(tp), help=helptext + " (comma-separated)")
        else:
            parser.add_argument(flag, dest=f.name, default=None, type=tp if tp in (int, float) else str, help=helptext)


def flag_of(f: dataclasses.Field) -> str:
    """A field's flag: its documented spelling when the metadata names one (``--output-cap`` for ``output_cap_chars``)."""
    return f.metadata.get("flag") or "--" + f.name.replace("_", "-")


def _comma_list(tp):
    def parse(text: str):
        return [tp(part.strip()) for part in text.split(",") if part.strip()]

    return parse


def read_config_file(path: Path | str, section: str) -> dict:
    path = Path(path)
    text = path.read_text()
    data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    if isinstance(data.get(section), dict):
        data = data[section]
    return data


def build_options(cls, namespace: argparse.Namespace, section: str):
    """The dataclass from defaults, then the config file, then the flags given."""
    values: dict = {}
    names = {f.name for f in dataclasses.fields(cls)}
    spelled = {flag_of(f)[2:].replace("-", "_"): f.name for f in dataclasses.fields(cls)}
    config = getattr(namespace, "config", None)
    if config:
        for key, value in read_config_file(config, section).items():
            key = key.replace("-", "_")
            key = spelled.get(key, key)  # a config file may use the flag's spelling too
            if key not in names:
                raise ValueError(f"{config}: unknown option {key!r} for {section}; known: {', '.join(sorted(names))}")
            values[key] = value
    for name in names:
        value = getattr(namespace, name, None)
        if value is not None:
            values[name] = value
    return cls(**values)


def to_dict(options) -> dict:
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in dataclasses.asdict(options).items()}
