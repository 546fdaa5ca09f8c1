"""Walking the game tree through the protocol: perft counts and random playouts."""

from __future__ import annotations

import random
from collections.abc import Iterator

from pbm.games.base import Game, State


def perft(game: Game, state: State, depth: int) -> int:
    """Number of move sequences of exactly `depth` plies from `state` (games that end
    earlier contribute nothing beyond their end)."""
    if depth == 0:
        return 1
    if game.to_move(state) is None:
        return 0
    moves = game.legal_moves(state)
    if depth == 1:
        return len(moves)
    return sum(perft(game, game.apply(state, m), depth - 1) for m in moves)


def random_playout(
    game: Game, state: State, rng: random.Random, max_plies: int
) -> Iterator[tuple[State, object]]:
    """Yield (state before, move) for a random game from `state`, at most `max_plies`."""
    for _ in range(max_plies):
        if game.to_move(state) is None:
            return
        move = rng.choice(game.legal_moves(state))
        yield state, move
        state = game.apply(state, move)
