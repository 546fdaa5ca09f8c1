"""Quadrature (Mark Steere, 1992), as played on pbmserv (its Quadrature help page, and
Steere's Quadrature rules of 2006 where the page is silent: docs/games/quadrature.md).

Black (`#`, seat 0) starts on b3-j3, moves up and moves first; White (`O`) starts on
b9-j9. A turn steps one man forward, diagonally forward or sideways; enemy men that
the moved man squares (and, in a chain, the men added in their place) are converted.
The state keeps the position the game started from and the moves since, so that the
repetition rules see the whole history and `dump` can write it (pbm's decision:
docs/games/quadrature.md, 'Rules as pbm plays them', "Repetition").
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple, TypeAlias

from pbm.games import quadrature_board as qb
from pbm.games.base import (
    Game,
    IllegalMoveError,
    InvalidMoveError,
    Option,
    Outcome,
    PositionError,
    squash,
)
from pbm.games.grid import FILES, render_grid
from pbm.games.quadrature_board import (
    BLACK,
    LOSING_COUNT,
    MEN,
    PASS,
    PLATE,
    RANK,
    SIZE,
    WHITE,
    bit,
    bits,
    count,
    play,
    point,
    squared_by,
)

# The game's API for bots and pictures: the rules' values and, re-exported here, the
# fast board facts they search and draw with (docs/protocol.md, "Board API"). Bots
# and pictures import them from this module, never from `quadrature_board`, so the board's
# representation can change behind this list (tests/test_layers.py holds them to it).
__all__ = [
    "BLACK",
    "GAME",
    "LOSING_COUNT",
    "MEN",
    "PASS",
    "PLATE",
    "RANK",
    "SIDE_NAMES",
    "SIZE",
    "WHITE",
    "Quadrature",
    "QuadratureMove",
    "QuadratureState",
    "bit",
    "bits",
    "count",
    "play",
    "point",
    "squared_by",
]

SIDE_NAMES = ("Black", "White")
SIDE_LETTERS = ("b", "w")
MAN = ("#", "O")
THREEFOLD, ANY = "threefold", "any"

# A position key for the repetition rules, one int: Black's men, White's men, the side
# to move, then both markers; the mask keeps the men and the side to move only.
_BOARD_BITS = qb.SIZE * qb.STRIDE
_MEN_KEY_MASK = (1 << (2 * _BOARD_BITS + 1)) - 1

_MOVE_TEXT = re.compile(r"([a-z])(\d{1,2})([a-z])(\d{1,2})")


def _key(black: int, white: int, turn: int, markers: tuple[int, int]) -> int:
    key = black | white << _BOARD_BITS | turn << (2 * _BOARD_BITS)
    return key | markers[0] << (2 * _BOARD_BITS + 1) | markers[1] << (2 * _BOARD_BITS + 3)


def _repetition_key(
    black: int, white: int, turn: int, markers: tuple[int, int], repetition: str
) -> int:
    key = _key(black, white, turn, markers)
    return key & _MEN_KEY_MASK if repetition == ANY else key


# (black men, white men, side to move, (Black's marker, White's marker))
Position = tuple[int, int, int, tuple[int, int]]
START: Position = (qb.START_BLACK, qb.START_WHITE, qb.BLACK, (0, 0))


_COMPARED: Final = 7  # the fields that make a state; the rest are derived from them

# A move is PASS or `from << 8 | to` (point indices of quadrature_board).
QuadratureMove: TypeAlias = int


class QuadratureState(NamedTuple):
    """A position with the history that leads to it.

    `black`/`white` are bitboards (see quadrature_board); `markers` are Black's and
    White's marker (0 off the board, 1 or 2 dots); `origin` is the position the history
    starts from and `trail` the moves played since (PASS or from << 8 | to). `seen`,
    `result` and `moves` are derived from the others and left out of equality. A named
    tuple rather than a dataclass because a state is built on every ply and tuples build
    fastest.
    """

    black: int
    white: int
    turn: int
    markers: tuple[int, int]
    repetition: str
    origin: Position
    trail: tuple[QuadratureMove, ...]
    seen: tuple[int, ...]
    result: Outcome | None
    moves: tuple[QuadratureMove, ...]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, QuadratureState):
            return NotImplemented
        return self[:_COMPARED] == other[:_COMPARED]

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self[:_COMPARED])

    def __repr__(self) -> str:
        return f"QuadratureState({_position_text(self[:4])} {self.repetition}, {self.trail})"

    @property
    def options(self) -> dict[str, str]:
        return {"repetition": self.repetition}


class SquaringPoint(NamedTuple):
    """An empty point where a man of one side would square enemy men: the point, the
    enemy men it would square, and the side's men one legal step away from it."""

    point: str
    squared: tuple[str, ...]
    steps_from: tuple[str, ...]


# Building the named tuple from a plain tuple skips its keyword-handling constructor.
_new_state = tuple.__new__


def _men(state: QuadratureState, side: int) -> int:
    return state.white if side else state.black


def _win(black: int, white: int, mover: int) -> Outcome | None:
    """The mover's win, checked after his whole turn (help page, "OBJECT")."""
    own, enemy = (white, black) if mover else (black, white)
    if qb.count(enemy) <= qb.LOSING_COUNT:
        return Outcome(mover, f"{SIDE_NAMES[1 - mover]} has two men or fewer on the board")
    plate = qb.PLATE[1 - mover]
    if own & plate == plate:
        return Outcome(mover, f"{SIDE_NAMES[mover]} holds {SIDE_NAMES[1 - mover]}'s home plate")
    return None


def _settle(
    black: int,
    white: int,
    turn: int,
    markers: tuple[int, int],
    repetition: str,
    origin: Position,
    trail: tuple[int, ...],
    seen: tuple[int, ...],
) -> QuadratureState:
    """Build a state, deciding whether the game is over and listing the moves if not."""
    # `seen` holds the keys the repetition rule compares: men and side to move for
    # repetition=any (Steere 2006 speaks of the men's arrangement), markers too otherwise.
    key = _repetition_key(black, white, turn, markers, repetition)
    repeated = seen.count(key)
    seen = (*seen, key)
    result = _win(black, white, 1 - turn) or _win(black, white, turn)
    if result is None:
        if repetition == ANY and repeated:
            result = Outcome(None, "the position (men and side to move) repeated")
        elif repeated >= 2:
            result = Outcome(None, "the same position occurred for the third time")
    moves: tuple[int, ...] = ()
    if result is None:
        own, enemy = (white, black) if turn else (black, white)
        moves = tuple(qb.generate(own, enemy, turn, markers[turn]))
        if not moves:
            # Quadrature rules, Mark Steere 2006: pass when blocked, draw when both are.
            if qb.generate(enemy, own, 1 - turn, markers[1 - turn]):
                moves = (qb.PASS,)
            else:
                result = Outcome(None, "neither side can move")
    return _new_state(
        QuadratureState,
        (black, white, turn, markers, repetition, origin, trail, seen, result, moves),
    )


def _after(position: Position, move: int) -> Position:
    """The position after `move`, which the caller knows to be legal there."""
    black, white, turn, markers = position
    if move != qb.PASS:
        own, enemy = (white, black) if turn else (black, white)
        own, enemy, converted, _removed = qb.play(own, enemy, move >> 8, move & 0xFF)
        black, white = (enemy, own) if turn else (own, enemy)
        # Marker (help page, "BASIC MOVES AND THE MARKER"): a non-aggressive sideways move
        # turns it up one dot, anything else clears it; a pass leaves it alone.
        mark = markers[turn] + 1 if _is_sideways(move) and not converted else 0
        markers = (mark, markers[1]) if turn == qb.BLACK else (markers[0], mark)
    return black, white, 1 - turn, markers


def _read_move(text: str, compact: str) -> int:
    """A move's points from its text (`compact` is the squashed text): syntax only."""
    if compact == "pass":
        return qb.PASS
    match = _MOVE_TEXT.fullmatch(compact)
    if match is None:
        raise InvalidMoveError(text, "write the man's point and its target, like b3-b4")
    points = []
    for letter, digits in ((match[1], match[2]), (match[3], match[4])):
        file, rank = FILES.index(letter), int(digits) - 1
        if file >= qb.SIZE or not 0 <= rank < qb.SIZE:
            raise InvalidMoveError(text, f"{letter}{digits} is not on the board (a1-k11)")
        points.append(rank * qb.STRIDE + file)
    return points[0] << 8 | points[1]


def _is_sideways(move: int) -> bool:
    return (move >> 8) // qb.STRIDE == (move & 0xFF) // qb.STRIDE


def _point_name(index: int) -> str:
    file, rank = qb.point(index)
    return f"{FILES[file]}{rank + 1}"


# -- position text --------------------------------------------------------------------


def _board_text(black: int, white: int) -> str:
    """Ranks 11 down to 1 joined by '/', runs of empty points written as numbers."""
    ranks = []
    for rank in range(qb.SIZE - 1, -1, -1):
        text, run = "", 0
        for file in range(qb.SIZE):
            b = qb.bit(file, rank)
            man = "#" if black & b else "O" if white & b else ""
            if not man:
                run += 1
                continue
            text += (str(run) if run else "") + man
            run = 0
        ranks.append(text + (str(run) if run else ""))
    return "/".join(ranks)


def _read_board(text: str) -> tuple[int, int]:
    ranks = text.split("/")
    if len(ranks) != qb.SIZE:
        raise PositionError(f"a Quadrature board has 11 ranks separated by '/', not {text!r}")
    black = white = 0
    for row, rank_text in enumerate(ranks):
        rank = qb.SIZE - 1 - row
        file = 0
        for token in re.findall(r"\d+|.", rank_text):
            if token.isdigit():
                file += int(token)
                continue
            if file < qb.SIZE:
                if token in "#xX":
                    black |= qb.bit(file, rank)
                elif token in "oO":
                    white |= qb.bit(file, rank)
                elif token not in ".,":
                    raise PositionError(f"unknown point {token!r} in rank {rank + 1}")
            file += 1
        if file != qb.SIZE:
            raise PositionError(f"rank {rank + 1} ({rank_text!r}) does not hold 11 points")
    return black, white


def _position_text(position: Position) -> str:
    black, white, turn, markers = position
    return f"{_board_text(black, white)} {SIDE_LETTERS[turn]} {markers[0]} {markers[1]}"


def _read_position(tokens: list[str]) -> Position:
    if len(tokens) < 4:
        raise PositionError("a position is a board, the side to move and two markers")
    black, white = _read_board(tokens[0])
    side = tokens[1].lower()
    if side not in SIDE_LETTERS:
        raise PositionError(f"the side to move is b or w, not {tokens[1]!r}")
    if tokens[2] not in ("0", "1", "2") or tokens[3] not in ("0", "1", "2"):
        raise PositionError(f"markers are 0, 1 or 2, not {tokens[2]!r} {tokens[3]!r}")
    if qb.count(black) > qb.MEN or qb.count(white) > qb.MEN:
        raise PositionError("a side has at most 16 men on the board")
    return black, white, SIDE_LETTERS.index(side), (int(tokens[2]), int(tokens[3]))


class Quadrature(Game[QuadratureState, QuadratureMove]):
    name = "quadrature"
    title = "Quadrature"
    aliases = ("quadr",)
    move_words = frozenset({"pass"})
    seats = SIDE_NAMES
    options = (
        Option(
            "repetition",
            "choice",
            THREEFOLD,
            "threefold: the third occurrence of a position (men, markers, side to move) "
            "draws; any: Steere 2006, a position (men, side to move) seen before draws",
            choices=(THREEFOLD, ANY),
        ),
    )
    example_options = ({}, {"repetition": ANY})
    summary = """\
Quadrature (Mark Steere, 1992) is played on a board of 11x11 points.
Each side owns 16 men: 9 on the board and 7 in reserve. Black (#)
starts on b3-j3 and moves up the board, White (O) starts on b9-j9 and
moves down; Black moves first. The three points in the middle of each
edge (drawn ',') are a home plate: e1 f1 g1 is Black's, e11 f11 g11
White's.

MOVES. A turn steps one man one point forward, diagonally forward or
sideways to an empty point; men never step back. Black's man on d3 may
go to the points marked *:

     c d e
  4  * * *
  3  * # *
  2  . . .

SQUARING. Three of your men and one enemy man on the four corners of a
rectangle (of any size, with its sides along the ranks and files)
"square" the enemy man, if one of your three was moved or added this
turn. The squared man goes back to its owner's reserve and one of your
reserve men takes its point. Other men on or inside the rectangle do
not matter. Black plays d2-d3: d3, d5 and f3 square the White man on
f5, which turns Black (the echo: "d2-d3 converts f5"):

     c d e f          c d e f          c d e f
  5  . # . O       5  . # . O       5  . # . #
  4  . . . .       4  . . . .       4  . . . .
  3  . . . #       3  . # . #       3  . # . #
  2  . # . .       2  . . . .       2  . . . .
  Black to move    d2-d3            f5 converted

CHAIN REACTION. A man added by a conversion squares too, so one move
can convert several men. Black plays b6-c6: c6, d6 and c4 square d4;
the new Black man on d4 then squares f2 with d2 and f4 ("b6-c6
converts d4 f2"):

     b c d e f        b c d e f        b c d e f
  6  # . # . .     6  . # # . .     6  . # # . .
  5  . . . . .     5  . . . . .     5  . . . . .
  4  . # O . #     4  . # # . #     4  . # # . #
  3  . . . . .     3  . . . . .     3  . . . . .
  2  . . # . O     2  . . # . O     2  . . # . #
  Black to move    d4 converted     then f2

NO SUICIDE. You may not step a man onto a point that completes an
enemy square. Black may not play d2-d3 here, where d3 would be the
fourth corner of a White square. A man added by a conversion may stand
on such a point, though, and stays.

     c d e f
  5  . O . O
  4  . . . .
  3  . . . O
  2  . # . .

THE MARKER. A sideways move that converts nothing turns your marker
(drawn |0| beside the board) from 0 to 1, and a second one in a row
from 1 to 2. At 2 you may step sideways only to convert. A forward or
diagonal move, or a sideways move that converts, clears it to 0.

WINNING. You win when the enemy has two men or fewer on the board, or
when your men stand on all three points of the enemy home plate (men
added by a conversion count). Black wins with f10-f11:

     d e f g h
 11  . # , # .
 10  . . # . .

DRAWS. A player with no legal move passes; if neither side can move,
the game is drawn. So is the third occurrence of the same position
(men, markers and side to move); with the option -repetition=any, any
position seen before draws (Steere's rules of 2006)."""
    notation = """\
A move names the man's point and the point it steps to: b3-b4 (also
b3b4, b3 b4, B3:B4). Write pass when you have no legal move (then
nothing else is accepted). The server echoes the men a move converted:
b6-b7 converts d7 f7."""

    # -- states ----------------------------------------------------------------------
    def new_state(self, **options: object) -> QuadratureState:
        resolved = self.resolve_options(options)
        return _settle(*START, resolved["repetition"], START, (), ())

    def to_move(self, state: QuadratureState) -> int | None:
        return None if state.result is not None else state.turn

    def legal_moves(self, state: QuadratureState) -> list[QuadratureMove]:
        return list(state.moves)

    def outcome(self, state: QuadratureState) -> Outcome | None:
        return state.result

    def apply(self, state: QuadratureState, move: QuadratureMove) -> QuadratureState:
        black, white, turn, markers = _after(state[:4], move)
        return _settle(
            black,
            white,
            turn,
            markers,
            state.repetition,
            state.origin,
            (*state.trail, move),
            state.seen,
        )

    # -- threats (the `ask threats` question) ------------------------------------------
    def squaring_points(self, state: QuadratureState, side: int) -> list[SquaringPoint]:
        """The empty points where a man of `side` would square enemy men, lowest point
        first, with the men of `side` that may step there (none where stepping there
        is suicide)."""
        own, enemy = _men(state, side), _men(state, 1 - side)
        unsafe = qb.danger(enemy)
        found = []
        for index in qb.bits(qb.BOARD & ~(own | enemy)):
            squared = qb.squared_by(own | 1 << index, enemy, index)
            if not squared:
                continue
            origins = [] if unsafe >> index & 1 else [index - shift for shift, _ in qb.STEPS[side]]
            steps = tuple(_point_name(o) for o in sorted(origins) if o >= 0 and own >> o & 1)
            names = tuple(_point_name(i) for i in qb.bits(squared))
            found.append(SquaringPoint(_point_name(index), names, steps))
        return found

    def square_corners(self, state: QuadratureState, side: int) -> list[str]:
        """The empty points that are the fourth corner of three men of `side`: a man of
        the other side may not step there (suicide)."""
        empty = qb.BOARD & ~(state.black | state.white)
        return [_point_name(i) for i in qb.bits(qb.danger(_men(state, side)) & empty)]

    # -- move text -------------------------------------------------------------------
    def answer_example(self, state: QuadratureState) -> str:
        return self.legal_example(state, ("b3-b4", "b9-b8"), "b3-b4", skip=("pass",))

    def format_move(self, state: QuadratureState, move: QuadratureMove) -> str:
        if move == qb.PASS:
            return "pass"
        return f"{_point_name(move >> 8)}-{_point_name(move & 0xFF)}"

    def describe_move(self, state: QuadratureState, move: QuadratureMove) -> str:
        text = self.format_move(state, move)
        if move == qb.PASS:
            return text
        own, enemy = _men(state, state.turn), _men(state, 1 - state.turn)
        _, _, converted, removed = qb.play(own, enemy, move >> 8, move & 0xFF)
        if converted:
            text += " converts " + " ".join(_point_name(i) for i in converted)
        if removed:
            text += " removes " + " ".join(_point_name(i) for i in removed)
        return text

    def parse_move(self, state: QuadratureState, text: str) -> QuadratureMove:
        compact = squash(text)
        if state.result is not None and compact:
            raise IllegalMoveError(text, "the game is over")
        if compact == "pass":
            if state.moves == (qb.PASS,):
                return qb.PASS
            raise IllegalMoveError(text, "you may pass only when you have no legal move")
        move = _read_move(text, compact)
        if move in state.moves:
            return move
        raise IllegalMoveError(text, self._why_illegal(state, move >> 8, move & 0xFF))

    def _why_illegal(self, state: QuadratureState, frm: int, to: int) -> str:
        side = state.turn
        own, enemy = _men(state, side), _men(state, 1 - side)
        if state.moves == (qb.PASS,):
            return f"{SIDE_NAMES[side]} has no legal move and must pass"
        if not own & (1 << frm):
            return f"there is no {SIDE_NAMES[side]} man on {_point_name(frm)}"
        if (own | enemy) & (1 << to):
            return f"{_point_name(to)} is not empty"
        steps = {shift for shift, _ in qb.STEPS[side]}
        if to - frm not in steps:
            return "a man steps one point forward, diagonally forward or sideways"
        if qb.danger(enemy) & (1 << to):
            return f"a man on {_point_name(to)} would complete an enemy square (suicide)"
        return "two non-aggressive sideways moves in a row: move forward or convert"

    # -- text ------------------------------------------------------------------------
    def render(
        self, state: QuadratureState, seat: int | None = None, *, headline: bool = True
    ) -> str:
        black, white = state.black, state.white
        cells = []
        plates = qb.PLATE[0] | qb.PLATE[1]
        for rank in range(qb.SIZE):
            for file in range(qb.SIZE):
                b = qb.bit(file, rank)
                cells.append("#" if black & b else "O" if white & b else "," if plates & b else ".")

        def notes(side: int) -> list[str]:
            on_board = qb.count(_men(state, side))
            reserve = max(qb.MEN - on_board, 0)
            first = reserve // 2
            return [
                f"{MAN[side] * first:<9} {SIDE_NAMES[side]}",
                f"{MAN[side] * (reserve - first):<9} |{state.markers[side]}|",
                f"{on_board} on board, {reserve} in reserve",
            ]

        white_notes, black_notes = notes(qb.WHITE), notes(qb.BLACK)
        side_notes = [*white_notes, "", "", "", "", "", black_notes[2], *black_notes[:2]]
        lines = render_grid(cells, qb.SIZE, qb.SIZE, side_notes=side_notes)
        if headline:
            lines += self.headline(state)
        return "\n".join(lines) + "\n"

    def headline(self, state: QuadratureState) -> list[str]:
        if state.result is None:
            return [f"{SIDE_NAMES[state.turn]} to move"]
        who = "Draw" if state.result.winner is None else SIDE_NAMES[state.result.winner] + " wins"
        return [f"Game over: {who} ({state.result.reason})"]

    def dump(self, state: QuadratureState) -> str:
        """`BOARD SIDE BLACKMARKER WHITEMARKER REPETITION [from ORIGIN MOVES]`.

        BOARD lists ranks 11 to 1 separated by '/', `#` Black, `O` White, a number for a
        run of empty points. ORIGIN is `start` or a position `BOARD SIDE BM WM`; MOVES
        are the moves played since, comma-separated (`c3-c4,d9-d8,pass`).
        """
        text = (
            f"{_position_text((state.black, state.white, state.turn, state.markers))}"
            f" {state.repetition}"
        )
        if not state.trail:
            return text
        origin = "start" if state.origin == START else _position_text(state.origin)
        words = ",".join(self.format_move(state, move) for move in state.trail)
        return f"{text} from {origin} {words}"

    def load(self, text: str) -> QuadratureState:
        tokens = text.split()
        position = _read_position(tokens)
        if len(tokens) < 5 or tokens[4] not in (THREEFOLD, ANY):
            raise PositionError("the position text must name the repetition rule")
        repetition = tokens[4]
        rest = tokens[5:]
        if not rest:
            return self._replay(position, repetition, ())
        if rest[0] != "from":
            raise PositionError(f"unexpected {rest[0]!r} after the position")
        if len(rest) >= 3 and rest[1] == "start":
            origin, moves_text = START, rest[2:]
        elif len(rest) >= 6:
            origin, moves_text = _read_position(rest[1:5]), rest[5:]
        else:
            raise PositionError("'from' needs a position (or start) and the moves since")
        if len(moves_text) != 1:
            raise PositionError("the moves after the origin are one comma-separated word")
        try:
            trail = tuple(_read_move(word, squash(word)) for word in moves_text[0].split(","))
        except InvalidMoveError as exc:
            raise PositionError(f"the history does not replay: {exc}") from None
        # Only the repetition rule needs the positions on the way, so they are stepped
        # through without listing their moves (the cost of a whole replay on every load);
        # the stated position must come out at the end.
        seen: tuple[int, ...] = (_repetition_key(*origin, repetition),)
        at = origin
        for move in trail[:-1]:
            at = _after(at, move)
            seen = (*seen, _repetition_key(*at, repetition))
        at = _after(at, trail[-1])
        if at != position:
            raise PositionError("the history does not lead to the position given")
        return _settle(*at, repetition, origin, trail, seen)

    def _replay(self, origin: Position, repetition: str, trail: tuple[int, ...]) -> QuadratureState:
        state = _settle(*origin, repetition, origin, (), ())
        for move in trail:
            state = self.apply(state, move)
        return state


GAME = Quadrature()
