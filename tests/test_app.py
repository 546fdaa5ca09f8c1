"""The composition root (pbm.app): importing any pbm module registers nothing, and
`register` fills every registry in the order pbm.app writes, once."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Imports every pbm module, prints the registries, registers twice, prints them again.
PROBE = """
import importlib, json, pkgutil
import pbm
for info in pkgutil.walk_packages(pbm.__path__, "pbm."):
    if info.name not in ("pbm.__main__",):
        importlib.import_module(info.name)
from pbm.commands import registry
from pbm.games import GAMES
from pbm.services.play import endings

def state():
    return {
        "games": list(GAMES),
        "commands": [c.name for c in [*registry.ACCOUNT_COMMANDS, *registry.GAME_COMMANDS]],
        "groups": list(registry.HELP_GROUPS),
        "handlers": [h.__name__ for h in endings._HANDLERS],
    }

before = state()
from pbm.app import register
register()
once = state()
register()
print(json.dumps([before, once, state()]))
"""


def test_importing_registers_nothing_until_register() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, check=True
    )
    before, once, twice = json.loads(out.stdout)
    assert before == {"games": [], "commands": [], "groups": [], "handlers": []}
    assert once["games"] == ["quad", "quadrature", "quadrupel", "quarod", "quarto"]
    assert once["groups"] == [
        "help_group_account_account",
        "help_group_account_export",
        "help_group_account_erase",
        "help_group_account_correspondence",
        "help_group_account_tournament",
        "help_group_game_play",
        "help_group_game_lists",
        "help_group_game_correspondence",
        "help_group_game_ask",
    ]
    assert once["handlers"] == ["_rate", "game_ended", "_continue_match"]
    assert once["commands"][:3] == ["signup", "confirm", "notme"]
    assert twice == once


def test_only_the_composition_root_chooses_the_templates() -> None:
    """`pbm.texts.use_templates` is process state: `pbm.app.initialize` sets it once for
    the daemon, the command line and the tests, and no other module of pbm calls it."""
    callers = []
    for path in sorted((ROOT / "pbm").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            named = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
            imported = isinstance(node, ast.alias) and node.name == "use_templates"
            if named == "use_templates" or imported:
                callers.append(path.relative_to(ROOT).as_posix())
    assert sorted(set(callers)) == ["pbm/app.py"]  # pbm/texts.py defines it, calls it not
