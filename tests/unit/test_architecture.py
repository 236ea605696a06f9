"""The shape of the package: no import loops, a pytest-free core, every module importable.

The import graph is read from the source (every import counts, deferred and TYPE_CHECKING
ones too), so a loop that only shows at run time in some order is caught here.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import pytest_termrl

PACKAGE = Path(pytest_termrl.__file__).parent
SANDBOX_SCRIPTS = {"pytest_termrl.verifier.inside.runner", "pytest_termrl.verifier.inside.script_runner"}
"""Run as scripts inside the verifier's sandbox (they are the trusted pytest's driver), never imported."""
CORE = ("tasks", "sandbox", "oracle", "faults", "verifier", "episode", "harness", "report.record", "accidents", "settings")
"""The pytest-free core: imports nothing from pytest, plugin/ or modes/."""
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


@pytest.mark.parametrize("name", [n for n in MODULES if n not in SANDBOX_SCRIPTS and not n.endswith("__main__")])
def test_every_module_imports_and_says_its_job(name):
    module = importlib.import_module(name)
    assert (module.__doc__ or "").strip(), f"{name} has no docstring naming its job"
