"""Hidden moves: which played moves a reader may not see yet (Quadrupel's secret setups).

The rules say it through `Game.move_visible`; a hidden move is listed as "..." (as pbmserv
printed it) to everyone but its mover, in every mail and listing that shows move texts.
"""

from __future__ import annotations

from collections.abc import Sequence

from pbm.games import Game as Rules
from pbm.games.base import State
from pbm.services.boards import Board
from pbm.store.models import Move

HIDDEN_TEXT = "..."


def may_hide(rules: Rules) -> bool:
    """Whether the game can hide moves at all (the default `move_visible` shows every one)."""
    return type(rules).move_visible is not Rules.move_visible


def hidden_moves(
    board: Board, moves: Sequence[Move], reader_index: int | None, now: State | None = None
) -> set[int]:
    """Numbers of the stored moves in `moves` whose text the player at `reader_index`
    (None: an observer) may not see in the game as it stands (`now`, default the board's)."""
    rules = board.rules
    if not may_hide(rules) or not moves:
        return set()
    now = board.state if now is None else now
    viewer = None if reader_index is None else rules.player_seats(now)[reader_index]
    hidden: set[int] = set()
    for move, mover, parsed in _parsed(board, moves):
        if move.player != reader_index and not rules.move_visible(now, parsed, mover, viewer):
            hidden.add(move.number)
    return hidden


def _parsed(board: Board, moves: Sequence[Move]) -> list[tuple[Move, int, object]]:
    """Each stored move with its mover's seat and its parsed form, replayed once per board
    and move count (a board mail renders the list for every reader)."""
    stored = [m for m in moves if m.number <= board.row.move_count]
    key = (board.row.move_count, len(stored))
    cached = board.parsed_moves.get(key)
    if cached is not None:
        return cached
    rules = board.rules
    state = rules.new_state(**board.options)
    found: list[tuple[Move, int, object]] = []
    for move in stored:
        mover = rules.to_move(state)
        parsed = rules.parse_move(state, move.text)
        found.append((move, -1 if mover is None else mover, parsed))
        state = rules.apply(state, parsed)
    board.parsed_moves[key] = found
    return found


def shown_text(move: Move, hidden: set[int]) -> str:
    return HIDDEN_TEXT if move.number in hidden else move.text
