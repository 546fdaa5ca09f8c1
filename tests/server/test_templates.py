"""Every phrase and template the code names exists (a missing one would crash a reply).

The keys are read from the code's calls of `pbm.texts.phrase`, `prose` (a phrase
folded), `render` and `render_html` (their syntax trees, not a text search) and from
the registry of mail commands (`pbm.commands.registry`: help groups' titles, the
phrase a command answers with). A key the code computes is resolved where it is
chosen: a choice of literals (`"a" if x else "b"`), a variable or parameter given
literals in its function or at its callers, or an f-string (some phrase must fit it).
A call whose key cannot be resolved fails the test, so none is skipped silently."""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pbm.commands import registry
from pbm.config import PACKAGE_TEMPLATES

SOURCES = Path(__file__).resolve().parents[2] / "pbm"
# The functions that take a phrase's key; the others take a template's name.
PHRASE_FUNCTIONS = ("phrase", "prose")
FUNCTIONS = (*PHRASE_FUNCTIONS, "render", "render_html")
Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.Module


@dataclass(frozen=True)
class Call:
    """A call of one of pbm.texts' FUNCTIONS: where, and the key patterns it may ask."""

    where: str
    function: str
    asked: str  # the key's expression, as written
    keys: frozenset[str] | None  # regular expressions; None: not resolved


def _texts_names(tree: ast.Module) -> set[str]:
    """The FUNCTIONS this module imports from pbm.texts."""
    return {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module == "pbm.texts"
        for alias in node.names
        if alias.name in FUNCTIONS
    }


def _parents(tree: ast.Module) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _scope(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> Scope:
    while not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        node = parents[node]
    return node


def _resolve(expr: ast.expr, scope: Scope, tree: ast.Module) -> set[str] | None:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return {re.escape(expr.value)}
    if isinstance(expr, ast.IfExp):
        body, orelse = _resolve(expr.body, scope, tree), _resolve(expr.orelse, scope, tree)
        return None if body is None or orelse is None else body | orelse
    if isinstance(expr, ast.JoinedStr):
        parts = [
            re.escape(v.value)
            if isinstance(v, ast.Constant) and isinstance(v.value, str)
            else "[a-z_]+"
            for v in expr.values
        ]
        return {"".join(parts)}
    if isinstance(expr, ast.Name):
        return _name(expr.id, scope, tree)
    return None


def _name(name: str, scope: Scope, tree: ast.Module) -> set[str] | None:
    """What a variable is given in its function, or a parameter at its callers."""
    found: set[str] = set()
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            keys = _resolve(node.value, scope, tree)
            if keys is None:
                return None
            found |= keys
    if found or isinstance(scope, ast.Module):
        return found or None
    params = [a.arg for a in scope.args.args]
    if name not in params:
        return None
    index = params.index(name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == scope.name:
            given = [k.value for k in node.keywords if k.arg == name]
            given += node.args[index : index + 1]
            for arg in given:
                keys = _resolve(arg, _scope(node, _parents(tree)), tree)
                if keys is None:
                    return None
                found |= keys
    return found or None


def code_calls() -> Iterator[Call]:
    for path in sorted(SOURCES.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = _texts_names(tree)
        parents = _parents(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id not in names or not node.args:
                continue
            keys = _resolve(node.args[0], _scope(node, parents), tree)
            where = f"{path.relative_to(SOURCES.parent)}:{node.lineno}"
            asked = ast.unparse(node.args[0])
            yield Call(where, node.func.id, asked, None if keys is None else frozenset(keys))


def registry_phrases() -> set[str]:
    """The phrases the registered mail commands name: their help groups' titles and the
    answers of the commands that answer with a fixed phrase (`done`)."""
    used = set(registry.HELP_GROUPS)
    for command in [*registry.ACCOUNT_COMMANDS, *registry.GAME_COMMANDS]:
        # Only the commands that answer with a fixed phrase have `done`.
        done = getattr(command, "done", "")
        if done:
            used.add(done)
    return used


def _phrases() -> set[str]:
    text = (PACKAGE_TEMPLATES / "phrases.toml").read_text(encoding="utf-8")
    return set(tomllib.loads(text))


# Keys the code takes from the registry of mail commands (registry_phrases checks them):
# a command's fixed answer, and the help groups' titles.
FROM_REGISTRY = {("pbm/commands/account.py", "self.done"), ("pbm/commands/helptext.py", "key")}


def _unresolved(calls: list[Call]) -> list[str]:
    return [
        c.where
        for c in calls
        if c.keys is None and (c.where.partition(":")[0], c.asked) not in FROM_REGISTRY
    ]


def test_every_call_names_its_phrase_so_it_can_be_checked() -> None:
    calls = list(code_calls())
    assert len(calls) > 300
    assert _unresolved(calls) == []
    taken = {(c.where.partition(":")[0], c.asked) for c in calls if c.keys is None}
    assert taken == FROM_REGISTRY  # none listed that the code no longer has


def test_every_phrase_exists() -> None:
    phrases = _phrases()
    calls = [c for c in code_calls() if c.function in PHRASE_FUNCTIONS and c.keys is not None]
    missing = sorted(
        f"{c.where}: {key}"
        for c in calls
        for key in c.keys or ()
        if not any(re.fullmatch(key, p) for p in phrases)
    )
    assert missing == []
    assert registry_phrases() >= {"help_group_game_play", "confirmed"}
    assert sorted(registry_phrases() - phrases) == []


def test_every_template_exists() -> None:
    names = {f.stem for f in PACKAGE_TEMPLATES.iterdir()}
    calls = [c for c in code_calls() if c.function not in PHRASE_FUNCTIONS and c.keys is not None]
    assert {"board", "error", "help", "welcome"} <= {k for c in calls for k in c.keys or ()}
    missing = [c.where for c in calls if not all(k in names for k in c.keys or ())]
    assert missing == []


def test_an_unknown_key_is_found() -> None:
    tree = ast.parse('from pbm.texts import phrase\nkey = "no_such" if x else "nor_this"\n')
    (assign,) = [n for n in tree.body if isinstance(n, ast.Assign)]
    assert _resolve(assign.value, tree, tree) == {"no_such", "nor_this"}
    assert not ({"no_such", "nor_this"} & _phrases())
