"""Hidden moves: which played moves a reader may not see yet (Quadrupel's secret setups).

The rules say it through `Game.move_visible`; a hidden move is listed as "..." (as pbmserv
printed it) to everyone but its mover, in every mail and listing that shows move texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pbm.games import AnyGame as Rules
from pbm.games.base import State
from pbm.services.play.boards import Board

HIDDEN_TEXT = "..."


class ShownMove(Protocol):
    """What a move list shows of a move: a stored Move, a pbm.store.queries.MoveRecord,
    or a preview's move not stored."""

    @property
    def number(self) -> int: ...

    @property
    def player(self) -> int: ...

    @property
    def text(self) -> str: ...

    @property
    def auto(self) -> bool: ...

    @property
    def echo(self) -> str | None: ...


def may_hide(rules: Rules) -> bool:
    """Whether the game can hide moves at all (the default `move_visible` shows every one)."""
    return type(rules).move_visible is not Rules.move_visible


def hidden_moves(
    board: Board, moves: Sequence[ShownMove], reader_index: int | None, now: State | None = None
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


def _parsed(board: Board, moves: Sequence[ShownMove]) -> list[tuple[ShownMove, int, object]]:
    """Each stored move with its mover's seat and its parsed form, replayed."""
    stored = [m for m in moves if m.number <= board.row.move_count]
    rules = board.rules
    state = rules.new_state(**board.options)
    found: list[tuple[ShownMove, int, object]] = []
    for move in stored:
        mover = rules.to_move(state)
        parsed = rules.parse_move(state, move.text)
        found.append((move, -1 if mover is None else mover, parsed))
        state = rules.apply(state, parsed)
    return found


def shown_text(move: ShownMove, hidden: set[int]) -> str:
    return HIDDEN_TEXT if move.number in hidden else move.text


def shown_echo(move: ShownMove, hidden: set[int]) -> str:
    """The move with what the rules said of it ("g4-g5 converts c5"); a hidden move's
    echo is hidden like the move (a setup's echo names its values)."""
    return HIDDEN_TEXT if move.number in hidden else (move.echo or move.text)
