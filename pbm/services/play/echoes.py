"""Move echoes: what the rules said of each move as it was played ("g4-g5 converts c5",
"d4-d5 x d6"), from `Game.describe_move`.

A move is stored with its echo (`Move.echo`). Moves played before that column existed
(NULL) get theirs by replaying the game: an echo depends only on the position before
the move and the move, so the replay gives the words the rules would have given then.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pbm.games import AnyGame as Rules
from pbm.services.context import Context
from pbm.services.play.board_text import last_move_line
from pbm.services.play.boards import Board
from pbm.services.play.secrecy import ShownMove
from pbm.store import queries
from pbm.store.queries import MoveRecord


def with_echoes(
    rules: Rules, options: Mapping[str, object], moves: Sequence[ShownMove]
) -> list[ShownMove]:
    """`moves` (consecutive from move 1) with every missing echo filled in by replay;
    the same list when none is missing (the usual case: nothing is replayed)."""
    if all(move.echo is not None for move in moves):
        return list(moves)
    state = rules.new_state(**options)
    filled: list[ShownMove] = []
    for move in moves:
        parsed = rules.parse_move(state, move.text)
        echo = move.echo if move.echo is not None else rules.describe_move(state, parsed)
        filled.append(MoveRecord(move.number, move.player, move.text, move.auto, echo))
        state = rules.apply(state, parsed)
    return filled


def last_moves(ctx: Context, boards: Sequence[Board]) -> list[str]:
    """Each finished board's last move with its echo, `101: alice c7-c8 converts d8`
    (for `history`, under pbmserv's table, whose lines scripts read unchanged). A
    finished board hides nothing, so every echo is shown."""
    lines = []
    for board in boards:
        moves = with_echoes(board.rules, board.options, queries.move_records(ctx.session, board.id))
        if moves:
            lines.append(f"{board.row.board}: {last_move_line(board, moves, set())}")
    return lines
