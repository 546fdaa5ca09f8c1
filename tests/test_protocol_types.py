"""The state and move types each game declares (`Game[State, Move]`) against the values
it really makes: mypy trusts the declarations, so they are checked here at run time.

A game joins by being registered in `pbm.games`; nothing here names a game.
"""

from __future__ import annotations

import random
import types
import typing

import pytest

from pbm.games import GAMES, AnyGame, Game

PLIES = 400  # per option set, over as many random games as fit

CASES = [
    pytest.param(game, dict(options), id=f"{name}-{i}")
    for name, game in GAMES.items()
    for i, options in enumerate(game.example_options)
]


def declared_types(game: AnyGame) -> tuple[object, object]:
    """The (state, move) type arguments of the game's `Game[...]` base class."""
    # Python 3.11 has no types.get_original_bases; a class without the attribute has
    # no generic base, which the AssertionError below reports.
    bases: tuple[object, ...] = getattr(type(game), "__orig_bases__", ())
    for base in bases:
        if typing.get_origin(base) is Game:
            state, move = typing.get_args(base)
            return state, move
    raise AssertionError(f"{type(game).__name__} does not subclass Game[State, Move]")


def runtime_classes(annotation: object) -> tuple[type, ...]:
    """The classes an isinstance check needs for a type: `int | tuple[int, ...]` gives
    (int, tuple)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return tuple(c for arg in typing.get_args(annotation) for c in runtime_classes(arg))
    origin = typing.get_origin(annotation) or annotation
    assert isinstance(origin, type), f"{annotation!r} is not a concrete type"
    return (origin,)


@pytest.mark.parametrize("game", list(GAMES.values()), ids=list(GAMES))
def test_every_game_names_concrete_state_and_move_types(game: AnyGame) -> None:
    state, move = declared_types(game)
    for annotation in (state, move):
        assert not isinstance(annotation, typing.TypeVar), type(game).__name__
        assert runtime_classes(annotation)


@pytest.mark.parametrize(("game", "options"), CASES)
def test_states_and_moves_have_the_declared_types(game: AnyGame, options: dict) -> None:
    state_type, move_type = declared_types(game)
    state_classes, move_classes = runtime_classes(state_type), runtime_classes(move_type)
    rng = random.Random(1)
    state = game.new_state(**options)
    for _ in range(PLIES):
        assert isinstance(state, state_classes)
        if game.to_move(state) is None:
            state = game.new_state(**options)
            continue
        moves = game.legal_moves(state)
        assert all(isinstance(m, move_classes) for m in moves), moves
        move = rng.choice(moves)
        assert isinstance(game.parse_move(state, game.format_move(state, move)), move_classes)
        state = game.apply(state, move)
    assert isinstance(game.load(game.dump(state)), state_classes)
