"""The games pbm plays, met through one protocol (`pbm.games.base.Game`).

Every module in this package that defines a module-level `GAME` is registered, so a
new rules module joins the registry, the conformance suite and the benchmarks by
existing. `GAMES` maps canonical names to game objects; `get_game` also takes aliases.
Code that handles any game holds an `AnyGame`; a rules module's own types are on its
class (`Quarto` is a `Game[QuartoState, QuartoMove]`).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, TypeAlias

from pbm.games.base import (
    AmbiguousMoveError,
    Game,
    GameError,
    IllegalMoveError,
    InvalidMoveError,
    MoveError,
    OptionError,
    Outcome,
    PositionError,
    UnknownGameError,
)

# A game of any state and move types, for the server, the CLI and the tests.
AnyGame: TypeAlias = Game[Any, Any]

__all__ = [
    "GAMES",
    "AmbiguousMoveError",
    "AnyGame",
    "Game",
    "GameError",
    "IllegalMoveError",
    "InvalidMoveError",
    "MoveError",
    "OptionError",
    "Outcome",
    "PositionError",
    "UnknownGameError",
    "find_game",
    "get_game",
]


def _discover() -> dict[str, AnyGame]:
    games: dict[str, AnyGame] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        game = getattr(module, "GAME", None)
        if isinstance(game, Game):
            games[game.name] = game
    return games


GAMES: dict[str, AnyGame] = _discover()

_BY_ALIAS: dict[str, AnyGame] = {}
for _game in GAMES.values():
    for _alias in (_game.name, _game.title, *_game.aliases):
        _BY_ALIAS[_alias.lower()] = _game


_VARIANTS: dict[str, tuple[AnyGame, dict[str, Any]]] = {
    alias.lower(): (_game, dict(options))
    for _game in GAMES.values()
    for alias, options in _game.variant_aliases.items()
}


def find_game(name: str) -> tuple[AnyGame, dict[str, Any]]:
    """The game a challenge names and the options the name stands for: a game name or
    alias gives no options, a variant name (`quadrupel-added`) gives its options."""
    # Players write variant names with '-', '_' or spaces between the words.
    key = "-".join(name.strip().lower().replace("_", " ").replace("-", " ").split())
    if key in _VARIANTS:
        game, options = _VARIANTS[key]
        return game, dict(options)
    return get_game(name), {}


def get_game(name: str) -> AnyGame:
    """The game called `name` (case-insensitive; aliases accepted)."""
    game = _BY_ALIAS.get(name.strip().lower())
    if game is None:
        known = ", ".join(sorted(GAMES)) or "none"
        raise UnknownGameError(f"there is no game called '{name}'; the games are: {known}")
    return game
