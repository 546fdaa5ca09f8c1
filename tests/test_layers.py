"""The package's layers call one way (docs/architecture.md): every module under pbm/ is
parsed with `ast`, its imports of other pbm modules collected (at module level, inside
functions, and by `importlib.import_module` or `__import__`), each with the packages
whose `__init__` it runs, and the graph checked. Nothing is imported, so a broken
module still shows up here as a layer fault rather than an import error."""

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
            "pbm.logfmt",
            "pbm.timecontrol",
            "pbm.games",
            "pbm.bots",
            "pbm.ratings",
            "pbm.tournaments",
            "pbm.pictures",
        ),
    ),
    ("settings", ("pbm.config", "pbm.texts", "pbm.errors")),
    ("transport", ("pbm.mail",)),
    ("store", ("pbm.store",)),
    ("services", ("pbm.services",)),
    ("commands", ("pbm.commands",)),
    (
        "application",
        (
            "pbm.pipeline",
            "pbm.trust",
            "pbm.special_mail",
            "pbm.outgoing",
            "pbm.output_limits",
            "pbm.work",
            "pbm.intake",
            "pbm.jobs",
            "pbm.app",
            "pbm.privacy_jobs",
            "pbm.html_parts",
            "pbm.mailstore",
            "pbm.fair_lock",
            "pbm.runners",
            "pbm.daemon",
            "pbm.web",
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


def _load(name: str) -> set[str]:
    """The pbm modules that loading `name` runs: the deepest pbm module it names and
    every package above it (`import pbm.x.y` runs `pbm/x/__init__.py` first), bar
    `pbm` itself, which holds nothing."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    found: set[str] = set()
    while name and name != "pbm" and name.startswith("pbm."):
        found.add(name)
        name = name.rpartition(".")[0]
    return found


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The pbm modules an import statement runs (a `from package import submodule`
    names the submodule, and runs the package too)."""
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
        found |= _load(name)
    return found - {module}


# `importlib.import_module("pbm.x")` and `__import__("pbm.x")`: imports all the same.
_DYNAMIC = {"import_module", "__import__"}


def _dynamic(node: ast.Call) -> str | None:
    """The module a call imports by name ("" when the name is not a constant), or None
    when the call imports nothing."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name not in _DYNAMIC:
        return None
    first = node.args[0] if node.args else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return ""


def parse_imports(module: str, source: str) -> tuple[set[str], list[tuple[str, int]], list[int]]:
    """One module's imports: those run when it loads (including those under `if
    TYPE_CHECKING:`), those inside functions as (target, line), and the lines of
    imports by a name that is not a constant (which no reader can check)."""
    tree = ast.parse(source)
    loaded: set[str] = set()
    late: list[tuple[str, int]] = []
    unknown: list[int] = []
    inside: set[int] = set()
    for func in ast.walk(tree):
        if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            for node in ast.walk(func):
                inside.add(id(node))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            targets = _targets(module, node)
        elif isinstance(node, ast.Call):
            named = _dynamic(node)
            if named is None:
                continue
            if named == "":
                unknown.append(node.lineno)
                continue
            targets = _load(named) - {module}
        else:
            continue
        if id(node) in inside:
            late.extend((t, node.lineno) for t in targets)
        else:
            loaded |= targets
    return loaded, late, unknown


def _imports() -> tuple[dict[str, set[str]], list[tuple[str, str, int]], list[str]]:
    """The imports a module runs when it loads, by module; the imports found inside
    functions as (module, target, line); the imports by a name no reader can check."""
    graph: dict[str, set[str]] = {}
    late: list[tuple[str, str, int]] = []
    unknown: list[str] = []
    for module, path in MODULES.items():
        loaded, inner, dynamic = parse_imports(module, path.read_text(encoding="utf-8"))
        graph[module] = loaded
        late.extend((module, target, line) for target, line in inner)
        unknown.extend(f"{module}:{line}" for line in dynamic)
    return graph, late, unknown


GRAPH, LATE, UNKNOWN = _imports()


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
    """Package `__init__`s count: a module that imports `pbm.x.y` runs `pbm.x` first."""
    assert _cycles(GRAPH) == []


# pbm.cli.lazy imports a command's module by the name pbm.cli.COMMANDS gives it, always
# under pbm.cli (its PACKAGE): the top layer, which nothing imports.
COMPUTED_IMPORTS_UNDER_CLI = {"pbm.cli.lazy"}


def test_every_import_names_its_module() -> None:
    """An import by a computed name (importlib) hides its edge from these checks."""
    assert [u for u in UNKNOWN if u.split(":")[0] not in COMPUTED_IMPORTS_UNDER_CLI] == []


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


def _only(
    package: str,
    allowed: tuple[str, ...],
    graph: dict[str, set[str]] = GRAPH,
    late: list[tuple[str, str, int]] = LATE,
) -> list[str]:
    """The imports of `package`'s modules (late ones too) outside `allowed`."""
    return sorted(
        f"{module} imports {target}"
        for module, target in _imports_of(package, graph, late)
        if target.partition(".")[2].partition(".")[0] not in allowed
    )


def _imports_of(
    package: str, graph: dict[str, set[str]], late: list[tuple[str, str, int]]
) -> list[tuple[str, str]]:
    """(module, target) for every import of `package`'s modules, late ones too."""
    edges = [(m, t) for m, targets in graph.items() for t in targets]
    edges += [(m, t) for m, t, _line in late]
    return [(m, t) for m, t in edges if m == package or m.startswith(package + ".")]


def test_games_know_nothing_else_of_pbm() -> None:
    """The rules engines are the bottom of the house: not even the ratings."""
    assert _only("pbm.games", ("games",)) == []


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


# The row classes a command names in its signatures (the User it answers for, the
# Tournament it shows): services hand these rows back, so naming their class bypasses
# nothing. What a command must not do is read or write the store itself.
COMMANDS_MAY_NAME = {"pbm.store", "pbm.store.models", "pbm.store.models_tournament"}


def _commands_store_imports(
    graph: dict[str, set[str]] = GRAPH, late: list[tuple[str, str, int]] = LATE
) -> list[str]:
    """The imports of pbm.store by the commands beyond the row classes they name."""
    return sorted(
        f"{module} imports {target}"
        for module, target in _imports_of("pbm.commands", graph, late)
        if target.startswith("pbm.store") and target not in COMMANDS_MAY_NAME
    )


def test_commands_call_services_not_the_store() -> None:
    """A command asks a service (issue 24): no queries, engine or session of its own,
    and no SQL toolkit to build one with."""
    assert _commands_store_imports() == []
    toolkits = sorted(
        f"{module} imports {name}"
        for module, path in MODULES.items()
        if module.startswith("pbm.commands.")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for name in (
            [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        )
        if name.partition(".")[0] in ("sqlmodel", "sqlalchemy")
    )
    assert toolkits == []
    # The check sees a command that reads the store.
    loaded, _, _ = parse_imports("pbm.commands.lists", "from pbm.store import queries\n")
    assert _commands_store_imports({**GRAPH, "pbm.commands.lists": loaded}) == [
        "pbm.commands.lists imports pbm.store.queries"
    ]


def _upward(module: str, targets: set[str]) -> list[str]:
    return sorted(t for t in targets if layer_of(t) > layer_of(module))


def test_the_checks_see_a_fault() -> None:
    """The checker itself: a bad import of each kind, fed to the parser, is caught."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert layer_of("pbm.store.queries") > layer_of("pbm.mail.compose")
    assert layer_of("pbm.services.play.moves") < layer_of("pbm.commands.play")
    assert layer_of("pbm.games.quarto") == 0
    # Module level, upward: a rules module that reads the store (and runs its package).
    loaded, late, unknown = parse_imports("pbm.games.quarto", "from pbm.store import queries\n")
    assert _upward("pbm.games.quarto", loaded) == ["pbm.store", "pbm.store.queries"]
    assert (late, unknown) == ([], [])
    # Inside a function: seen, and kept apart as a late import.
    source = "def f():\n    import pbm.store.engine\n"
    loaded, late, _ = parse_imports("pbm.services.play.moves", source)
    assert loaded == set() and sorted(late) == [("pbm.store", 2), ("pbm.store.engine", 2)]
    # importlib, by a constant name (an edge like any import) or a computed one.
    source = "import importlib\nimportlib.import_module('pbm.services.play.moves')\n"
    loaded, _, _ = parse_imports("pbm.store.engine", source)
    assert _upward("pbm.store.engine", loaded) == [
        "pbm.services",
        "pbm.services.play",
        "pbm.services.play.moves",
    ]
    source = "from importlib import import_module\nimport_module(f'pbm.games.{name}')\n"
    assert parse_imports("pbm.games", source)[2] == [2]
    # A package __init__ cycle: pbm/services/__init__.py importing one of its modules,
    # which runs the package again through any import of its siblings.
    loaded, _, _ = parse_imports("pbm.services", "from pbm.services.play import moves\n")
    assert loaded == {"pbm.services.play", "pbm.services.play.moves"}
    cycles = _cycles({**GRAPH, "pbm.services": loaded})
    assert any({"pbm.services", "pbm.services.play.moves"} <= set(c) for c in cycles)
    # A rules module that imports the ratings (the old allowance) is caught.
    loaded, _, _ = parse_imports("pbm.games.quarto", "from pbm.ratings import glicko2\n")
    assert _upward("pbm.games.quarto", loaded) == []  # one layer: the games' own rule sees it
    assert _only("pbm.games", ("games",), {**GRAPH, "pbm.games.quarto": loaded}) == [
        "pbm.games.quarto imports pbm.ratings",
        "pbm.games.quarto imports pbm.ratings.glicko2",
    ]


def test_bots_and_pictures_use_only_the_games_board_api() -> None:
    """A game's fast board code (`*_board`, `*_lines`, `*_pieces`) is private to the
    game: bots and pictures import the game module's `__all__` names only, so a board's
    representation changes in one package (docs/protocol.md, "Board API")."""
    private = ("_board", "_lines", "_pieces")
    users = [m for m in MODULES if m.partition(".")[2].partition(".")[0] in ("bots", "pictures")]
    found = [
        f"{module} imports {target}"
        for module in users
        for target in sorted(GRAPH[module])
        if target.startswith("pbm.games.") and target.endswith(private)
    ]
    for module in users:
        tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.module not in MODULES:
                continue
            if not node.module.startswith("pbm.games."):
                continue
            public = _all_of(node.module)
            if public is None:
                continue
            found += [
                f"{module} imports {node.module}.{alias.name}, not in its __all__"
                for alias in node.names
                if alias.name not in public
            ]
    assert found == []
    assert _all_of("pbm.games.quarto"), "the games list their board API in __all__"


def _all_of(module: str) -> set[str] | None:
    """The names a module's `__all__` lists, or None if it has none."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    return None
