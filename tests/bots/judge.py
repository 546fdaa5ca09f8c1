"""Judging bots' moves through the game protocol alone (apply, outcome, legal_moves),
never through the engine's own tactics: shared by the bots' tests and benchmarks."""

from __future__ import annotations

from pbm.games import AnyGame
from pbm.games.base import Move, State


def wins(game: AnyGame, state: State, move: Move) -> bool:
    """Whether `move` ends the game at once with a win for the seat that plays it."""
    outcome = game.outcome(game.apply(state, move))
    return outcome is not None and outcome.winner == game.to_move(state)


def allows_a_win(game: AnyGame, state: State, move: Move) -> bool:
    """Whether after `move` the other seat is to move and can win at once."""
    after = game.apply(state, move)
    nxt = game.to_move(after)
    if nxt is None or nxt == game.to_move(state):
        return False
    return any(wins(game, after, m) for m in game.legal_moves(after))


def move_value(game: AnyGame, state: State, move: Move) -> float:
    """The value of `move` for the seat that plays it under perfect play, by plain
    minimax (1 a win, 0.5 a draw, 0 a loss; turns alternate): for small positions."""
    mover = game.to_move(state)
    after = game.apply(state, move)
    outcome = game.outcome(after)
    if outcome is not None:
        return 0.5 if outcome.winner is None else float(outcome.winner == mover)
    best = 0.0
    for reply in game.legal_moves(after):
        best = max(best, move_value(game, after, reply))
        if best == 1.0:
            break
    return 1.0 - best
