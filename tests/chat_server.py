"""A scripted OpenAI-compatible chat server for tests: real HTTP, no model.

Used in-process (``ChatServer`` runs a ThreadingHTTPServer in a thread) to drive the
OpenAI agent through every end reason, and as a process
(``python tests/chat_server.py --port P --policy NAME [--script FILE]``) to stand in
for vLLM when testing server management.

A policy decides each reply from the conversation it is sent: the position in the
episode is the number of assistant messages already in the request, so replies do not
depend on retries or on other conversations sharing the server.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_MODEL = "stand-in-model"


def count_tokens(text: str) -> int:
    """A rough token count (whitespace words) so usage figures are plausible."""
    return len(text.split())


def prompt_tokens(body: dict) -> int:
    total = 0
    for m in body.get("messages", []):
        total += 4 + count_tokens(str(m.get("content") or ""))
        for tc in m.get("tool_calls") or []:
            total += count_tokens(tc.get("function", {}).get("arguments", ""))
    for t in body.get("tools", []):
        total += count_tokens(json.dumps(t))
    return total


def position(body: dict) -> int:
    """How many assistant replies the conversation already holds."""
    return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")


# -- replies -------------------------------------------------------------------------------


def tool_call(index: int, arguments: str, name: str = "bash") -> dict:
    return {
        "id": f"call_{index}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def bash_call(index: int, command: str) -> dict:
    return tool_call(index, json.dumps({"command": command}))


def completion(
    body: dict, content: str | None, calls: list[dict], usage: dict | None = None
) -> dict:
    generated = count_tokens(content or "") + sum(
        count_tokens(c["function"]["arguments"]) + 2 for c in calls
    )
    usage = usage or {"prompt_tokens": prompt_tokens(body), "completion_tokens": max(1, generated)}
    usage = {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]}
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", DEFAULT_MODEL),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": usage,
    }


# -- policies ------------------------------------------------------------------------------


class Policy:
    """Maps (request body, global request number) to (HTTP status, JSON payload)."""

    def respond(self, body: dict, request_no: int) -> tuple[int, dict]:
        raise NotImplementedError


class Replay(Policy):
    """One tool call per reply for each command in turn, then a final answer without one."""

    def __init__(self, commands: list[str] | None = None, final: str = "Done.") -> None:
        self.commands = list(commands if commands is not None else ["ls", "cat notes.txt"])
        self.final = final

    def respond(self, body, request_no):
        i = position(body)
        if i < len(self.commands):
            return 200, completion(body, None, [bash_call(i, self.commands[i])])
        return 200, completion(body, self.final, [])


class Keys(Policy):
    """One ``send_keys`` call per reply for each batch of keys in turn (a Terminus-style agent), then a final answer."""

    def __init__(self, batches: list[list[str]] | None = None, wait_s: float = 2.0, final: str = "Done.") -> None:
        self.batches = [list(b) for b in (batches if batches is not None else [["echo hi", "Enter"]])]
        self.wait_s = wait_s
        self.final = final

    def respond(self, body, request_no):
        i = position(body)
        if i < len(self.batches):
            arguments = json.dumps({"keys": self.batches[i], "wait_s": self.wait_s})
            return 200, completion(body, None, [tool_call(i, arguments, name="send_keys")])
        return 200, completion(body, self.final, [])


MALFORMED_KINDS = ("bad_json", "unknown_tool", "missing_arg")


class Malformed(Policy):
    """Malformed tool calls: cycles through ``kinds`` forever, or replays ``then`` after them."""

    def __init__(self, kinds: list[str] | None = None, then: list[str] | None = None) -> None:
        self.kinds = list(kinds or MALFORMED_KINDS)
        self.then = Replay(then) if then is not None else None

    def respond(self, body, request_no):
        i = position(body)
        if self.then is not None and i >= len(self.kinds):
            j = i - len(self.kinds)
            if j < len(self.then.commands):
                return 200, completion(body, None, [bash_call(i, self.then.commands[j])])
            return 200, completion(body, self.then.final, [])
        kind = self.kinds[i % len(self.kinds)]
        if kind == "bad_json":
            call = tool_call(i, '{"command": "ls')
        elif kind == "unknown_tool":
            call = tool_call(i, json.dumps({"command": "ls"}), name="python")
        elif kind == "missing_arg":
            call = tool_call(i, json.dumps({"cmd": "ls"}))
        else:
            raise ValueError(f"unknown malformed kind {kind!r}")
        return 200, completion(body, None, [call])


class NeverStop(Policy):
    """Always asks to run ``echo again``."""

    def respond(self, body, request_no):
        return 200, completion(body, None, [bash_call(position(body), "echo again")])


class Flaky(Replay):
    """Answers ``status`` (500) to the first ``failures`` requests, then behaves like replay."""

    def __init__(self, failures: int = 2, commands: list[str] | None = None, status: int = 500):
        super().__init__(commands)
        self.failures = failures
        self.status = status

    def respond(self, body, request_no):
        if request_no < self.failures:
            return self.status, {"error": {"message": f"scripted failure {request_no + 1}",
                                           "type": "server_error", "code": self.status}}
        return super().respond(body, request_no)


class Fail(Policy):
    """Always answers ``status`` with an OpenAI-style error body."""

    def __init__(self, status: int = 400, message: str = "scripted bad request") -> None:
        self.status = status
        self.message = message

    def respond(self, body, request_no):
        return self.status, {"error": {"message": self.message, "type": "invalid_request_error",
                                       "code": self.status}}


class TokenHog(Policy):
    """Always a tool call, reporting large usage figures (and ignoring max_tokens)."""

    def __init__(self, prompt: int = 3000, completion_tokens: int = 2500) -> None:
        self.prompt = prompt
        self.completion_tokens = completion_tokens

    def respond(self, body, request_no):
        usage = {"prompt_tokens": self.prompt * (position(body) + 1),
                 "completion_tokens": self.completion_tokens}
        call = bash_call(position(body), "echo hog")
        return 200, completion(body, "thinking " * 5, [call], usage)


class Truncated(Policy):
    """A reply cut off at max_tokens: unfinished text, no tool call, finish_reason 'length'."""

    def respond(self, body, request_no):
        limit = int(body.get("max_tokens") or 16)
        payload = completion(body, "Let me think about " + "this " * limit, [],
                             {"prompt_tokens": prompt_tokens(body), "completion_tokens": limit})
        payload["choices"][0]["finish_reason"] = "length"
        return 200, payload


class RepeatedIds(Replay):
    """Replay, but every tool call has the same id (as some servers do)."""

    def respond(self, body, request_no):
        status, payload = super().respond(body, request_no)
        for call in payload["choices"][0]["message"].get("tool_calls", []):
            call["id"] = "call_0"
        return status, payload


class MultiCall(Replay):
    """Two tool calls in each reply: the scripted command and ``echo second``."""

    def respond(self, body, request_no):
        i = position(body)
        if i < len(self.commands):
            calls = [bash_call(2 * i, self.commands[i]), bash_call(2 * i + 1, "echo second")]
            return 200, completion(body, None, calls)
        return 200, completion(body, self.final, [])


class Slow(Replay):
    """Replay, after sleeping ``delay`` seconds on every request (for client timeouts)."""

    def __init__(self, delay: float = 1.0, commands: list[str] | None = None) -> None:
        super().__init__(commands)
        self.delay = delay

    def respond(self, body, request_no):
        time.sleep(self.delay)
        return super().respond(body, request_no)


def task_message(body: dict) -> str:
    """The first user message of the conversation: the task's instruction."""
    for m in body.get("messages", []):
        if m.get("role") == "user":
            return str(m.get("content") or "")
    return ""


def route(body: dict, routes: dict[str, Any]) -> tuple[str | None, Any]:
    """The entry whose key begins the task message (the longest such key), or (None, None)."""
    text = task_message(body)
    matches = [key for key in routes if text.startswith(key)]
    if not matches:
        return None, None
    key = max(matches, key=len)
    return key, routes[key]


def no_route(body: dict, policy: str) -> tuple[int, dict]:
    first_line = task_message(body).splitlines()[0] if task_message(body) else ""
    return 400, {"error": {"message": f"{policy}: no task matches {first_line[:80]!r}",
                           "type": "invalid_request_error", "code": 400}}


class Reference(Policy):
    """Plays each task's reference solution: finds the task from the user message.

    ``tasks`` maps an instruction prefix to the task's commands (a string is one command,
    e.g. a whole solution.sh); the commands are replayed one tool call each, then a final
    answer without a tool call. A conversation about no known task gets a 400.
    """

    def __init__(self, tasks: dict[str, str | list[str]], final: str = "Done.") -> None:
        self.tasks = {k: [v] if isinstance(v, str) else list(v) for k, v in tasks.items()}
        self.final = final

    def respond(self, body, request_no):
        key, commands = route(body, self.tasks)
        if key is None:
            return no_route(body, "reference")
        i = position(body)
        if i < len(commands):
            return 200, completion(body, None, [bash_call(i, commands[i])])
        return 200, completion(body, self.final, [])


class PerTask(Policy):
    """A different policy per task: ``routes`` maps an instruction prefix to
    ``{"policy": NAME, **params}`` (the user message picks the route, as in reference)."""

    def __init__(self, routes: dict[str, dict]) -> None:
        self.routes = {
            key: make_policy(spec["policy"], **{k: v for k, v in spec.items() if k != "policy"})
            for key, spec in routes.items()
        }

    def respond(self, body, request_no):
        key, policy = route(body, self.routes)
        if key is None:
            return no_route(body, "per_task")
        return policy.respond(body, request_no)


POLICIES: dict[str, type[Policy]] = {
    "replay": Replay,
    "malformed": Malformed,
    "never_stop": NeverStop,
    "flaky": Flaky,
    "fail": Fail,
    "token_hog": TokenHog,
    "multi_call": MultiCall,
    "slow": Slow,
    "truncated": Truncated,
    "repeated_ids": RepeatedIds,
    "reference": Reference,
    "per_task": PerTask,
    "keys": Keys,
}


# -- Harbor's terminus-2 (tests/integration/test_harbor_terminus.py) ------------------------


class Terminus(Policy):
    """Terminus-2's JSON replies (text content, no tool calls): per task, one batch of keystrokes per reply, then
    ``task_complete`` (repeated when terminus asks to confirm). ``routes`` maps a text found in the first user
    message (terminus wraps the instruction in its prompt) to the task's keystroke batches."""

    def __init__(self, routes: dict[str, list[str]], duration: float = 0.5) -> None:
        self.routes = {key: list(batches) for key, batches in routes.items()}
        self.duration = duration

    def respond(self, body, request_no):
        text = task_message(body)
        matches = [key for key in self.routes if key in text]
        if not matches:
            return no_route(body, "terminus")
        batches = self.routes[max(matches, key=len)]
        i = position(body)
        if i < len(batches):
            reply = {"analysis": f"step {i + 1}", "plan": "type the next command",
                     "commands": [{"keystrokes": batches[i], "duration": self.duration}], "task_complete": False}
        else:
            reply = {"analysis": "the task is done", "plan": "finish", "commands": [], "task_complete": True}
        return 200, completion(body, json.dumps(reply), [])


POLICIES["terminus"] = Terminus


def make_policy(name: str, **params: Any) -> Policy:
    try:
        cls = POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(sorted(POLICIES))}") from None
    return cls(**params)


# -- the server ----------------------------------------------------------------------------


class _QuietHTTPServer(ThreadingHTTPServer):
    """Clients that give up (timeouts) close the socket mid-reply; that is not an error here."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class ChatServer:
    """The HTTP server; records every request body in ``requests`` (in arrival order)."""

    def __init__(
        self,
        policy: Policy,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = DEFAULT_MODEL,
        healthy: bool = True,
        serve_health: bool = True,
        log: bool = False,
    ) -> None:
        self.policy = policy
        self.model = model
        self.healthy = healthy
        self.serve_health = serve_health
        self.log = log
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._counter = itertools.count()
        self.httpd = _QuietHTTPServer((host, port), self._handler_class())
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://{self.httpd.server_address[0]}:{self.port}/v1"

    @property
    def chat_requests(self) -> list[dict]:
        return [r for r in self.requests if "messages" in r]

    def start(self) -> "ChatServer":
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "ChatServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, fmt: str, *args: Any) -> None:
                if server.log:
                    _say(f"chat_server: {fmt % args}")

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path == "/health" and server.serve_health:
                    ok = server.healthy
                    self._send(200 if ok else 503, {"status": "ok" if ok else "loading"})
                elif self.path == "/v1/models":
                    self._send(200, {"object": "list", "data": [
                        {"id": server.model, "object": "model", "owned_by": "tests"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "body is not JSON"}})
                    return
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with server._lock:
                    server.requests.append(body)
                    number = next(server._counter)
                status, payload = server.policy.respond(body, number)
                if server.log:
                    _say(f"chat_server: request {number} -> {status}")
                self._send(status, payload)

        return Handler


_SAY_LOCK = threading.Lock()


def _say(line: str) -> None:
    """One whole line per write: handler threads printing at once must not splice lines."""
    with _SAY_LOCK:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--policy", default="replay", choices=sorted(POLICIES))
    parser.add_argument("--script", help="JSON file with the policy's parameters")
    parser.add_argument("--unhealthy", action="store_true", help="answer /health with 503")
    parser.add_argument("--no-health", action="store_true", help="do not serve /health (404)")
    parser.add_argument("--startup-delay", type=float, default=0.0)
    parser.add_argument("--spawn-child", help="start a long sleep in the same process group "
                        "and write its pid to this file")
    args = parser.parse_args(argv)

    params = json.load(open(args.script)) if args.script else {}
    policy = make_policy(args.policy, **params)
    if args.spawn_child:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        with open(args.spawn_child, "w") as fh:
            fh.write(str(child.pid))
    time.sleep(args.startup_delay)
    server = ChatServer(policy, args.host, args.port, args.model, healthy=not args.unhealthy,
                        serve_health=not args.no_health, log=True)
    print(f"chat_server: pid {os.getpid()} serving {args.policy} on {server.base_url}", flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
