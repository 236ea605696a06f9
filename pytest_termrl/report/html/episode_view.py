"""One episode as static, escaped HTML (no script): the view pytest-html shows as a test's extra.

The report page draws the same view in the browser from the record; this one is for pages
that run no script of ours. Every string from the record goes through ``html.escape``.
"""

from __future__ import annotations

import html
import json

from .data import OUTCOME_COLOURS, OUTCOME_LABELS, outcome_of

STYLE = ("<style>.termrl-episode pre{white-space:pre-wrap;overflow-wrap:anywhere;font:12px ui-monospace,monospace;margin:2px 0}"
         ".termrl-episode .cmd{background:#263238;color:#eceff1;padding:4px}.termrl-episode .finding{background:#ffebee;"
         "border:1px solid #e57373;padding:3px 6px;margin:3px 0}.termrl-episode .msg{border-left:3px solid #ccc;padding:2px 8px;margin:6px 0}"
         ".termrl-episode .badge{color:#fff;padding:0 6px;border-radius:3px}</style>")


def _e(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _pairs(obj: dict | None) -> str:
    return ", ".join(f"{k} {v}" for k, v in (obj or {}).items())


def _command_of(call: dict) -> str:
    try:
        return str(json.loads(call["function"]["arguments"])["command"])
    except (KeyError, TypeError, ValueError):
        return str((call.get("function") or {}).get("arguments", ""))


def episode_html(record: dict) -> str:
    outcome = outcome_of(record)
    fields = [("agent", record.get("agent")), ("model", record.get("model")), ("prompt", record.get("prompt")),
              ("task", record.get("task_id")), ("family", record.get("family")), ("reward", record.get("reward")),
              ("tests", f"{record.get('tests_passed', 0)} / {record.get('tests_total', 0)}"), ("end reason", record.get("end_reason")),
              ("commands", record.get("commands_used")), ("tokens", _pairs(record.get("tokens"))),
              ("timings", _pairs(record.get("timings"))), ("limits enforced", _pairs(record.get("enforced_limits")))]
    if record.get("fault"):
        fault = record["fault"]
        fields += [("fault", f"{fault.get('family')} on {fault.get('target')}"),
                   ("observed", f"at command {record.get('observed_at')}" if record.get("observed") else "no"),
                   ("cleared", "yes" if record.get("fault_cleared") else "no"),
                   ("fabrication", "; ".join(record.get("fabrication") or []) or "none")]
    out = [STYLE, '<div class="termrl-episode">',
           f'<p><b>{_e(record.get("episode_id"))}</b> <span class="badge" style="background:{OUTCOME_COLOURS[outcome]}">'
           f"{_e(OUTCOME_LABELS[outcome])}</span></p>"]
    if record.get("harness_error"):
        out.append(f"<p><b>harness error:</b> {_e(record['harness_error'])}</p>")
    out.append("<table>" + "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in fields if v not in (None, "")) + "</table>")
    verdict = record.get("verdict") or {}
    messages = verdict.get("messages") or {}
    out.append("<p><b>hidden tests</b></p><ul>" + "".join(
        f"<li>{_e(node)}: {_e(result)}{' — ' + _e(messages[node]) if messages.get(node) else ''}</li>"
        for node, result in (verdict.get("outcomes") or {}).items()) + "".join(
        f"<li>problem: {_e(p)}</li>" for p in verdict.get("problems") or []) + "</ul>")
    findings: dict = {}
    for finding in record.get("collateral") or []:
        findings.setdefault(finding.get("command_index"), []).append(finding)
    commands = record.get("commands") or []
    call = 0
    pending: list[int] = []
    for message in record.get("transcript") or []:
        role = message.get("role")
        if role == "assistant":
            if message.get("content"):
                out.append(f'<div class="msg"><i>assistant</i><pre>{_e(message["content"])}</pre></div>')
            for tool_call in message.get("tool_calls") or []:
                call += 1
                pending.append(call)
                out.append(f'<div class="msg"><i>command {call}</i><pre class="cmd">{_e(_command_of(tool_call))}</pre></div>')
        elif role == "tool":
            number = pending.pop(0) if pending else None
            meta = commands[number - 1] if number and number <= len(commands) else {}
            flags = [f"exit code {meta.get('exit_code')}", f"{meta.get('duration_s', '?')} s"]
            flags += [name for key, name in (("timed_out", "timed out"), ("output_truncated", "output truncated")) if meta.get(key)]
            out.append(f'<div class="msg"><i>output of command {number} ({_e(", ".join(flags))})</i><pre>{_e(message.get("content"))}</pre>')
            if number is not None and record.get("observed_at") == number:
                out.append('<div class="finding">fault observed here</div>')
            for finding in findings.get(number, []):
                out.append(f'<div class="finding">collateral: {_e(finding.get("kind"))} <code>{_e(finding.get("path"))}</code> '
                           f'{_e(finding.get("detail"))}</div>')
            out.append("</div>")
        elif role == "user":
            out.append(f'<div class="msg"><i>task</i><pre>{_e(message.get("content"))}</pre></div>')
    for finding in findings.get(None, []):
        out.append(f'<div class="finding">collateral at the end: {_e(finding.get("kind"))} <code>{_e(finding.get("path"))}</code> '
                   f'{_e(finding.get("detail"))}</div>')
    out.append("</div>")
    return "".join(out)
