"""Whose fault a hidden test file's collection error is: the grader's own (a harness error) or the agent's.

Runs inside the verifier sandbox next to runner.py (standard library only, imported by
path like channel.py), where the exception that stopped a test file from loading and the
interpreter's ``sys.path`` are at hand. The grader is to blame only when nothing the agent
wrote could have caused or cured the error:

1. a SyntaxError (IndentationError, TabError) in a file under the hidden tests folder,
   confirmed by compiling that file again (so an exception raised by other code and
   merely naming the file does not count);
2. an ImportError (ModuleNotFoundError included) raised at an ``import`` statement of a
   file under the tests folder, or a NameError raised by the code of such a file itself,
   while no folder on ``sys.path`` is in the agent's space (the home, $HOME, /tmp, less the
   harness's own read-only mounts): the
   module or name could then only have come from the trusted side (the tests folder, the
   harness's interpreter and site-packages).

Everything else stays the agent's failure: a module-level read of a file the agent was to
write (FileNotFoundError, KeyError...), an import of a module the test expects in the
home (the test put the home on ``sys.path``), a syntax error in the agent's own module.
"""

from __future__ import annotations

import ast
import os
import sys
import traceback


def _inside(path: str, folder: str) -> bool:
    path = os.path.realpath(path)
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def agent_space() -> set[str]:
    """The folders the agent's work lives in, inside the verifier sandbox."""
    roots = {os.path.realpath(p) for p in (os.getcwd(), os.environ.get("HOME") or os.getcwd(), "/tmp")}
    return {root for root in roots if root != "/"}


def trusted_roots() -> set[str]:
    """Folders mounted read-only from the harness: its interpreter, site-packages and runners.

    They may sit under /tmp on the host (a checkout there), and are mounted at the same path,
    so a path's place alone does not make it the agent's.
    """
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.abspath(__file__))}
    return {os.path.realpath(root) for root in roots if root}


def agent_on_path(path_entries: list[str] | None = None, tests_dir: str | None = None) -> bool:
    """Whether a folder the agent could fill is on ``sys.path`` (so an import may look for its code).

    The tests folder (pytest puts it on the path) is the grader's; an entry that is neither
    the working folder ('') nor a path that exists (an import hook's marker, such as an
    editable install's) names no folder at all.
    """
    roots, trusted = agent_space(), trusted_roots() | ({os.path.realpath(tests_dir)} if tests_dir else set())
    for entry in sys.path if path_entries is None else path_entries:
        if not isinstance(entry, str):
            continue
        if entry and not os.path.isabs(entry) and not os.path.exists(entry):
            continue
        entry = entry or "."
        if any(_inside(entry, root) for root in trusted):
            continue
        if any(_inside(entry, root) for root in roots):
            return True
    return False


def _at_import(path: str, line: int) -> bool:
    """Whether the statement at ``path:line`` is an ``import`` (not, say, a pickle.load that imports)."""
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read(), path)
    except (OSError, SyntaxError, ValueError):
        return False
    return any(
        isinstance(node, (ast.Import, ast.ImportFrom)) and node.lineno <= line <= (node.end_lineno or node.lineno)
        for node in ast.walk(tree)
    )


def _recompiled(filename: str) -> SyntaxError | None:
    """The SyntaxError compiling ``filename`` raises now, or None when it compiles."""
    try:
        with open(filename, "rb") as handle:
            compile(handle.read(), filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return exc
    except (OSError, ValueError):
        return None
    return None


def grader_fault(exc: BaseException, tests_dir: str, label: str = "tests") -> str | None:
    """'FILE:LINE: ...' when the collection error ``exc`` is the grader's own fault; None when it may be the agent's.

    ``exc`` is what collecting a test file raised (pytest's CollectError, whose cause is the
    original exception); FILE is shown as ``label/`` + its path under ``tests_dir``.
    """
    tests_dir = os.path.realpath(tests_dir)
    cause = exc.__cause__ if type(exc).__name__ == "CollectError" and exc.__cause__ is not None else exc

    def shown(path: str) -> str:
        return f"{label}/{os.path.relpath(os.path.realpath(path), tests_dir)}"

    if isinstance(cause, SyntaxError):
        if not cause.filename or not _inside(cause.filename, tests_dir):
            return None
        again = _recompiled(cause.filename)
        if again is None:
            return None
        return f"{shown(cause.filename)}:{again.lineno}: {type(again).__name__}: {again.msg}"
    if not isinstance(cause, (ImportError, NameError)) or agent_on_path(tests_dir=tests_dir):
        return None
    frames = [(frame.f_code.co_filename, line) for frame, line in traceback.walk_tb(cause.__traceback__)]
    ours = [(path, line) for path, line in frames if _inside(path, tests_dir)]
    if not ours:
        return None
    path, line = ours[-1]
    if isinstance(cause, NameError) and frames[-1] != ours[-1]:
        return None  # raised deeper, by code that is not the test file's own
    if isinstance(cause, ImportError) and not _at_import(path, line):
        return None
    return f"{type(cause).__name__}: {cause} ({shown(path)}:{line})"
