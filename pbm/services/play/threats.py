"""The answer to `GAME ask BOARD threats`, game by game: what is one move short of
the game's goal, for each side (docs/accessibility.md, 'Questions by mail').

- Quarto: the lines one piece short of a quarto and the pieces that complete them;
- Quadrature: the points where a side's man would square enemy men (and which men may
  step there), and the fourth corners of a side's squares, where the enemy may not step;
- Quadrupel: each side's moves that complete a QUADRUPEL (no setup is ever shown: there
  is no board move before both are in);
- Quad: each side's moves that make its exact four;
- Quarod (no lines: the groups at the end decide): the moves that win at once.

Each side is answered as if it were to move, the side to move first.
"""

from __future__ import annotations

from pbm.games.base import State
from pbm.games.quad import Quad
from pbm.games.quadrature import Quadrature, SquaringPoint
from pbm.games.quadrupel import Quadrupel
from pbm.games.quarto import EMPTY
from pbm.games.quarto_lines import BLOCKS, LINES
from pbm.games.quarto_pieces import ATTRIBUTE_BITS, CODES, VALUE_WORDS
from pbm.services.play import words
from pbm.services.play.boards import Board
from pbm.texts import phrase


def answer(board: Board) -> list[str]:
    """The threats on `board`, one sentence a line."""
    rules, state = board.rules, board.state
    if rules.to_move(state) is None:
        return [phrase("ask_over")]
    if isinstance(rules, Quadrature):
        return [line for seat in _seats(board, state) for line in _quadrature(board, seat)]
    if isinstance(rules, Quadrupel):
        return [_quadrupel(board, seat) for seat in _seats(board, state)]
    if isinstance(rules, Quad):
        return [_quad(board, seat) for seat in _seats(board, state)]
    if rules.name == "quarto":
        return _quarto_lines(state)
    return [_winning_moves(board, state), phrase("ask_quarod_no_lines")]


def _seats(board: Board, state: State) -> list[int]:
    """Every seat, the one to move first."""
    mover = board.rules.to_move(state)
    return sorted(range(len(board.rules.seats)), key=lambda seat: seat != mover)


def _who(board: Board, seat: int) -> str:
    """ "alice (Black)": the player holding `seat` and the seat's name."""
    order = list(board.rules.player_seats(board.state))
    return f"{board.userids[order.index(seat)]} ({board.rules.seat_name(seat)})"


def _quadrature(board: Board, seat: int) -> list[str]:
    rules = board.rules
    assert isinstance(rules, Quadrature)
    who, enemy = _who(board, seat), rules.seat_name(1 - seat)
    found = rules.squaring_points(board.state, seat)
    found.sort(key=lambda p: not p.steps_from)  # the points a man can reach now first
    if found:
        points = words.listed([_squaring_point(p) for p in found], "; ")
        lines = [phrase("ask_quadrature_squaring", who=who, enemy=enemy, points=points)]
    else:
        lines = [phrase("ask_quadrature_no_squaring", who=who, enemy=enemy)]
    corners = rules.square_corners(board.state, seat)
    if corners:
        points = words.listed(corners, " ")
        lines.append(phrase("ask_quadrature_corners", who=who, enemy=enemy, points=points))
    else:
        lines.append(phrase("ask_quadrature_no_corners", who=who))
    return lines


def _squaring_point(found: SquaringPoint) -> str:
    if found.steps_from:
        reach = phrase("ask_quadrature_steps", men=" ".join(found.steps_from))
    else:
        reach = phrase("ask_quadrature_no_step")
    return phrase(
        "ask_quadrature_point", point=found.point, squared=" ".join(found.squared), reach=reach
    )


def _quadrupel(board: Board, seat: int) -> str:
    rules, state = board.rules, board.state
    assert isinstance(rules, Quadrupel)
    who = _who(board, seat)
    if state.pending:
        return phrase("ask_quadrupel_setup", who=who)
    if state.extra is not None and state.extra.builder == seat:
        return phrase("ask_quadrupel_frozen", who=who)
    found = rules.shape_moves(state, seat)
    if not found:
        return phrase("ask_quadrupel_none", who=who)
    items = [
        phrase("ask_quadrupel_shape", move=m.move, shape=m.shape)
        if m.points is None
        else phrase("ask_quadrupel_shape_points", move=m.move, shape=m.shape, points=m.points)
        for m in found
    ]
    return phrase("ask_quadrupel_shapes", who=who, moves=words.listed(items))


def _quad(board: Board, seat: int) -> str:
    rules, state = board.rules, board.state
    assert isinstance(rules, Quad)
    who = _who(board, seat)
    found = [rules.format_move(state, m) for m in rules.fours_in_reach(state, seat)]
    if not found:
        return phrase("ask_quad_no_fours", who=who)
    return phrase("ask_quad_fours", who=who, moves=words.listed(found))


def _winning_moves(board: Board, state: State) -> str:
    """The moves after which the rules end the game in the mover's favour."""
    rules = board.rules
    seat = rules.to_move(state)
    assert seat is not None  # answer() says a finished game is over
    winning = []
    for move in rules.legal_moves(state):
        ended = rules.outcome(rules.apply(state, move))
        if ended is not None and ended.winner == seat:
            winning.append(rules.format_move(state, move))
    who = _who(board, seat)
    if not winning:
        return phrase("ask_no_wins", who=who)
    return phrase("ask_wins", who=who, moves=words.listed(winning))


def _quarto_lines(state: State) -> list[str]:
    lines = LINES + (BLOCKS if state.variant.advanced else ())
    available = ([state.held] if state.held != EMPTY else []) + list(state.unused)
    found: list[str] = []
    for name, squares in lines:
        pieces = [state.board[s] for s in squares if state.board[s] != EMPTY]
        empties = [s for s in squares if state.board[s] == EMPTY]
        if len(pieces) != len(squares) - 1:
            continue
        shared = []
        for index, bit in enumerate(ATTRIBUTE_BITS):
            if not state.variant.attributes & bit:
                continue
            values = {bool(p & bit) for p in pieces}
            if len(values) == 1:
                shared.append((bit, values.pop(), VALUE_WORDS[index]))
        if not shared:
            continue
        said = " or ".join(f"all {w[0] if v else w[1]}" for _, v, w in shared)
        completing = [
            CODES[p] for p in available if any(bool(p & bit) == v for bit, v, _ in shared)
        ]
        empty = f"{chr(ord('a') + empties[0] % 4)}{empties[0] // 4 + 1}"
        found.append(
            phrase(
                "ask_quarto_line",
                line=name,
                square=empty,
                shared=said,
                pieces=" ".join(completing) or phrase("ask_quarto_none_left"),
            )
        )
    return found or [phrase("ask_quarto_no_lines")]


__all__ = ["answer"]
