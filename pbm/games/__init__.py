"""The games pbm plays, met through one protocol (`pbm.games.base.Game`).

The composition root (pbm.app) registers every rules module's `GAME`, in the order it
lists them; the conformance suite and the benchmarks meet a game once it is there.
`GAMES` maps canonical names to game objects; `get_game` also takes aliases.
Code that handles any game holds an `AnyGame`; a rules module's own types are on its
class (`Quarto` is a `Game[QuartoState, QuartoMove]`).
"""

from __future__ import annotations

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
    "register_game",
]


# The registry, empty until the composition root (pbm.app) registers each game module's
# GAME: importing a rules module changes nothing.
GAMES: dict[str, AnyGame] = {}
_BY_ALIAS: dict[str, AnyGame] = {}
_VARIANTS: dict[str, tuple[AnyGame, dict[str, Any]]] = {}


def register_game(game: AnyGame) -> None:
    """Make `game` known by its name, title, aliases and variant names."""
    if GAMES.get(game.name) is game:
        return
    GAMES[game.name] = game
    for alias in (game.name, game.title, *game.aliases):
        _BY_ALIAS[alias.lower()] = game
    for alias, options in game.variant_aliases.items():
        _VARIANTS[alias.lower()] = (game, dict(options))


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
