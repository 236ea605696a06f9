"""Share of fully annotated functions per top-level package of pytest_termrl.

A function (``def`` or ``async def``, methods and nested functions included) counts as
fully annotated when every parameter except a method's leading ``self``/``cls`` carries an
annotation and the function has a return annotation. Lambdas are not counted.

    python benchmarks/annotations.py [PATH]

PATH defaults to the ``pytest_termrl`` package beside this folder. Rows are the package's
top-level subpackages (``plugin``, ``modes``, ``verifier``...), ``(top)`` for modules
directly in the package, and the total.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

DEFAULT_ROOT = Path(__file__).resolve().parent.parent / "pytest_termrl"


def _fully_annotated(node: ast.FunctionDef | ast.AsyncFunctionDef, is_method: bool) -> bool:
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    if is_method and positional and positional[0].arg in ("self", "cls"):
        positional = positional[1:]
    params = [*positional, *args.kwonlyargs]
    if args.vararg is not None:
        params.append(args.vararg)
    if args.kwarg is not None:
        params.append(args.kwarg)
    return node.returns is not None and all(p.annotation is not None for p in params)


def count_file(path: Path) -> tuple[int, int]:
    """(functions, fully annotated functions) in one source file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    total = annotated = 0

    def visit(node: ast.AST, in_class: bool) -> None:
        nonlocal total, annotated
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                total += 1
                annotated += _fully_annotated(child, in_class)
                visit(child, False)
            elif isinstance(child, ast.ClassDef):
                visit(child, True)
            else:
                visit(child, in_class)

    visit(tree, False)
    return total, annotated


def measure(root: Path) -> dict[str, tuple[int, int]]:
    """Package name -> (functions, fully annotated), for each top-level part of root."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        package = rel.parts[0] if len(rel.parts) > 1 else "(top)"
        total, annotated = count_file(path)
        counts[package][0] += total
        counts[package][1] += annotated
    return {name: (t, a) for name, (t, a) in sorted(counts.items())}


def _share(total: int, annotated: int) -> str:
    return f"{100 * annotated / total:5.1f}%" if total else "    -"


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else DEFAULT_ROOT
    if not root.is_dir():
        print(f"not a folder: {root}", file=sys.stderr)
        return 2
    rows = measure(root)
    width = max([len("package"), len("total"), *map(len, rows)])
    print(f"{'package':<{width}}  {'functions':>9}  {'annotated':>9}  {'share':>6}")
    for name, (total, annotated) in rows.items():
        print(f"{name:<{width}}  {total:>9}  {annotated:>9}  {_share(total, annotated):>6}")
    grand = sum(t for t, _ in rows.values())
    grand_annotated = sum(a for _, a in rows.values())
    print(f"{'total':<{width}}  {grand:>9}  {grand_annotated:>9}  {_share(grand, grand_annotated):>6}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
