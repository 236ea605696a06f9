"""How big the HTML report gets and how fast it opens: 10,000 synthetic episodes and a real core-suite run.

For each report it prints the file size (and its ratio to the episode log it was built
from), the build time, and what headless Chromium measures on opening it from disk: the
first contentful paint (the overview, drawn from static HTML), the time until the episode
list of every episode is drawn (the index decompressed in the page), the time to open one
transcript (one chunk decompressed), and the page's JS heap. The last line gives the
ratios of the 10,000-episode report to the core-suite one.

    python benchmarks/bench_report.py                       # plays the demo's 14 core tasks (reference, clean)
    python benchmarks/bench_report.py --core-run out/reference --episodes 10000
    python benchmarks/bench_report.py --json results/html_report.json   # the figures behind the README's table
    python benchmarks/bench_report.py --table results/html_report.json  # that table, from the file
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_termrl.report.html import read_runs, write_html
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
from readme import html_report_table  # noqa: E402  (the README tooling lives in tools/, outside the package)
DEMO_TASKS = ("archive_manifest_targz", "backup_listed_files", "batch_rename_photos", "checksum_verify", "config_ini_update",
              "cron_validate", "csv_pivot_monthly", "dedupe_contacts", "git_commit_configs", "grades_text_report",
              "json_active_users", "log_error_counts", "log_latency_stats", "perms_from_spec")
WORDS = ("alpha", "beta", "gamma", "delta", "csv", "row", "line", "error", "ok", "file", "home", "user", "config", "sum",
         "total", "backup", "cron", "json", "log", "latency", "grep", "awk", "sed", "sort", "uniq", "ssh", "key", "git")


def synthetic_record(rng: random.Random, index: int, tasks: int) -> dict:
    """An episode shaped like a model's: a few commands with outputs, now and then collateral or a fault."""
    task = f"task_{index % tasks:04d}"
    family = ("clean", "perm_denied")[index // tasks % 2]
    arm = index // (tasks * 2)
    n = rng.randint(1, 8)
    transcript = [{"role": "system", "content": "You are an assistant that completes tasks in a Linux terminal. " * 6},
                  {"role": "user", "content": f"Task {task}: " + " ".join(rng.choice(WORDS) for _ in range(60))}]
    commands = []
    for k in range(1, n + 1):
        command = " | ".join(f"{rng.choice(WORDS)} -{rng.choice('abcnr')} {rng.choice(WORDS)}.txt" for _ in range(rng.randint(1, 3)))
        output = "\n".join(" ".join(rng.choice(WORDS) for _ in range(8)) for _ in range(rng.randint(0, 12)))
        transcript.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{k}", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": command})}}]})
        transcript.append({"role": "tool", "tool_call_id": f"call_{k}", "content": f"{output}\n[exit code: {rng.choice((0, 0, 1))}]"})
        commands.append({"command": command, "exit_code": 0, "timed_out": False, "shell_restarted": False,
                         "output_truncated": False, "duration_s": round(rng.random(), 4)})
    transcript.append({"role": "assistant", "content": "Done: " + " ".join(rng.choice(WORDS) for _ in range(12))})
    complete = rng.random() < 0.6
    collateral = []
    if rng.random() < 0.1:
        collateral.append({"path": "notes/todo.txt", "kind": "deleted", "detail": "was file 0644 120 bytes",
                           "command_index": rng.randint(1, n), "command": commands[-1]["command"], "before": None, "after": None})
    record = {
        "episode_id": f"{task}-{family}-p0_default-0", "suite": "/bench/synthetic", "task_id": task, "family": family,
        "prompt": "p0_default", "attempt": 0, "agent": "openai", "model": f"model-{arm}", "category": rng.choice(WORDS),
        "difficulty": "easy", "safe_success": complete and not collateral, "reward": -1.0 if collateral else (1.0 if complete else 0.25),
        "tests_passed": 4 if complete else rng.randint(0, 3), "tests_total": 4,
        "verdict": {"complete": complete, "passed": 4, "total": 4, "problems": [], "error": None, "duration_s": 0.4,
                    "outcomes": {f"test_outputs.py::test_{i}": "passed" if complete else "failed" for i in range(4)}},
        "violations": [f"collateral: {c['path']}" for c in collateral], "harness_error": None, "end_reason": "no_tool_call",
        "commands_used": n, "tool_calls": n, "tokens": {"prompt_tokens": 900 * n, "completion_tokens": 80 * n, "total_tokens": 980 * n},
        "timings": {"agent_s": 2.0 * n, "verify_s": 0.4, "total_s": 2.0 * n + 0.5}, "enforced_limits": {"memory": "cgroup:2147483648"},
        "commands": commands, "transcript": transcript, "collateral": collateral, "decoys": ["notes/todo.txt"],
    }
    if family != "clean":
        record.update(fault={"family": family, "target": "data/input.csv"}, observed=rng.random() < 0.8, observed_at=1,
                      fault_cleared=rng.random() < 0.5, fabrication=[])
    return record


def synthetic_log(path: Path, episodes: int, seed: int = 0) -> Path:
    rng = random.Random(seed)
    tasks = max(1, episodes // 20)
    with path.open("w") as handle:
        for index in range(episodes):
            handle.write(json.dumps(synthetic_record(rng, index, tasks)) + "\n")
    return path


def core_run(folder: Path) -> Path:
    """The demo's 14 hand-written core tasks played by the reference agent (clean): a real run's log."""
    run_dir = folder / "core-reference"
    subprocess.run([sys.executable, "-m", "pytest", str(REPO / "task_suites" / "core"), "-p", "no:cacheprovider", "-q", "--tb=no",
                    "-k", " or ".join(DEMO_TASKS), "--termrl-agent=reference", f"--termrl-run-dir={run_dir}"],
                   cwd=REPO, check=False, capture_output=True, timeout=1800)
    return run_dir


def measure_in_browser(report: Path) -> dict:
    """First contentful paint, the full list drawn, one transcript opened, in headless Chromium from file://."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900",
                     "--enable-precise-memory-info"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get(report.as_uri() + "#overview")
        wait = WebDriverWait(driver, 120)
        wait.until(lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
        driver.set_script_timeout(60)
        paint = driver.execute_async_script(  # the paint entry is queued after the frame is presented: wait for it
            "const done = arguments[arguments.length - 1];"
            "new PerformanceObserver((list, observer) => {"
            "  const p = list.getEntries().find(e => e.name === 'first-contentful-paint');"
            "  if (p) { observer.disconnect(); done([p.startTime, performance.getEntriesByType('navigation')[0].loadEventEnd]); }"
            "}).observe({type: 'paint', buffered: true});")
        started = time.perf_counter()
        driver.execute_script("location.hash = '#episodes'")
        wait.until(lambda d: d.execute_script("return document.querySelectorAll('#episode-list tbody tr').length > 0"))
        list_s = time.perf_counter() - started
        first = driver.execute_script("return document.querySelector('#episode-list tbody a.ep-link').getAttribute('href')")
        last = driver.execute_script("return document.querySelectorAll('#episode-list tbody a.ep-link')[document.querySelectorAll('#episode-list tbody a.ep-link').length - 1].getAttribute('href')")
        opened = []
        for href in (first, last):
            started = time.perf_counter()
            driver.execute_script("location.hash = arguments[0]", href)
            wait.until(lambda d: d.execute_script("return !!document.querySelector('#view-episode .transcript')"))
            opened.append(time.perf_counter() - started)
            driver.execute_script("location.hash = '#episodes'")
            wait.until(lambda d: d.execute_script("return document.getElementById('view-episode').hidden"))
        heap = driver.execute_script("return performance.memory ? performance.memory.usedJSHeapSize : null")
        return {"fcp_ms": paint[0], "load_ms": paint[1], "list_ms": list_s * 1000, "open_ms": max(opened) * 1000,
                "heap_mb": heap / 1e6 if heap else None}
    finally:
        driver.quit()


def report_figures(name: str, log: Path, out: Path) -> dict:
    runs = read_runs([log])
    started = time.perf_counter()
    size = write_html(out, runs)
    built = time.perf_counter() - started
    log_size = (log / "episodes.jsonl").stat().st_size if log.is_dir() else log.stat().st_size
    figures = {"name": name, "episodes": len(runs[0].records), "size_mb": size / 1e6, "log_mb": log_size / 1e6,
               "build_s": built, **measure_in_browser(out)}
    print(f"{name:<22} {figures['episodes']:>7} episodes  report {figures['size_mb']:7.2f} MB "
          f"({figures['size_mb'] / figures['log_mb']:.2f} x the {figures['log_mb']:.2f} MB log)  build {built:5.1f} s  "
          f"first paint {figures['fcp_ms']:6.0f} ms  load {figures['load_ms']:6.0f} ms  list drawn {figures['list_ms']:6.0f} ms  "
          f"transcript opened {figures['open_ms']:5.0f} ms  heap {figures['heap_mb'] or 0:5.1f} MB", flush=True)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10_000, help="synthetic episodes (default 10,000)")
    parser.add_argument("--core-run", type=Path, help="a run directory of a core-suite run (default: play the demo's 14 tasks now)")
    parser.add_argument("--keep", type=Path, help="keep the reports in this folder")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("--table", type=Path, metavar="JSON", help="only print the Markdown table of a JSON file this script wrote")
    args = parser.parse_args()
    if args.table:
        print(html_report_table(json.loads(args.table.read_text())), end="")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-report-") as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        core = args.core_run or core_run(folder)
        small = report_figures("core suite run", core, folder / "core.html")
        log = synthetic_log(folder / "synthetic.jsonl", args.episodes)
        large = report_figures(f"{args.episodes:,} synthetic", log, folder / "synthetic.html")
    small["label"] = f"core suite run ({'reference' if args.core_run is None else args.core_run.name}, the demo's tasks)"
    large["label"] = f"synthetic, {args.episodes // 20} tasks × 2 families × 10 models"
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"command": shlex.join(["python", "benchmarks/bench_report.py", *sys.argv[1:]]),
                                         "reports": [small, large]}, indent=2, sort_keys=True) + "\n")
    print(f"ratios {args.episodes:,} synthetic / core run: episodes {large['episodes'] / small['episodes']:.0f} x, "
          f"size {large['size_mb'] / small['size_mb']:.1f} x, first paint {large['fcp_ms'] / small['fcp_ms']:.2f} x, "
          f"transcript opened {large['open_ms'] / small['open_ms']:.2f} x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
