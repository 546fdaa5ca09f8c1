"""The last move in a picture: which move led from one state to the next, its echo, and
the squares it touched as one seat sees them.

The marks come from the difference of the two views, so nothing the seat may not see
is marked: the squares the move's text names (from, to, placed, dropped, swapped) get
Mark.MOVE, every other square whose contents changed (converted, captured, released,
revealed) gets Mark.EFFECT.
"""

from __future__ import annotations

from pbm.games import AnyGame
from pbm.games.base import Move, State
from pbm.games.grid import find_squares
from pbm.pictures.board import Mark, View
from pbm.pictures.words import say


def changed(before: View, after: View) -> set[str]:
    """Squares whose visible contents differ between the two views."""
    squares = before.pieces.keys() | after.pieces.keys()
    return {s for s in squares if before.pieces.get(s) != after.pieces.get(s)}


def find_move(game: AnyGame, previous: State, state: State, touched: set[str]) -> Move | None:
    """The legal move of `previous` that gives `state`, or None if there is none.

    Every square a move's notation names changes visibly (from, to, placed, swapped),
    so only the moves whose named squares all changed are tried (a few, where the full
    list may hold hundreds); all of them only when nothing changed visibly (a setup the
    viewer may not see).
    """
    moves = game.legal_moves(previous)
    likely = [m for m in moves if set(find_squares(game.format_move(previous, m))) <= touched]
    target = game.dump(state)
    for group in (likely, moves) if not touched else (likely,):
        for move in group:
            after = game.apply(previous, move)
            if after == state or game.dump(after) == target:
                return move
    return None


def last_move(
    game: AnyGame,
    previous: State,
    state: State,
    seat: int | None,
    before: View,
    after: View,
    played: Move | None = None,
) -> tuple[dict[str, Mark], str | None]:
    """The marks and the echo of the move from `previous` to `state` for `seat`; the
    mover is named as `before` names his seat (the seat he held when he moved). The
    move is searched for among the legal moves unless the caller knows it (`played`)."""
    touched = changed(before, after)
    mover = game.to_move(previous)
    move = played
    if move is None and mover is not None:
        move = find_move(game, previous, state, touched)
    if mover is None or move is None:
        return {s: Mark.MOVE for s in touched}, None
    who = before.names[mover]
    if not game.move_visible(state, move, mover, seat):
        return {s: Mark.MOVE for s in touched}, say(after.phrases.move_kept_secret, who=who)
    named = set(find_squares(game.format_move(previous, move)))
    marks = {s: Mark.MOVE if s in named else Mark.EFFECT for s in touched}
    return marks, f"{who} {game.describe_move(previous, move)}"
