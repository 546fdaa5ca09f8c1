"""The package's layers call one way (docs/architecture.md): every module under pbm/ is
parsed with `ast`, its imports of other pbm modules collected (at module level, and
inside functions), and the graph checked. Nothing is imported, so a broken module
still shows up here as a layer fault rather than an import error."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "pbm"

# Lowest first: a module may import its own layer or lower ones.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "pure",
        (
            "pbm",
            "pbm.clock",
            "pbm.errors",
            "pbm.logfmt",
            "pbm.timecontrol",
            "pbm.games",
            "pbm.bots",
            "pbm.ratings",
            "pbm.tournaments",
            "pbm.pictures",
        ),
    ),
    ("settings", ("pbm.config", "pbm.texts")),
    ("transport", ("pbm.mail",)),
    ("store", ("pbm.store",)),
    ("services", ("pbm.services",)),
    ("commands", ("pbm.commands",)),
    (
        "application",
        (
            "pbm.pipeline",
            "pbm.output_limits",
            "pbm.intake",
            "pbm.jobs",
            "pbm.privacy_jobs",
            "pbm.mailstore",
            "pbm.daemon",
        ),
    ),
    ("cli", ("pbm.cli", "pbm.__main__")),
]


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def layer_of(module: str) -> int:
    """The index in LAYERS of the longest prefix that names `module`."""
    best, best_len = -1, -1
    for index, (_name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            matches = module == prefix or (prefix != "pbm" and module.startswith(prefix + "."))
            if matches and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    if best < 0:
        raise AssertionError(f"{module} is in no layer of tests/test_layers.py")
    return best


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The pbm modules an import statement loads (a `from package import submodule`
    names the submodule, not the package)."""
    names: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            names.add(alias.name)
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".")
            if MODULES[module].name != "__init__.py":
                package = package[:-1]
            package = package[: len(package) - (node.level - 1)]
            base = ".".join([*package, base] if base else package)
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            names.add(sub if sub in MODULES else base)
    found: set[str] = set()
    for name in names:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name and name.startswith("pbm") and name != module:
            found.add(name)
    return found


def _imports() -> tuple[dict[str, set[str]], list[tuple[str, str, int]]]:
    """Module-level imports (including those under `if TYPE_CHECKING:`) by module, and
    the imports found inside functions as (module, target, line)."""
    graph: dict[str, set[str]] = {}
    late: list[tuple[str, str, int]] = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        graph[module] = set()
        inside: set[int] = set()
        for func in ast.walk(tree):
            if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                for node in ast.walk(func):
                    if isinstance(node, ast.Import | ast.ImportFrom):
                        inside.add(id(node))
                        late.extend((module, t, node.lineno) for t in _targets(module, node))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in inside:
                graph[module] |= _targets(module, node)
    return graph, late


GRAPH, LATE = _imports()


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_no_import_inside_a_function_outside_the_cli() -> None:
    """Only the CLI imports lazily (to start fast: an MTA runs `pbm mail process` once
    per message); anywhere else a late import hides a cycle."""
    late = [
        f"{module}:{line} imports {target}"
        for module, target, line in LATE
        if not (module == "pbm.cli" or module.startswith("pbm.cli."))
    ]
    assert late == []


def test_no_import_cycle() -> None:
    assert _cycles(GRAPH) == []


def test_layers_call_down_only() -> None:
    upward = [
        f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for module, targets in sorted(GRAPH.items())
        for target in sorted(targets)
        if layer_of(target) > layer_of(module)
    ]
    assert upward == []


def test_mail_knows_no_database_and_no_game() -> None:
    forbidden = ("pbm.store", "pbm.services", "pbm.commands", "pbm.games")
    found = [
        f"{module} imports {target}"
        for module, targets in sorted(GRAPH.items())
        if module == "pbm.mail" or module.startswith("pbm.mail.")
        for target in sorted(targets)
        if any(target == f or target.startswith(f + ".") for f in forbidden)
    ]
    assert found == []


def test_pictures_know_only_the_games() -> None:
    """The board pictures draw what the rules engines hold, and nothing else of pbm."""
    found = [
        f"{module} imports {target}"
        for module, targets in sorted(GRAPH.items())
        if module == "pbm.pictures" or module.startswith("pbm.pictures.")
        for target in sorted(targets)
        if target.partition(".")[2].partition(".")[0] not in ("games", "pictures")
    ]
    assert found == []


def test_bots_know_only_the_games() -> None:
    """The computer players meet the games through the game protocol, and nothing else
    of pbm: the server calls them, never the other way round."""
    found = [
        f"{module} imports {target}"
        for module, targets in sorted(GRAPH.items())
        if module == "pbm.bots" or module.startswith("pbm.bots.")
        for target in sorted(targets)
        if target.partition(".")[2].partition(".")[0] not in ("games", "bots")
    ]
    assert found == []


def test_the_checks_see_a_fault() -> None:
    """The checker itself: a made-up cycle and an upward import are found."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert layer_of("pbm.store.queries") > layer_of("pbm.mail.compose")
    assert layer_of("pbm.services.play") < layer_of("pbm.commands.play")
    assert layer_of("pbm.games.quarto") == 0
