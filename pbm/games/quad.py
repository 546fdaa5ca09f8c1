"""Quad (Mats Winther, 2005, version 1.1): drop counters, then step them, to make exactly four.

Rules: Quad, Mats Winther 2005 (version 1.1), with his Zillions implementation and pbm's
decisions where both are silent (docs/games/quad.md, 'Rules as pbm plays them'). White
(O, seat 0) and Black (X, seat 1) each hold N counters (12, 15, 20 or 25). Drop phase:
alternate drops on any empty square, White's second drop on the rim, no captures. Move
phase: one orthogonal step to an empty square; the moved counter captures every enemy
counter it sandwiches against a friendly one. Exactly four in an orthogonal row wins; so
does wiping out or stalemating the opponent; the third occurrence of a position with the
same side to move draws.

Moves are ints: a drop is its square (0-63); a step is 64 + 64 * origin + destination.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple, TypeAlias

from pbm.games.base import (
    Game,
    IllegalMoveError,
    InvalidMoveError,
    Option,
    Outcome,
    PositionError,
    squash,
)
from pbm.games.grid import find_squares, parse_square, render_grid, square_name
from pbm.games.quad_board import (
    CAPTURE_PAIRS,
    FIFTH_ON_RANK,
    FOUR_STARTS_H,
    FOUR_STARTS_V,
    FULL,
    NOT_FILE_A,
    RIM,
    SIZE,
    SQUARES,
    exact_four,
    has_step,
    squares_of,
)

# The game's API for bots and pictures: the rules' values and, re-exported here, the
# fast board facts they search and draw with (docs/protocol.md, "Board API"). Bots
# and pictures import them from this module, never from `quad_board`, so the board's
# representation can change behind this list (tests/test_layers.py holds them to it).
__all__ = [
    "BLACK",
    "CAPTURE_PAIRS",
    "FIFTH_ON_RANK",
    "FOUR",
    "FOUR_STARTS_H",
    "FOUR_STARTS_V",
    "FULL",
    "GAME",
    "NOT_FILE_A",
    "RIM",
    "SIZE",
    "SQUARES",
    "SYMBOLS",
    "WHITE",
    "Quad",
    "QuadMove",
    "QuadState",
    "exact_four",
    "squares_of",
]

WHITE, BLACK = 0, 1
SYMBOLS = ("O", "X")
COUNTER_CHOICES = (12, 15, 20, 25)

FOUR = "four in a row"
WIPED_OUT = "no counters left"
STALEMATE = "no legal move"
REPETITION = "third repetition"
PLY_LIMIT = "pbm's ply limit"
# pbm's own addition (not Winther's): a draw when this many plies have been played, so
# that every game ends; see docs/games/quad.md.
DEFAULT_PLY_LIMIT = 1000
PLY_LIMIT_RANGE = (100, 4000)

# A drop is its square (0-63); a step is 64 + 64 * origin + destination.
QuadMove: TypeAlias = int


def _step(origin: int, destination: int) -> int:
    return SQUARES + origin * SQUARES + destination


def _step_table() -> tuple[tuple[tuple[int, int], ...], ...]:
    """STEPS[origin]: (destination, move) for every orthogonal neighbour on the board."""
    table = []
    for sq in range(SQUARES):
        file, rank = sq % SIZE, sq // SIZE
        steps = []
        for df, dr in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            f, r = file + df, rank + dr
            if 0 <= f < SIZE and 0 <= r < SIZE:
                steps.append((r * SIZE + f, _step(sq, r * SIZE + f)))
        table.append(tuple(steps))
    return tuple(table)


STEPS = _step_table()


def _key(white: int, black: int, side: int) -> int:
    """Repetition key: the board and the side to move (hands are empty in the move phase)."""
    return white | black << SQUARES | side << (2 * SQUARES)


class QuadState(NamedTuple):
    """A Quad position (a named tuple: immutable, compared by value, cheap to build).

    `history` holds the repetition keys of every position since the move phase began or
    the last capture (captures and drops can never be undone), the current one last;
    `trail` holds the steps that led through them, so a dump can rebuild `history`.
    `ply` counts the plies played; `result` is set once the game is over.
    """

    counters: int
    ply_limit: int
    ply: int
    side: int
    white: int
    black: int
    hands: tuple[int, int]
    history: tuple[int, ...] = ()
    trail: tuple[int, ...] = ()
    result: Outcome | None = None


def _judge(
    mover: int, white: int, black: int, hands: tuple[int, int], capture: bool
) -> Outcome | None:
    """The result after `mover` played, except repetition (pbm's decision on the order:
    docs/games/quad.md, 'Rules as pbm plays them', "Order of checks after a move").

    Order: the mover's exact four wins; else an exact four of the opponent (only a
    capture can make one, by cutting a longer line) wins for the opponent; else, in the
    move phase, an opponent with no counters or no legal step loses.
    """
    own, other = (white, black) if mover == WHITE else (black, white)
    if exact_four(own):
        return Outcome(mover, FOUR)
    if capture and exact_four(other):
        return Outcome(1 - mover, FOUR)
    if hands[0] or hands[1]:
        return None  # drop phase: at most 50 counters on 64 squares leave a drop open
    if not other:
        return Outcome(mover, WIPED_OUT)
    if not has_step(other, white | black):
        return Outcome(mover, STALEMATE)
    return None


def _draw(history: tuple[int, ...], ply: int, ply_limit: int) -> Outcome | None:
    """A draw by the third occurrence of the current position, or at pbm's ply limit."""
    # Winther's rules: "Three-times repetition of a position, with the same player to move".
    if history and history.count(history[-1]) >= 3:
        return Outcome(None, REPETITION)
    if ply >= ply_limit:
        return Outcome(None, PLY_LIMIT)
    return None


_DROP_WORDS = re.compile(r"^(?:@|drop)")


class Quad(Game[QuadState, QuadMove]):
    name = "quad"
    title = "Quad"
    aliases = ()
    seats = ("White", "Black")
    options = (
        Option(
            "counters",
            "int",
            12,
            "counters each player drops before the move phase",
            choices=COUNTER_CHOICES,
        ),
        Option(
            "plycap",
            "int",
            DEFAULT_PLY_LIMIT,
            "pbm's own rule: the game is drawn when this many plies have been played",
            minimum=PLY_LIMIT_RANGE[0],
            maximum=PLY_LIMIT_RANGE[1],
        ),
    )
    example_options = (
        {},
        {"counters": 15},
        {"counters": 20},
        {"counters": 25},
        {"plycap": 100},
    )
    summary = """\
Quad (Mats Winther, 2005, version 1.1) is played on an 8x8 board by
White (O) and Black (X). Each has 12 counters in hand (option counters:
15, 20 or 25); White moves first.

DROPS. First the players take turns dropping one counter on any empty
square, until both hands are empty. White's second counter must go on
the rim (an edge square). Drops never capture.

MOVES. Then, White first, a turn moves one of your counters one square
up, down, left or right to an empty square. The counter that moved
captures every enemy counter next to it that has one of your counters
right behind it on the same line: up to three at once. Stepping
between two enemy counters is safe, two enemy counters in a row are
never captured, and you never have to capture. White plays c5-d5 and
captures d4 and d6 (the echo: "c5-d5 x d4 d6"):

     b c d e          b c d e
  7  . . O .       7  . . O .
  6  . . X .       6  . . . .
  5  . O . X       5  . . O X
  4  . . X .       4  . . . .
  3  . . O .       3  . . O .

WINNING. You win with exactly four of your counters in an unbroken row
or column: five or more in a line do not count, diagonals never count,
and lines along the edge do. This can happen already while dropping.
You also win when your opponent has no counters left, or no move once
all counters are down. If a capture leaves both sides with a four, the
mover wins.

     a b c d e f         a b c d e f
  3  . O O O O .      3  O O O O O .
  Four: a win.        Five: no win.

DRAWS. The third occurrence of the same position with the same side to
move is a draw. pbm's own rule, not Winther's: a game still running
after 1000 plies (option plycap) is drawn."""
    notation = """\
Drop a counter by naming its square: d4 (also @d4 or drop d4).
Move a counter by naming both squares: d4-d5 (also d4d5, d4 d5,
d4:d5). The echo names the captured counters: c6-d6 x d5 d7 e6.
Letters may be in any case."""

    # -- state ------------------------------------------------------------------
    def new_state(self, **options: Any) -> QuadState:
        resolved = self.resolve_options(options)
        counters = resolved["counters"]
        return QuadState(counters, resolved["plycap"], 0, WHITE, 0, 0, (counters, counters))

    def state_options(self, state: QuadState) -> dict[str, Any]:
        return {"counters": state.counters, "plycap": state.ply_limit}

    def to_move(self, state: QuadState) -> int | None:
        return None if state.result is not None else state.side

    def outcome(self, state: QuadState) -> Outcome | None:
        return state.result

    def legal_moves(self, state: QuadState) -> list[QuadMove]:
        if state.result is not None:
            return []
        side = state.side
        occupied = state.white | state.black
        if state.hands[side]:
            # Version 1.1: "White must always drop the second counter on the rim".
            allowed = ~occupied & FULL
            if side == WHITE and state.hands[WHITE] == state.counters - 1:
                allowed &= RIM
            return squares_of(allowed)
        own = state.white if side == WHITE else state.black
        return [
            move
            for origin in squares_of(own)
            for destination, move in STEPS[origin]
            if not occupied >> destination & 1
        ]

    def apply(self, state: QuadState, move: QuadMove) -> QuadState:
        side = state.side
        white, black = state.white, state.black
        if move < SQUARES:
            # A drop adds a counter and captures nothing (Winther's Zillions implementation:
            # docs/games/quad.md, 'Rules as pbm plays them').
            bit = 1 << move
            if side == WHITE:
                white |= bit
                hands = (state.hands[0] - 1, state.hands[1])
            else:
                black |= bit
                hands = (state.hands[0], state.hands[1] - 1)
            result = _judge(side, white, black, hands, False)
            if hands[0] or hands[1]:
                history: tuple[int, ...] = ()
            else:
                # The last drop: the move phase begins, its first position counted once.
                history = (_key(white, black, 1 - side),)
            return QuadState(
                state.counters,
                state.ply_limit,
                state.ply + 1,
                1 - side,
                white,
                black,
                hands,
                history,
                (),
                result,
            )
        origin, destination = divmod(move - SQUARES, SQUARES)
        if side == WHITE:
            own, other = white, black
        else:
            own, other = black, white
        own ^= (1 << origin) | (1 << destination)
        # Custodian capture by the moved counter only, up to three at once (Winther's rules
        # and his Zillions implementation: docs/games/quad.md, 'Rules as pbm plays them').
        captured = 0
        for neighbour, beyond in CAPTURE_PAIRS[destination]:
            if other >> neighbour & 1 and own >> beyond & 1:
                captured |= 1 << neighbour
        other &= ~captured
        white, black = (own, other) if side == WHITE else (other, own)
        hands = state.hands
        result = _judge(side, white, black, hands, bool(captured))
        key = _key(white, black, 1 - side)
        if captured:
            history = (key,)
            trail: tuple[int, ...] = ()
        else:
            history = (*state.history, key)
            trail = (*state.trail, move)
        ply = state.ply + 1
        if result is None:
            result = _draw(history, ply, state.ply_limit)
        return QuadState(
            state.counters,
            state.ply_limit,
            ply,
            1 - side,
            white,
            black,
            hands,
            history,
            trail,
            result,
        )

    def captures(self, state: QuadState, move: QuadMove) -> list[int]:
        """The squares of the enemy counters `move` captures, in square order."""
        if move < SQUARES:
            return []
        origin, destination = divmod(move - SQUARES, SQUARES)
        own, other = (
            (state.white, state.black) if state.side == WHITE else (state.black, state.white)
        )
        own ^= (1 << origin) | (1 << destination)
        return sorted(n for n, b in CAPTURE_PAIRS[destination] if other >> n & 1 and own >> b & 1)

    def fours_in_reach(self, state: QuadState, seat: int) -> list[QuadMove]:
        """The moves of `seat` that would make its exact four, as if it were to move now
        (none while only the other side still drops)."""
        if state.result is not None or (state.hands[1 - seat] and not state.hands[seat]):
            return []
        as_mover = state if state.side == seat else state._replace(side=seat)
        found = []
        for move in self.legal_moves(as_mover):
            ended = self.apply(as_mover, move).result
            if ended is not None and ended.winner == seat and ended.reason == FOUR:
                found.append(move)
        return found

    # -- notation ---------------------------------------------------------------
    def answer_example(self, state: QuadState) -> str:
        kind = "d4" if state.hands[state.side] else "d4-d5"
        return self.legal_example(state, (kind,), kind)

    def format_move(self, state: QuadState, move: QuadMove) -> str:
        if move < SQUARES:
            return square_name(move, SIZE)
        origin, destination = divmod(move - SQUARES, SQUARES)
        return f"{square_name(origin, SIZE)}-{square_name(destination, SIZE)}"

    def describe_move(self, state: QuadState, move: QuadMove) -> str:
        text = self.format_move(state, move)
        taken = self.captures(state, move)
        if taken:
            names = sorted(
                (square_name(sq, SIZE) for sq in taken), key=lambda n: (n[0], int(n[1:]))
            )
            text += " x " + " ".join(names)
        return text

    def parse_move(self, state: QuadState, text: str) -> QuadMove:
        compact = squash(text)
        body, _, claimed = compact.partition("x")  # 'x' is no file letter on 8x8
        drop_word = _DROP_WORDS.match(body)
        if drop_word:
            body = body[drop_word.end() :]
        names = find_squares(body)
        if not names or "".join(names) != body:
            raise InvalidMoveError(text, "write a drop such as d4 or a move such as d4-d5")
        squares = []
        for name in names:
            square = parse_square(name, SIZE, SIZE)
            if square is None:
                raise InvalidMoveError(text, f"{name} is not a square of the 8x8 board")
            squares.append(square)
        if len(squares) > 2 or (drop_word and len(squares) != 1):
            raise InvalidMoveError(text, "write a drop such as d4 or a move such as d4-d5")
        if state.result is not None:
            raise IllegalMoveError(text, "the game is over")
        move = self._check(state, text, squares)
        if claimed:
            self._check_claimed_captures(state, text, move, claimed)
        return move

    def _check(self, state: QuadState, text: str, squares: list[int]) -> QuadMove:
        """The move the squares name, or IllegalMoveError saying why it is not allowed."""
        side = state.side
        occupied = state.white | state.black
        dropping = state.hands[side] > 0
        if len(squares) == 1:
            square = squares[0]
            if not dropping:
                raise IllegalMoveError(text, "all counters are down; move one, e.g. d4-d5")
            if occupied >> square & 1:
                raise IllegalMoveError(text, f"{square_name(square, SIZE)} is occupied")
            if side == WHITE and state.hands[WHITE] == state.counters - 1 and not RIM >> square & 1:
                raise IllegalMoveError(text, "White's second counter must go on the rim")
            return square
        origin, destination = squares
        if dropping:
            raise IllegalMoveError(text, "counters are still being dropped; drop one, e.g. d4")
        own = state.white if side == WHITE else state.black
        if not own >> origin & 1:
            raise IllegalMoveError(
                text, f"there is no {SYMBOLS[side]} counter on {square_name(origin, SIZE)}"
            )
        move = _step(origin, destination)
        if all(m != move for _, m in STEPS[origin]):
            raise IllegalMoveError(text, "a counter moves one square up, down, left or right")
        if occupied >> destination & 1:
            raise IllegalMoveError(text, f"{square_name(destination, SIZE)} is occupied")
        return move

    def _check_claimed_captures(
        self, state: QuadState, text: str, move: QuadMove, claimed: str
    ) -> None:
        """Accept a pasted echo (`c6-d6 x d5 d7`) only when it names the real captures."""
        names = find_squares(claimed)
        if "".join(names) != claimed:
            raise InvalidMoveError(text, "after 'x' list the captured squares, e.g. x d5 d7")
        said = {parse_square(n, SIZE, SIZE) for n in names}
        if said != set(self.captures(state, move)):
            raise IllegalMoveError(text, f"it plays {self.describe_move(state, move)}")

    # -- display and position text --------------------------------------------
    def render(self, state: QuadState, seat: int | None = None, *, headline: bool = True) -> str:
        cells = ["."] * SQUARES
        for sq in squares_of(state.white):
            cells[sq] = "O"
        for sq in squares_of(state.black):
            cells[sq] = "X"
        lines = render_grid(cells, SIZE, SIZE)
        counts = [state.white.bit_count(), state.black.bit_count()]
        lines.append(
            "  "
            + "    ".join(
                f"{self.seats[s]} {SYMBOLS[s]}: {state.hands[s]} in hand, {counts[s]} on board"
                for s in (WHITE, BLACK)
            )
        )
        if headline:
            lines += ["  " + line for line in self.headline(state)]
        return "\n".join(lines) + "\n"

    def headline(self, state: QuadState) -> list[str]:
        return [self._status(state)]

    def _status(self, state: QuadState) -> str:
        result = state.result
        if result is not None:
            if result.winner is None:
                return f"Game over: draw ({result.reason})."
            return f"Game over: {self.seats[result.winner]} wins ({result.reason})."
        who = self.seats[state.side]
        if not state.hands[state.side]:
            return f"{who} to move."
        if state.side == WHITE and state.hands[WHITE] == state.counters - 1:
            return f"{who} to drop, on the rim."
        return f"{who} to drop."

    def dump(self, state: QuadState) -> str:
        """`N ply/limit side hands board trail`, e.g. `12 2/1000 o 11/11 8/8/8/8/3OX3/8/8/8 -`.

        The trail lists the steps since the move phase began or the last capture, which
        is what the repetition rule needs (docs/games/quad.md).
        """
        ranks = []
        for rank in range(SIZE - 1, -1, -1):
            row, gap = "", 0
            for file in range(SIZE):
                bit = 1 << (rank * SIZE + file)
                symbol = "O" if state.white & bit else "X" if state.black & bit else ""
                if symbol:
                    row += (str(gap) if gap else "") + symbol
                    gap = 0
                else:
                    gap += 1
            ranks.append(row + (str(gap) if gap else ""))
        trail = ",".join(self.format_move(state, m).replace("-", "") for m in state.trail)
        side = "o" if state.side == WHITE else "x"
        hands = f"{state.hands[0]}/{state.hands[1]}"
        plies = f"{state.ply}/{state.ply_limit}"
        return f"{state.counters} {plies} {side} {hands} {'/'.join(ranks)} {trail or '-'}"

    def load(self, text: str) -> QuadState:
        fields = text.split()
        if len(fields) != 6:
            raise PositionError(f"a Quad position has 6 fields, not {len(fields)}: '{text}'")
        counters_text, plies_text, side_text, hands_text, board_text, trail_text = fields
        try:
            counters = int(counters_text)
            hands = tuple(int(h) for h in hands_text.split("/"))
            ply, ply_limit = (int(n) for n in plies_text.split("/"))
        except ValueError:
            raise PositionError(f"bad numbers in the position '{text}'") from None
        if counters not in COUNTER_CHOICES or len(hands) != 2:
            raise PositionError(f"bad counter numbers in '{text}'")
        low, high = PLY_LIMIT_RANGE
        if not low <= ply_limit <= high or not 0 <= ply <= ply_limit:
            raise PositionError(f"bad ply count or ply limit '{plies_text}'")
        if side_text not in ("o", "x"):
            raise PositionError(f"the side to move must be o or x, not '{side_text}'")
        side = WHITE if side_text == "o" else BLACK
        white, black = _read_board(board_text)
        for s, held in ((WHITE, white), (BLACK, black)):
            if not 0 <= hands[s] <= counters or hands[s] + held.bit_count() > counters:
                raise PositionError(f"{self.seats[s]} has more than {counters} counters")
        dropping = hands[0] or hands[1]
        if dropping and hands[WHITE] - hands[BLACK] != (0 if side == WHITE else -1):
            raise PositionError("the hands do not fit the side to move (White drops first)")
        state_hands = (hands[0], hands[1])
        trail = self._read_trail(trail_text) if trail_text != "-" else ()
        drops = 2 * counters - hands[0] - hands[1]
        if dropping:
            if trail or ply != drops:
                raise PositionError("in the drop phase the ply count is the number of drops")
            history: tuple[int, ...] = ()
        else:
            if ply < drops + len(trail):
                raise PositionError("the ply count is smaller than the plies the position needs")
            history = _rebuild_history(white, black, side, trail)
        result = _judge(1 - side, white, black, state_hands, True)
        if result is None and history:
            result = _draw(history, ply, ply_limit)
        return QuadState(
            counters, ply_limit, ply, side, white, black, state_hands, history, trail, result
        )

    def _read_trail(self, text: str) -> tuple[QuadMove, ...]:
        moves = []
        for part in text.split(","):
            names = find_squares(part)
            squares = [sq for n in names if (sq := parse_square(n, SIZE, SIZE)) is not None]
            if len(names) != 2 or len(squares) != 2 or "".join(names) != part:
                raise PositionError(f"'{part}' in the trail is not a step such as d4d5")
            origin, destination = squares
            moves.append(_step(origin, destination))
        return tuple(moves)


def _read_board(text: str) -> tuple[int, int]:
    ranks = text.split("/")
    if len(ranks) != SIZE:
        raise PositionError(f"the board needs {SIZE} ranks separated by '/': '{text}'")
    white = black = 0
    for row, rank_text in enumerate(ranks):
        rank = SIZE - 1 - row
        file = 0
        for char in rank_text:
            if char.isdigit():
                file += int(char)
                continue
            if char not in "OX" or file >= SIZE:
                raise PositionError(f"bad rank '{rank_text}' in the board '{text}'")
            bit = 1 << (rank * SIZE + file)
            if char == "O":
                white |= bit
            else:
                black |= bit
            file += 1
        if file != SIZE:
            raise PositionError(f"rank '{rank_text}' does not have {SIZE} squares")
    return white, black


def _rebuild_history(white: int, black: int, side: int, trail: tuple[int, ...]) -> tuple[int, ...]:
    """Undo the trail's steps from the current position, collecting the repetition keys."""
    keys = [_key(white, black, side)]
    mover = 1 - side
    for move in reversed(trail):
        origin, destination = divmod(move - SQUARES, SQUARES)
        if destination not in [d for d, _ in STEPS[origin]]:
            raise PositionError("a step in the trail is not one orthogonal square")
        own = white if mover == WHITE else black
        if not own >> destination & 1 or (white | black) >> origin & 1:
            raise PositionError("the trail does not lead to this board")
        own ^= (1 << origin) | (1 << destination)
        white, black = (own, black) if mover == WHITE else (white, own)
        keys.append(_key(white, black, mover))
        mover = 1 - mover
    keys.reverse()
    return tuple(keys)


GAME = Quad()
