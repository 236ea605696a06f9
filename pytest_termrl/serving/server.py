"""Start, wait for and stop an OpenAI-compatible model server (vLLM, llama.cpp, or any command).

The harness owns the server's whole life: it runs in its own process group with its
output in a log file, start() returns only when the server answers and lists the model,
and stop() (also run at exit and after an interrupt) leaves no process behind.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Sequence

from pytest_termrl.errors import TermrlError

KINDS = ("vllm", "llamacpp", "command")


class ServerStartError(TermrlError):
    """The server exited or did not become ready; the message ends with its log tail."""


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now (the server binds it moments later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _option_value(args: Sequence[str], *names: str) -> str | None:
    """The value of ``--name V`` or ``--name=V`` in an argument list (last one wins)."""
    value = None
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                value = args[i + 1]
            elif arg.startswith(name + "="):
                value = arg.split("=", 1)[1]
    return value


class ManagedServer:
    """One model server process, started by :meth:`start` and ended by :meth:`stop`.

    ``start_command`` replaces the built-in command line (required for ``kind='command'``);
    ``{host}``, ``{port}`` and ``{model}`` in its arguments are filled in.
    """

    def __init__(
        self,
        kind: str,
        model: str,
        extra_args: Sequence[str] = (),
        host: str = "127.0.0.1",
        port: int | None = None,
        log_path: Path | str | None = None,
        start_command: Sequence[str] | None = None,
        health_timeout_s: float = 900.0,
        stop_grace_s: float = 15.0,
        env: dict[str, str] | None = None,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown server kind {kind!r}; expected one of {', '.join(KINDS)}")
        if kind == "command" and not start_command:
            raise ValueError("a server of kind 'command' needs start_command")
        self.kind = kind
        self.model = model
        self.extra_args = list(extra_args)
        self.host = host
        self.port = port or free_port(host)
        self.log_path = Path(log_path) if log_path else Path(
            tempfile.gettempdir()) / f"termrl-{kind}-server-{self.port}.log"
        self.start_command = list(start_command) if start_command else None
        self.health_timeout_s = health_timeout_s
        self.stop_grace_s = stop_grace_s
        self.env = env
        self.process: subprocess.Popen | None = None

    # -- what to run and what to expect -----------------------------------------------------

    @property
    def connect_host(self) -> str:
        """Where clients connect: a wildcard bind address is reached through loopback."""
        return "127.0.0.1" if self.host in ("0.0.0.0", "", "::") else self.host

    @property
    def base_url(self) -> str:
        return f"http://{self.connect_host}:{self.port}/v1"

    @property
    def model_id(self) -> str:
        """The name the server lists and clients must send (an alias if one was given)."""
        alias = _option_value(
            self.extra_args, "--served-model-name", "--model_alias", "--model-alias"
        )
        return alias or self.model

    def command(self) -> list[str]:
        if self.start_command:
            fill = {"{host}": self.host, "{port}": str(self.port), "{model}": self.model}
            out = []
            for arg in self.start_command:
                for key, value in fill.items():
                    arg = arg.replace(key, value)
                out.append(arg)
            return out
        if self.kind == "vllm":
            vllm = Path(sys.executable).with_name("vllm")
            exe = str(vllm) if vllm.exists() else (shutil.which("vllm") or "vllm")
            return [exe, "serve", self.model, "--host", self.host, "--port", str(self.port),
                    "--enable-auto-tool-choice", "--tool-call-parser", "hermes", *self.extra_args]
        return [sys.executable, "-m", "llama_cpp.server", "--model", self.model,
                "--host", self.host, "--port", str(self.port),
                "--chat_format", "chatml-function-calling", *self.extra_args]

    def readiness_paths(self) -> list[str]:
        """llama_cpp.server has no /health, so there /v1/models alone says it is ready."""
        return ["/v1/models"] if self.kind == "llamacpp" else ["/health", "/v1/models"]

    # -- life cycle ---------------------------------------------------------------------------

    def start(self) -> "ManagedServer":
        """Launch the server and return once it is ready; raise ServerStartError otherwise."""
        if self.process is not None and self.process.poll() is None:
            return self
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        cmd = self.command()
        with open(self.log_path, "ab") as log:
            log.write(f"$ {' '.join(cmd)}\n".encode())
            log.flush()
            try:
                self.process = subprocess.Popen(
                    cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    start_new_session=True, env=self.env,
                )
            except OSError as exc:
                raise ServerStartError(f"could not launch {cmd[0]!r}: {exc}") from exc
        atexit.register(self.stop)
        try:
            self.wait_ready()
        except BaseException:  # a deadline, an early exit, or Ctrl-C: leave nothing running
            self.stop()
            raise
        return self

    def wait_ready(self) -> None:
        """Poll until ready; every probe and pause ends by the deadline (``health_timeout_s``),
        so a server that accepts connections and never answers cannot hold the run longer."""
        deadline = time.monotonic() + self.health_timeout_s
        last = "no answer yet"
        while True:
            code = self.process.poll() if self.process else None
            if code is not None:
                raise ServerStartError(
                    f"{self.kind} server exited with code {code} before it was ready "
                    f"({self.base_url}); log {self.log_path}:\n{self.log_tail()}"
                )
            ready, seen = self._probe(deadline)
            if ready:
                return
            last = seen or last  # a probe cut short by the deadline saw nothing new
            left = deadline - time.monotonic()
            if left <= 0:
                raise ServerStartError(
                    f"{self.kind} server not ready within {self.health_timeout_s:g} s "
                    f"({self.base_url}: {last}); log {self.log_path}:\n{self.log_tail()}"
                )
            time.sleep(min(0.25, left))

    def _probe(self, deadline: float = float("inf")) -> tuple[bool, str]:
        """(ready, what was seen): every readiness path answers 200 and the model is listed.

        Each GET may take what is left until ``deadline``, at most 2 s; what was seen is ""
        when the deadline came before a path could be asked.
        """
        for path in self.readiness_paths():
            left = deadline - time.monotonic()
            if left <= 0:
                return False, ""
            status, body = _get(f"http://{self.connect_host}:{self.port}{path}", min(2.0, left))
            if status != 200:
                return False, f"GET {path} -> {status or body}"
            if path == "/v1/models":
                try:
                    ids = [m.get("id") for m in json.loads(body).get("data", [])]
                except (ValueError, AttributeError):
                    return False, f"GET {path} -> not a model list"
                if self.model_id not in ids:
                    return False, f"model {self.model_id!r} not listed (listed: {ids})"
        return True, "ready"

    def stop(self) -> None:
        """SIGTERM the process group, SIGKILL what is left after the grace period. Idempotent."""
        proc, self.process = self.process, None
        atexit.unregister(self.stop)
        if proc is None:
            return
        try:
            _killpg(proc.pid, signal.SIGTERM)
            _wait_unreaped(proc.pid, self.stop_grace_s)
        finally:  # also on KeyboardInterrupt during the wait
            # The leader is not reaped yet, so its group id cannot have been reused.
            _killpg(proc.pid, signal.SIGKILL)  # workers the leader left behind
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:]) or "(empty log)"

    def __enter__(self) -> "ManagedServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _wait_unreaped(pid: int, timeout: float) -> bool:
    """Wait for a child to exit without reaping it (so its pid stays reserved)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:  # already reaped
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _get(url: str, timeout: float = 2.0) -> tuple[int | None, str]:
    """(status, body) of a GET, never through a proxy; (None, reason) when nothing answered."""
    try:
        with _NO_PROXY.open(url, timeout=timeout) as resp:
            return resp.status, resp.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""
    except (urllib.error.URLError, OSError) as exc:
        return None, str(getattr(exc, "reason", exc))
