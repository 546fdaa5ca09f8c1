"""Questions about a board by mail (`GAME ask BOARD QUESTION`), answered in words: what
is on a square, where a side's pieces are, which moves touch a square, what is one move
short of the game's goal (`pbm.services.play.threats`), and the last moves with their echoes.

The answers read the position as the reader may see it (`pbm.pictures.view`, as the
words format does), so a secret setup stays secret; they are sentences in every format.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from pbm.errors import PbmError
from pbm.games.base import State
from pbm.games.grid import find_squares
from pbm.pictures.picture import View, view
from pbm.services.play import threats, words
from pbm.services.play.boards import Board
from pbm.services.play.picture_words import picture_words
from pbm.services.play.secrecy import ShownMove, hidden_moves
from pbm.texts import phrase

LAST_DEFAULT = 5  # moves `ask last` lists when no count is given
LAST_MAX = 50


class Question(enum.Enum):
    SQUARE = "square"  # `ask c3`
    WHERE = "where"  # `ask where [SIDE]`
    MOVES = "moves"  # `ask moves [SQUARE]`
    THREATS = "threats"  # `ask threats`
    LAST = "last"  # `ask last [N]`


@dataclass(frozen=True)
class Asked:
    """One question, read: a square, a side (a seat name or a userid) or a count."""

    question: Question
    square: str = ""
    side: str = ""
    count: int = LAST_DEFAULT


def parse(words_: Sequence[str]) -> Asked:
    """The question in `words_` (after the board), or a UsageError that says how to ask."""
    if not words_:
        raise PbmError(phrase("ask_missing"))
    first, rest = words_[0].lower(), [w.lower() for w in words_[1:]]
    if find_squares(first) == [first] and not rest:
        return Asked(Question.SQUARE, square=first)
    try:
        question = Question(first)
    except ValueError:
        raise PbmError(phrase("ask_unknown", question=first)) from None
    if question is Question.SQUARE:
        raise PbmError(phrase("ask_unknown", question=first))
    if question is Question.LAST:
        if rest and not (rest[0].isdigit() and 1 <= int(rest[0]) <= LAST_MAX):
            raise PbmError(phrase("ask_last_count", most=LAST_MAX))
        return Asked(question, count=int(rest[0]) if rest else LAST_DEFAULT)
    if question is Question.MOVES:
        if rest and find_squares(rest[0]) != [rest[0]]:
            raise PbmError(phrase("ask_not_a_square", square=rest[0]))
        return Asked(question, square=rest[0] if rest else "")
    if question is Question.WHERE:
        return Asked(question, side=rest[0] if rest else "")
    return Asked(question)


def answer(
    board: Board, asked: Asked, reader_index: int | None, moves: Sequence[ShownMove]
) -> list[str]:
    """The answer, one sentence a line, about the board as the reader may see it."""
    rules, state = board.rules, board.state
    seat = board.seat_of(reader_index) if reader_index is not None else None
    shown = view(rules, state, seat=seat, words=picture_words(), players=board.userids)
    if asked.question is Question.SQUARE:
        return [_square(shown, asked.square, board_squares(board))]
    if asked.question is Question.WHERE:
        return _where(board, shown, asked.side)
    if asked.question is Question.MOVES:
        return [_moves(board, state, asked.square)]
    if asked.question is Question.THREATS:
        return threats.answer(board)
    hidden = hidden_moves(board, moves, reader_index)
    return [words.move_list(moves[-asked.count :], board.userids, hidden)]


def board_squares(board: Board) -> set[str]:
    """Every square name of the board (the view names only occupied ones)."""
    size = {"quarto": 4, "quadrature": 11, "quadrupel": 6, "quad": 8}.get(board.rules.name)
    width = size or int(getattr(board.state, "size", 0))
    return {f"{chr(ord('a') + f)}{r + 1}" for f in range(width) for r in range(width)}


def _square(shown: View, square: str, squares: set[str]) -> str:
    if square not in squares:
        return phrase("ask_off_board", square=square)
    piece = shown.pieces.get(square)
    if piece is None:
        return phrase("ask_empty", square=square)
    return words.sentence(
        f"{square}: {piece.group}" + (f", {piece.detail}" if piece.detail else "")
    )


def _where(board: Board, shown: View, side: str) -> list[str]:
    """The groups of the side named (a seat name or a userid), else every group."""
    names = {board.rules.seat_name(s).lower(): s for s in range(len(board.rules.seats))}
    names.update({n.lower(): s for s, n in enumerate(shown.names)})
    if side and side not in names:
        raise PbmError(phrase("ask_no_side", side=side, sides=" ".join(sorted(names))))
    groups = list(shown.groups)
    if side and shown.shows_sides:
        seat_name = board.rules.seat_name(names[side])
        groups = [g for g in groups if g.startswith(seat_name)] or groups
    return [words.group_line(shown, group) for group in groups]


def _moves(board: Board, state: State, square: str) -> str:
    rules = board.rules
    seat = rules.to_move(state)
    if seat is None:
        return phrase("ask_over")
    texts = [rules.format_move(state, m) for m in rules.legal_moves(state)]
    if square:
        texts = [t for t in texts if square in find_squares(t)]
    who = board.userids[list(rules.player_seats(state)).index(seat)]
    if not texts:
        return phrase("ask_no_moves", userid=who, square=square or "-")
    listed = words.listed(texts)
    key = "ask_moves_square" if square else "ask_moves"
    return phrase(key, userid=who, count=len(texts), square=square, moves=listed)


__all__ = ["Asked", "Question", "answer", "board_squares", "parse"]
