"""Writes job/: a Harbor job of five trials of the greeting task, in Harbor's trial layout (run it to regenerate)."""

import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
JOB = HERE / "job"
PROMPT = "You are an AI assistant tasked with solving command-line tasks in a Linux environment.\n\nTask Description:\n" \
         "Write the line `hello, world` into /app/greeting.txt.\n"


def atif(agent: str, model: str, steps: list[dict]) -> dict:
    return {"schema_version": "ATIF-v1.5", "session_id": "s-" + agent, "agent": {"name": agent, "version": "2.0.0", "model_name": model},
            "steps": [{"step_id": 1, "source": "user", "message": PROMPT}, *steps]}


def bash_steps(commands: list[tuple[str, str]]) -> list[dict]:
    steps = []
    for number, (command, output) in enumerate(commands, start=2):
        call = f"call_{number}"
        steps.append({"step_id": number, "source": "agent", "message": "", "model_name": "m",
                      "tool_calls": [{"tool_call_id": call, "function_name": "bash", "arguments": {"command": command}}],
                      "observation": {"results": [{"source_call_id": call, "content": output}]}})
    return steps


def keys_step(number: int, calls: list[tuple[str, float]], screen: str, done: bool = False) -> dict:
    tool_calls = [{"tool_call_id": f"call_{number}_{i}", "function_name": "bash_command",
                   "arguments": {"keystrokes": keys, "duration": duration}} for i, (keys, duration) in enumerate(calls)]
    if done:
        tool_calls.append({"tool_call_id": f"call_{number}_done", "function_name": "mark_task_complete", "arguments": {}})
    return {"step_id": number, "source": "agent", "message": "", "model_name": "m", "tool_calls": tool_calls,
            "observation": {"results": [{"content": screen}]}}


def trial(name: str, trajectory: dict | None, reward: float | None, exception: dict | None = None) -> None:
    folder = JOB / name
    (folder / "agent").mkdir(parents=True)
    (folder / "verifier").mkdir()
    config = {"task": {"path": "tasks/greeting", "git_url": None}, "trial_name": name,
              "agent": {"name": trajectory["agent"]["name"] if trajectory else "terminus-2", "model_name": "test/model"},
              "environment": {"type": "docker"}, "job_id": "0d6c0a8e"}
    result = {"id": name, "task_name": "greeting", "trial_name": name, "trial_uri": f"file://{name}",
              "task_id": {"path": "tasks/greeting"}, "source": None,
              "agent_info": {"name": config["agent"]["name"], "version": "2.0.0", "model_info": {"name": "model", "provider": "test"}},
              "verifier_result": {"rewards": {"reward": reward}} if reward is not None else None,
              "exception_info": exception, "started_at": "2026-11-30T10:00:00Z", "finished_at": "2026-11-30T10:01:00Z"}
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    (folder / "result.json").write_text(json.dumps(result, indent=2))
    if trajectory is not None:
        (folder / "agent" / "trajectory.json").write_text(json.dumps(trajectory, indent=2))
    if reward is not None:
        (folder / "verifier" / "reward.txt").write_text(f"{int(reward)}\n")


def main() -> None:
    shutil.rmtree(JOB, ignore_errors=True)
    JOB.mkdir()
    (JOB / "config.json").write_text(json.dumps({"job_name": "greeting-demo", "n_attempts": 5}))
    (JOB / "result.json").write_text(json.dumps({"id": "0d6c0a8e", "n_total_trials": 5}))
    # Solved with the bash tool; nothing else touched.
    trial("greeting__a1", atif("claude-code", "m", bash_steps([
        ("ls /app", "notes.txt\n"),
        ("echo 'hello, world' > /app/greeting.txt && cat /app/greeting.txt", "hello, world\n"),
    ])), 1.0)
    # Solved, but the agent also deleted the user's notes: Harbor passed it.
    trial("greeting__a2", atif("claude-code", "m", bash_steps([
        ("rm -f /app/notes.txt && echo 'hello, world' > /app/greeting.txt", ""),
        ("ls /app", "greeting.txt\n"),
    ])), 1.0)
    # Terminus: a hanging command stopped with C-c, then a heredoc typed over several calls.
    trial("greeting__a3", atif("terminus-2", "m", [
        keys_step(2, [("sleep 1000\n", 1.0)], "root@4f2a9c1b7d3e:/app# sleep 1000\n"),
        keys_step(3, [("C-c", 0.5)], "root@4f2a9c1b7d3e:/app# sleep 1000\n^C\nroot@4f2a9c1b7d3e:/app# "),
        keys_step(4, [("cat > /app/greeting.txt <<'EOF'\n", 0.5), ("hello, world\n", 0.5), ("EOF\n", 1.0)],
                  "root@4f2a9c1b7d3e:/app# cat > /app/greeting.txt <<'EOF'\n> hello, world\n> EOF\nroot@4f2a9c1b7d3e:/app# "),
        keys_step(5, [("python3\n", 2.0), ("print(open('/app/greeting.txt').read().strip())\n", 1.0), ("exit()\n", 1.0)],
                  ">>> print(open('/app/greeting.txt').read().strip())\nhello, world\n>>> exit()\nroot@4f2a9c1b7d3e:/app# ", done=True),
    ]), 1.0)
    # Recorded as passing, but its only source was the network: no network here, so it fails (a flip).
    trial("greeting__a4", atif("claude-code", "m", bash_steps([
        ("curl -fsS http://greeting.invalid/line > /app/greeting.txt && cat /app/greeting.txt", "hello, world\n"),
    ])), 1.0)
    # A failed attempt, graded 0: it wrote the wrong words.
    trial("greeting__a5", atif("claude-code", "m", bash_steps([
        ("echo 'hello world' > /app/greeting.txt", ""),
    ])), 0.0)
    # The agent timed out before grading: no reward, so nothing to compare.
    trial("greeting__a6", atif("claude-code", "m", bash_steps([("sleep 900", "")])), None,
          {"exception_type": "AgentTimeoutError", "exception_message": "Agent execution timed out after 120.0 seconds",
           "exception_traceback": "", "occurred_at": "2026-11-30T10:02:00Z"})


if __name__ == "__main__":
    main()
