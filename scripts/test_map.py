"""Writes docs/testing.md's map: for each pbm module with no test module of its name
(tests/**/test_<module>.py), the test files that import it, or, when none does, those
that import a pbm module importing it (it is tested through that one).

    python scripts/test_map.py          # print the map
    python scripts/test_map.py --write  # rewrite it in docs/testing.md

tests/test_test_map.py fails when docs/testing.md differs from what this prints.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "testing.md"
BEGIN = "<!-- map: scripts/test_map.py --write -->"
END = "<!-- end of map -->"
SHOWN = 4  # test files named per module; the rest are counted


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The pbm modules `path` imports (`from pbm.x import y` counts pbm.x.y if a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module in modules:
                found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found & modules


def pbm_modules() -> dict[str, Path]:
    """Every pbm module with code, by name (a package by its `__init__`, when it has code)."""
    found = {}
    for path in sorted((ROOT / "pbm").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        body = [n for n in tree.body if not isinstance(n, (ast.Expr, ast.ImportFrom, ast.Import))]
        if body:
            found[_module_name(path)] = path
    return found


def same_named(name: str) -> list[Path]:
    """tests/**/test_<last part of the module's name>.py."""
    return sorted((ROOT / "tests").rglob(f"test_{name.rpartition('.')[2]}.py"))


def build() -> list[tuple[str, list[str]]]:
    """(module, the test files that cover it) for each module without a same-named test."""
    modules = pbm_modules()
    names = set(modules)
    tests_of: dict[str, set[str]] = defaultdict(set)
    for test in sorted((ROOT / "tests").rglob("*.py")):
        for module in _imports(test, names):
            tests_of[module].add(test.relative_to(ROOT).as_posix())
    importers: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for module in _imports(path, names):
            importers[module].add(name)
    # Loaded by name, not imported: the admin commands by pbm.cli's lazy group, the
    # migrations by alembic when the schema is made.
    for name in names:
        if name.startswith("pbm.cli."):
            importers[name].add("pbm.cli")
        if name.startswith("pbm.store.migrations."):
            importers[name].add("pbm.store.schema")
    rows = []
    for name in sorted(modules):
        if not same_named(name):
            rows.append((name, sorted(_covering(name, tests_of, importers))))
    return rows


def _covering(name: str, tests_of: dict[str, set[str]], importers: dict[str, set[str]]) -> set[str]:
    """The tests importing `name`, else those importing the nearest modules that import
    it (a breadth-first walk up the imports)."""
    seen, level = {name}, {name}
    while level:
        found = set().union(*(tests_of[m] for m in level))
        if found:
            return found
        level = set().union(*(importers[m] for m in level)) - seen
        seen |= level
    return set()


def render(rows: list[tuple[str, list[str]]]) -> str:
    lines = [BEGIN, "", "| module | tested by |", "| --- | --- |"]
    for name, tests in rows:
        shown = ", ".join(f"`{t}`" for t in tests[:SHOWN])
        more = f" and {len(tests) - SHOWN} more" if len(tests) > SHOWN else ""
        lines.append(f"| `{name}` | {shown or 'nothing yet'}{more} |")
    return "\n".join([*lines, "", END])


def current() -> str:
    """The map as docs/testing.md holds it now."""
    text = DOC.read_text(encoding="utf-8")
    return text[text.index(BEGIN) : text.index(END) + len(END)]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite docs/testing.md's map")
    args = parser.parse_args(argv)
    table = render(build())
    if args.write:
        DOC.write_text(DOC.read_text(encoding="utf-8").replace(current(), table), "utf-8")
    else:
        print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
