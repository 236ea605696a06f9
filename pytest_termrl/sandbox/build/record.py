"""What a build leaves: the image (its layers and its configuration) and a log of each step, typed once."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields


@dataclass(frozen=True)
class StepLog:
    """One step of a build: where, what, whether the cache had it, how long, how it ended."""

    where: str
    step: str
    cached: bool
    seconds: float
    exit_code: int | None = 0
    output: str = ""
    layer: str | None = None
    """The key of the layer it made (None: a step that changes only the configuration)."""

    def line(self) -> str:
        state = "CACHED" if self.cached else f"{self.seconds:.2f}s"
        return f"{self.where}: {self.step} [{state}]"


@dataclass(frozen=True)
class BuiltImage:
    """A Dockerfile built by running it: its layers (keys, bottom first) over the host standing in for its base."""

    key: str
    dockerfile: str
    base: str
    """The image the final stage starts FROM (through other stages), as written."""
    stand_in: str
    """What the host stood in for: '<image>: <what the host is>'."""
    layers: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    user: str = ""
    workdir: str = "/"
    shell: tuple[str, ...] = ("/bin/sh", "-c")
    cmd: tuple[str, ...] | None = None
    entrypoint: tuple[str, ...] | None = None
    labels: tuple[tuple[str, str], ...] = ()
    exposed: tuple[str, ...] = ()
    volumes: tuple[str, ...] = ()
    stopsignal: str | None = None
    substitutions: tuple[str, ...] = ()
    """Every offline stand-in's substitution and install met by the host, as the stand-ins logged them."""
    notes: tuple[str, ...] = ()
    """What the builder did differently from the engine (a cache mount run without its cache...)."""
    steps: tuple[StepLog, ...] = field(default=(), compare=False)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "BuiltImage":
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for name in ("layers", "exposed", "volumes", "substitutions", "notes", "shell"):
            values[name] = tuple(values.get(name, ()))
        for name in ("env", "labels"):
            values[name] = tuple(tuple(pair) for pair in values.get(name, ()))
        for name in ("cmd", "entrypoint"):
            values[name] = tuple(values[name]) if values.get(name) is not None else None
        values["steps"] = tuple(StepLog(**step) for step in values.get("steps", ()))
        return cls(**values)

    def log_text(self) -> str:
        return "\n".join(step.line() for step in self.steps) + "\n"
