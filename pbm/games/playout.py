"""Walking the game tree through the protocol: perft counts."""

from __future__ import annotations

from pbm.games.base import Game, MoveT, StateT


def perft(game: Game[StateT, MoveT], state: StateT, depth: int) -> int:
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
