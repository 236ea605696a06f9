"""The shape of the package: no import loops, a pytest-free core, modes below the plugin,
sandbox-side code on the standard library alone, every module importable.

The import graph is read from the source (every import counts, deferred and TYPE_CHECKING
ones too), so a loop that only shows at run time in some order is caught here.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

import pytest_termrl

PACKAGE = Path(pytest_termrl.__file__).parent
SANDBOX_SCRIPTS = {
    "pytest_termrl.verifier.inside.runner",  # the trusted pytest's driver in the verifier's sandbox
    "pytest_termrl.verifier.inside.script_runner",  # a script grader's driver in the verifier's sandbox
    "pytest_termrl.standins.inside.tools",  # python -I tools.py TOOL ...: the installers' stand-ins (also read by the importer)
}
"""Run as scripts inside a sandbox, by file path; the inside rule below says what they may import."""
CORE = ("tasks", "sandbox", "oracle", "faults", "verifier", "episode", "harness", "report.record", "report.verdict_record", "report.failure", "settings",
        "validity", "standins", "serving", "registry")
"""The pytest-free core: imports nothing from pytest, plugin/ or modes/."""
INSIDE = ("pytest_termrl.verifier.inside", "pytest_termrl.standins.inside")
"""What runs inside a sandbox as scripts: the standard library, the trusted toolchain and its own folder's siblings."""
TRUSTED_TOOLCHAIN = {"pytest", "_pytest", "pluggy", "packaging"}
"""The harness's own toolchain, mounted read-only beside the runners (packaging only where its absence is handled)."""
CROSS_FOLDER = {("pytest_termrl.verifier.inside.script_runner", "tools")}
"""(module, bare name) of the one sibling that lives in another folder: the stand-ins' folder (standins/inside)
is mounted beside the runners in the verifier's sandbox (script_runner.STANDINS_AT, put on sys.path for that
import), so the script runner reads the stand-ins' table from tools.py by bare name."""
NOT_CORE = {"pytest_termrl.sandbox.conformance"}
"""The backend conformance suite is a pytest module shipped beside the sandboxes."""


def _modules() -> dict[str, Path]:
    mods = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


MODULES = _modules()


def _targets(name: str, path: Path) -> set[str]:
    """The package's own modules that ``name`` imports (a name imported from a package counts as its module)."""
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            candidates = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = name.split(".") if is_pkg else name.split(".")[:-1]
            if node.level:
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            candidates = [prefix] + [f"{prefix}.{a.name}" for a in node.names]
        else:
            continue
        for candidate in candidates:
            while candidate and candidate not in MODULES:
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name and not name.startswith(candidate + "."):
                out.add(candidate)
    return out


def _raw_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
    return names


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_planted_loop():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_loop_among_the_packages_own_modules():
    edges = {name: {t for t in _targets(name, path) if not (MODULES[t].name == "__init__.py" and name.startswith(t + "."))}
             for name, path in MODULES.items()}
    assert _cycles(edges) == []


def _is_core(name: str) -> bool:
    if name in NOT_CORE or any(name.startswith(n + ".") for n in NOT_CORE) or name in SANDBOX_SCRIPTS:
        return False
    return any(name == f"pytest_termrl.{c}" or name.startswith(f"pytest_termrl.{c}.") for c in CORE)


@pytest.mark.parametrize("name", [n for n in MODULES if _is_core(n)])
def test_the_core_imports_nothing_from_pytest_the_plugin_or_the_modes(name):
    path = MODULES[name]
    raw = _raw_imports(path)
    assert not {n for n in raw if n == "pytest" or n.startswith(("pytest.", "_pytest"))}, f"{name} imports pytest"
    shell = {t for t in _targets(name, path) if t.startswith(("pytest_termrl.plugin", "pytest_termrl.modes"))}
    assert not shell, f"{name} imports the pytest shell: {sorted(shell)}"


def test_every_core_name_is_one_of_the_packages_modules():
    assert [c for c in CORE if f"pytest_termrl.{c}" not in MODULES] == []
    assert sorted(SANDBOX_SCRIPTS - set(MODULES)) == []


def _arrows(edges: dict[str, set[str]], source: str, target: str) -> list[tuple[str, str]]:
    """Every import from a module of ``source`` (a package) to a module of ``target``."""
    def within(name: str, package: str) -> bool:
        return name == package or name.startswith(package + ".")

    return sorted((a, b) for a, bs in edges.items() if within(a, source) for b in bs if within(b, target))


def test_the_arrow_finder_finds_a_planted_modes_to_plugin_import(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text('"""A mode that reaches up."""\n\n\ndef families(config):\n'
                       '    from ..plugin.keys import termrl_options\n\n    return termrl_options(config).families\n')
    edges = {"pytest_termrl.modes.planted": _targets("pytest_termrl.modes.planted", planted),
             "pytest_termrl.plugin.hooks": {"pytest_termrl.modes"}}
    assert _arrows(edges, "pytest_termrl.modes", "pytest_termrl.plugin") == [("pytest_termrl.modes.planted", "pytest_termrl.plugin.keys")]
    assert _arrows(edges, "pytest_termrl.plugin", "pytest_termrl.modes") == [("pytest_termrl.plugin.hooks", "pytest_termrl.modes")]


def test_the_modes_never_import_the_plugin():
    edges = {name: _targets(name, path) for name, path in MODULES.items()}
    assert [n for n in MODULES if n.startswith("pytest_termrl.modes.")], "no mode modules found"
    assert _arrows(edges, "pytest_termrl.modes", "pytest_termrl.plugin") == []


def test_the_report_never_imports_the_episode_loop():
    """The arrow runs episode -> report: the report words and records what an episode hands it."""
    edges = {name: _targets(name, path) for name, path in MODULES.items()}
    assert _arrows(edges, "pytest_termrl.report", "pytest_termrl.episode") == []


def _outside_imports(name: str, path: Path) -> list[str]:
    """What an inside module imports beyond the standard library, the trusted toolchain and its folder's siblings."""
    folder = path.parent
    siblings = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"} | {p.name for p in folder.iterdir() if p.is_dir() and p.name != "__pycache__"}
    bad = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            bad.append(f"line {node.lineno}: relative import (it runs as a script: siblings by bare name)")
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        for imported in names:
            top = imported.partition(".")[0]
            if top in sys.stdlib_module_names or top in TRUSTED_TOOLCHAIN or (name, top) in CROSS_FOLDER:
                continue
            if top in siblings:
                continue
            bad.append(f"line {node.lineno}: {imported}")
    return bad


def _is_inside(name: str) -> bool:
    return any(name == n or name.startswith(n + ".") for n in INSIDE)


def test_the_inside_rule_catches_planted_imports(tmp_path):
    folder = tmp_path / "inside"
    folder.mkdir()
    (folder / "channel.py").write_text("")
    planted = folder / "runner.py"
    planted.write_text("import os\nimport channel\nimport pytest\nfrom _pytest.config import main\n"
                       "from packaging.version import Version\n\n\ndef main():\n    import tools\n"
                       "    from pytest_termrl.verifier.inside import channel\n    from . import blame\n    import yaml\n")
    assert _outside_imports("pytest_termrl.verifier.inside.runner", planted) == [
        "line 9: tools", "line 10: pytest_termrl.verifier.inside",
        "line 11: relative import (it runs as a script: siblings by bare name)", "line 12: yaml",
    ]
    assert _outside_imports("pytest_termrl.verifier.inside.script_runner", planted) == [
        "line 10: pytest_termrl.verifier.inside",
        "line 11: relative import (it runs as a script: siblings by bare name)", "line 12: yaml",
    ]


@pytest.mark.parametrize("name", [n for n in MODULES if _is_inside(n)])
def test_what_runs_inside_a_sandbox_imports_the_standard_library_the_toolchain_and_siblings(name):
    assert _outside_imports(name, MODULES[name]) == []


def test_the_inside_folders_hold_the_sandbox_scripts():
    inside = {n for n in MODULES if _is_inside(n)}
    assert SANDBOX_SCRIPTS <= inside
    assert {"pytest_termrl.verifier.inside.blame", "pytest_termrl.verifier.inside.channel"} <= inside


@pytest.mark.parametrize("name", [n for n in MODULES if n not in SANDBOX_SCRIPTS and not n.endswith("__main__")])
def test_every_module_imports_and_says_its_job(name):
    module = importlib.import_module(name)
    assert (module.__doc__ or "").strip(), f"{name} has no docstring naming its job"
