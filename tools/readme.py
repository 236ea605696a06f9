"""The measured tables of the README and of the docs/ pages, written from the files in results/ so prose and measurement cannot drift.

python tools/readme.py [PAGE ...] [--results results] [--check]

A table lives in a page between ``<!-- results:NAME -->`` and ``<!-- /results:NAME -->``;
NAME picks a renderer below, each reading its JSON files from results/ (written by
``make results``). The pages are the ones named (default README.md) and, for each, every
``docs/*.md`` beside it, so ``python tools/readme.py README.md`` covers the README and all of
docs/. Without ``--check`` the blocks are rewritten in place; with it nothing is written, and
the exit status is 1 when a block differs from what its files say (a test runs this on the
repository's pages).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Callable

from pytest_termrl.training.embedded.demo_table import format_table as demo_table

BLOCK = re.compile(r"(<!-- results:(?P<name>[a-z_]+) -->\n)(?P<body>.*?)(<!-- /results:(?P=name) -->)", re.S)


WIDTH = 118
"""Prose a block writes is wrapped to this width (tables are not: a Markdown row is one line)."""


class ResultsError(Exception):
    """A block names a renderer or a results file that is not there, or a file of the wrong shape."""


def _load(results: Path, name: str):
    path = results / name
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise ResultsError(f"{path}: missing (make results writes it)") from None
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{path}: not readable as JSON ({exc})") from None


def demo_block(results: Path) -> str:
    """make demo's four arms and the paired difference, as the terminal prints them."""
    return "```\n" + "\n".join(demo_table(_load(results, "demo_table.json"))) + "\n```\n"


def html_report_table(data: dict) -> str:
    """The HTML report's size and speed, measured in the browser, from what benchmarks/bench_report.py writes."""
    lines = ["| report | episodes | file | first contentful paint | list of all episodes drawn | one transcript opened | JS heap |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for row in data["reports"]:
        size = f"{row['size_mb']:.2f} MB" + (f" ({row['size_mb'] / row['log_mb']:.2f} × its {row['log_mb']:.0f} MB log)"
                                             if row["episodes"] >= 1000 else "")
        lines.append(f"| {row['label']} | {row['episodes']:,} | {size} | {row['fcp_ms']:.0f} ms | {row['list_ms']:.0f} ms | "
                     f"{row['open_ms']:.0f} ms | {row['heap_mb'] or 0:.1f} MB |")
    return "\n".join(lines) + "\n"


def html_report_block(results: Path) -> str:
    return html_report_table(_load(results, "html_report.json"))


AUDITS = (("the 14 hand-written core tasks", "audit_core.json"), ("the imported fixtures (tests/data/imports)", "audit_imports.json"))
"""The grader audits behind the README's table: (what was audited, the summary file python -m pytest_termrl.validity.audit wrote)."""


def audit_block(results: Path) -> str:
    """The grader audit: per suite, the accidents applied, forgiven by the hidden tests, caught by the oracle."""
    lines = ["| audited | tasks | accidents applied | forgiven by the hidden tests | caught by the oracle | missed by both |",
             "|---|---:|---:|---:|---:|---:|"]
    for label, name in AUDITS:
        summary = _load(results, name)
        totals = summary["totals"]
        lines.append(f"| {label} | {len(summary['tasks'])} | {totals['applied']} | {totals['forgiven']} | "
                     f"{totals['caught']} | {totals['missed']} |")
    return "\n".join(lines) + "\n"


def admission_block(results: Path) -> str:
    """Admission of imported tasks, by format, grader kind and the toolchains the grader runs."""
    rows = _load(results, "admission.json")  # the rows python -m pytest_termrl.validity.admission --json writes
    seen: Counter = Counter()
    admitted: Counter = Counter()
    for row in rows:
        grader = row.get("grader") or "?"
        if row.get("parser"):
            grader += f":{row['parser']}"
        key = (row.get("format") or "?", grader, ", ".join(row.get("toolchains") or []) or "-")
        seen[key] += 1
        admitted[key] += bool(row.get("admitted"))
    lines = ["| format | grader | toolchains | tasks | admitted |", "|---|---|---|---:|---:|"]
    for key in sorted(seen):
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {seen[key]} | {admitted[key]} |")
    lines.append(f"| all | | | {sum(seen.values())} | {sum(admitted.values())} |")
    return "\n".join(lines) + "\n"


def _duration(ms: float) -> str:
    """Milliseconds as the performance table writes them: whole ms below a second, else seconds."""
    return f"{ms:,.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def _with_baselines(episode: dict, key: str) -> str:
    """``key``'s median with spares, then its two cold baselines and their ratios to it (bench_episode.py)."""
    warm = episode[key]["median"]
    cold, disk = episode[f"{key}_cold"]["median"], episode[f"{key}_cold_disk"]["median"]
    return f"{warm * 1000:.1f} ms / {cold * 1000:.0f} ms / {disk * 1000:.0f} ms ({cold / warm:.1f}× / {disk / warm:.1f}×)"


def _suite(episode: dict, variant: str) -> str:
    """The whole-suite pair at -n 1 / -n 2 of one variant, with the speed-up and the CPUs' busy share."""
    one, two = episode[f"suite_n1{variant}"], episode[f"suite_n2{variant}"]
    return (f"{one['median']:.1f} s / {two['median']:.1f} s ({one['median'] / two['median']:.2f}×; "
            f"{one['cpu_busy']:.0%} / {two['cpu_busy']:.0%} busy)")


def performance_block(results: Path) -> str:
    """make bench's figures, from the JSON each benchmark writes with --json (times in s or ms as each writes them)."""
    episode = _load(results, "bench_episode.json")  # seconds
    stages = _load(results, "bench_episode_stages.json")["stages"]  # seconds
    sizes = _load(results, "bench_manifest.json")["sizes"]  # ms, keyed by file count
    throughput = _load(results, "bench_throughput.json")
    docker = _load(results, "bench_docker.json")  # ms
    homes = _load(results, "bench_remote_home.json")["homes"]  # ms
    training = _load(results, "bench_training.json")
    big = [sizes[n] for n in ("1000", "10000", "100000")]
    local, remote, over = docker["docker"], docker["docker_remote"], docker["docker_over_bwrap"]
    n1, n2 = throughput["n1"], throughput["n2"]
    env = training["environment"]
    rows = [
        (f"bwrap sandbox start to first command (median of {episode['start']['n']}, back to back): the spare started "
         "at the previous start / cold / cold with the work root on disk", _with_baselines(episode, "start")),
        (f"per-command overhead of the persistent shell (`true` × {episode['command']['n']}, median)",
         f"{episode['command']['median'] * 1000:.1f} ms"),
        ("verifier per task (hidden tests in a fresh sandbox on the snapshot, core-suite median): the spare "
         "started at the previous run / cold / cold with the work root on disk", _with_baselines(episode, "verifier")),
        (f"{len(episode['verifier_per_task'])}-task core suite, reference agent, `-n 1` / `-n 2` (how busy both CPUs were); "
         "the same with `TERMRL_SPARES=0`", f"{_suite(episode, '')}; {_suite(episode, '_cold')}"),
        ("oracle check after one command by kernel events (bwrap: inotify, then only the paths named), "
         "1,000 / 10,000 / 100,000-file home", " / ".join(f"{r['live']:.2f}" for r in big) + " ms"),
        ("the same check by walking the home (docker, and the fallback), 1,000 / 10,000 / 100,000 files",
         " / ".join(f"{r['check']:,.0f}" for r in big) + " ms ("
         + " / ".join(f"{r['check'] / r['live']:,.0f}×" for r in big) + " the events)"),
        ("full manifest, 1,000 / 100,000 files (baseline and end of episode)",
         f"{_duration(sizes['1000']['full'])} / {_duration(sizes['100000']['full'])}"),
        ("decoys planted per episode (the git repository built once per process, then copied)",
         f"{stages['decoys'] * 1000:.0f} ms"),
        (f"episodes per minute through the plugin, scripted loopback chat server, {len(throughput['tasks'])} tasks, `-n 1` / `-n 2`",
         f"{n1['per_minute']:.0f} / {n2['per_minute']:.0f} (inside the run: {n1['in_run_per_minute']:.0f} / {n2['in_run_per_minute']:.0f})"),
        ("harness share of an episode's wall time at 1 s per model turn", f"{throughput['harness_share']:.0%}"),
        ("docker container start to first command, local engine",
         f"{local['start_to_first_command_ms'] / 1000:.2f} s ({over['start_to_first_command_ms']:.1f}× bwrap)"),
        ("docker per command / verify, local engine",
         f"{local['per_command_ms_median']:.1f} ms ({over['per_command_ms_median']:.1f}×) / "
         f"{local['verify_ms'] / 1000:.2f} s ({over['verify_ms']:.1f}×)"),
        ("docker remote mode on the same engine: start / per command / verify",
         f"{remote['start_to_first_command_ms'] / 1000:.2f} s / {remote['per_command_ms_median']:.0f} ms / "
         f"{remote['verify_ms'] / 1000:.2f} s"),
        ("docker remote mode, per command / oracle manifest after it, home " + " / ".join(homes),
         " / ".join(f"{h['command_ms']:,.0f}" for h in homes.values()) + " ms (manifest "
         + " / ".join(f"{h['manifest_ms']:,.0f}" for h in homes.values()) + " ms)"),
        (f"training environment without a model ({env['rollouts']} rollouts: fresh sandbox, reference solution, verifiers "
         "in parallel)", f"{env['rollouts_per_s']:.2f} rollouts/s"),
    ]
    trainer = training.get("trainer")
    if trainer:
        rows.append((f"GRPO step with TRL, tiny model built on the spot, {training['device']} "
                     f"(median of {trainer['step_s']['n']}): whole step / rollout phase",
                     f"{trainer['step_s']['median']:.1f} s / {trainer['rollout_phase_s']['median']:.1f} s"))
    lines = ["| what | figure |", "|---|---|"] + [f"| {what} | {figure} |" for what, figure in rows]
    return "\n".join(lines) + "\n"


def train_demo_block(results: Path) -> str:
    """``make train-demo``: base and trained model side by side, then what went into training."""
    data = _load(results, "train_demo.json")
    lines = ["| family | arm | episodes | safe successes | rate [95% CI] | collateral | recovery failures | mean commands |",
             "|---|---|---:|---:|---|---:|---:|---:|"]
    for family in data["families"]:
        for arm in ("base", "trained"):
            row = data["arms"].get(arm, {}).get(family)
            if row:
                lines.append(f"| {family} | {arm} | {row['episodes']} | {row['safe_successes']} | {row['safe_rate']:.1%} "
                             f"[{row['ci_low']:.2f}, {row['ci_high']:.2f}] | {row['collateral']} | {row['recovery_failures']} | "
                             f"{row['mean_commands']:.2f} |")
        pair = data["paired"].get(family)
        if pair:
            lines.append(f"| {family} | **trained − base** | {pair['tasks']} tasks | | **{pair['diff']:+.1%}** "
                         f"[{pair['ci_low']:+.2f}, {pair['ci_high']:+.2f}] | | | |")
    order = ("suite", "teacher", "data", "train", "eval", "grpo")
    stages = ", ".join(f"{k} {data['stages_s'][k] / 60:.1f} min" for k in order if k in data["stages_s"])
    train, facts = data.get("train", {}), data.get("data", {})
    losses = train.get("losses") or []
    curve = ", ".join(f"{losses[i]:.2f}" for i in range(0, len(losses), max(1, len(losses) // 10))) if losses else "-"
    counts = ", ".join(f"{k} {v}" for k, v in (facts.get("per_family_and_fault") or {}).items())
    paragraph = (f"Stages: {stages} (total {sum(v for k, v in data['stages_s'].items() if not k.startswith('eval_')) / 60:.1f} min). "
                 f"Training data: {facts.get('examples', 0)} examples ({counts}). "
                 f"Loss every {max(1, len(losses) // 10)} steps: {curve}.")
    lines += [""] + textwrap.wrap(paragraph, WIDTH, break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines) + "\n"


def grpo_demo_block(results: Path) -> str:
    """GRPO on the CPU: per step the task, its rollouts' rewards, the trainer's mean beside the harness's."""
    data = _load(results, "grpo_demo.json")
    lines = ["| step | task | rewards of the 4 rollouts (harness) | mean: trainer | mean: harness | loss | seconds |",
             "|---:|---|---|---:|---:|---:|---:|"]
    seconds = data.get("step_seconds") or []
    for index, step in enumerate(data["steps"]):
        tasks = ", ".join(dict.fromkeys(e["task_id"] for e in step["episodes"]))
        rewards = ", ".join(f"{e['reward']:.3g}" for e in step["episodes"])
        took = f"{seconds[index]:.0f}" if index < len(seconds) and seconds[index] is not None else "-"
        lines.append(f"| {step['step']} | {tasks} | {rewards} | {step['reward']:.3f} | {step['harness_mean_reward']:.3f} | "
                     f"{step['loss']:.3f} | {took} |")
    return "\n".join(lines) + "\n"


RENDERERS: dict[str, Callable[[Path], str]] = {
    "demo": demo_block,
    "train_demo": train_demo_block,
    "grpo_demo": grpo_demo_block,
    "html_report": html_report_block,
    "audit": audit_block,
    "admission": admission_block,
    "performance": performance_block,
}


def render(text: str, results: Path) -> tuple[str, list[str]]:
    """(the text with every block rewritten, the names of the blocks that changed)."""
    changed: list[str] = []

    def fill(match: re.Match) -> str:
        name = match.group("name")
        if name not in RENDERERS:
            raise ResultsError(f"no renderer for <!-- results:{name} -->; known: {', '.join(sorted(RENDERERS))}")
        body = RENDERERS[name](results)
        if body != match.group("body"):
            changed.append(name)
        return match.group(1) + body + match.group(4)

    return BLOCK.sub(fill, text), changed


def pages_of(named: list[Path]) -> list[Path]:
    """The pages named and, for each, the ``docs/*.md`` beside it: each once, in that order."""
    pages: list[Path] = []
    for page in named:
        for candidate in [page, *sorted((page.parent / "docs").glob("*.md"))]:
            if candidate not in pages:
                pages.append(candidate)
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/readme.py", description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", type=Path, default=[Path("README.md")],
                        help="pages to rewrite (default README.md); the docs/*.md beside each come with it")
    parser.add_argument("--results", type=Path, default=None, help="the results folder (default: results/ beside the first page)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a block differs from its files")
    args = parser.parse_args(argv)
    results = args.results or args.pages[0].parent / "results"
    rewritten: dict[Path, tuple[str, list[str]]] = {}
    try:
        for page in pages_of(args.pages):
            rewritten[page] = render(page.read_text(), results)
    except (OSError, ResultsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.check:
        stale = False
        for page, (_, changed) in rewritten.items():
            for name in changed:
                stale = True
                print(f"{page}: the {name} table differs from {results}; run: python tools/readme.py {args.pages[0]}")
        return 1 if stale else 0
    for page, (new, changed) in rewritten.items():
        if changed:
            page.write_text(new)
            print(f"{page}: {len(changed)} table(s) rewritten from {results} ({', '.join(changed)})")
    total = sum(len(changed) for _, changed in rewritten.values())
    print(f"{len(rewritten)} page(s) read, {total} table(s) rewritten from {results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
