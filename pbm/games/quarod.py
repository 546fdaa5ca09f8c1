"""Quarod (Luis Bolaños Mures, 2020): placing and swapping engaged pairs of rod pieces.

Rules: Quarod rules, Luis Bolaños Mures 2020; the rules as pbm plays them, with pbm's
decisions (the zero-zero tie, the first player named plays Black), are in
docs/games/quarod.md, 'Rules as pbm plays them'.

A state holds the cells (0 empty, else `piece(colour, rod)`), the colour to move, whether
the pie switch was taken, and bit masks derived from the cells so that move generation is
a few integer operations: empty squares, black pieces, engaged pieces, and the engaged
pairs (by their lower square) lying east-west and north-south.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple, TypeAlias

from pbm.games.base import (
    AmbiguousMoveError,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    Option,
    Outcome,
    PositionError,
    squash,
)
from pbm.games.grid import parse_square, render_grid, square_name
from pbm.games.quarod_board import (
    BLACK,
    PIE,
    WHITE,
    colour_of,
    geometry,
    piece,
    rod_of,
    score,
)

# The game's API for bots and pictures: the rules' values and, re-exported here, the
# fast board facts they search and draw with (docs/protocol.md, "Board API"). Bots
# and pictures import them from this module, never from `quarod_board`, so the board's
# representation can change behind this list (tests/test_layers.py holds them to it).
__all__ = [
    "BLACK",
    "COLOUR_NAMES",
    "GAME",
    "PIE",
    "WHITE",
    "Quarod",
    "QuarodMove",
    "QuarodState",
    "colour_of",
    "geometry",
    "rod_of",
    "score",
]

COLOUR_NAMES = ("Black", "White")
# Position text: Black pieces N E S W, White pieces n e s w, '.' empty.
DUMP_LETTERS = ".NESWnesw"
# Board: X Black, O White, followed by the rod's arrow; lower case when not engaged.
ARROWS = "^>v<"

# `Bc3+Wc4`, `c3<>c4`, `c3 c4`... after squash(); colour letters b/x Black, w/o White.
_MOVE = re.compile(r"([bwxo]?)([a-z])(\d{1,2})(\+|<>|,|&)?([bwxo]?)([a-z])(\d{1,2})")
_PIE_WORDS = ("swap", "pie", "switch", "swapsides")

# PIE, a placement `black * area + white`, or a swap `swap_base + low * area + high`
# (area = size * size squares, swap_base = area * area: see quarod_board.Geometry).
QuarodMove: TypeAlias = int


class QuarodState(NamedTuple):
    size: int
    cells: bytes
    turn: int  # colour (seat) to move, also kept once the game is over
    switched: bool  # the pie switch was taken: the players hold the other colours
    empty: int  # the masks below are derived from `cells`
    black: int
    engaged: int
    paired_h: int  # bit i: the pieces on i and i+1 are engaged to each other
    paired_v: int  # bit i: the pieces on i and i+size are engaged to each other

    @property
    def options(self) -> dict[str, Any]:
        return {"size": self.size}


def _from_cells(size: int, cells: bytes, turn: int, switched: bool) -> QuarodState:
    """A state with its masks computed from the cells (used by new_state and load)."""
    geo = geometry(size)
    empty = black = engaged = paired_h = paired_v = 0
    for square, cell in enumerate(cells):
        if not cell:
            empty |= 1 << square
            continue
        if colour_of(cell) == BLACK:
            black |= 1 << square
        # Engaged: adjacent, opposite colours, rods pointing at each other (Quarod rules,
        # 'Definitions').
        other = square + geo.offsets[rod_of(cell)]
        partner = cells[other]
        if (
            partner
            and colour_of(partner) != colour_of(cell)
            and other + geo.offsets[rod_of(partner)] == square
        ):
            engaged |= 1 << square
            step = other - square
            if step == 1:
                paired_h |= 1 << square
            elif step == size:
                paired_v |= 1 << square
    return QuarodState(size, cells, turn, switched, empty, black, engaged, paired_h, paired_v)


def _unpair(a: int, b: int, paired_h: int, paired_v: int) -> tuple[int, int]:
    low, step = min(a, b), abs(a - b)
    if step == 1:
        return paired_h & ~(1 << low), paired_v
    return paired_h, paired_v & ~(1 << low)


def _pair(a: int, b: int, paired_h: int, paired_v: int) -> tuple[int, int]:
    low, step = min(a, b), abs(a - b)
    if step == 1:
        return paired_h | (1 << low), paired_v
    return paired_h, paired_v | (1 << low)


class Quarod(Game[QuarodState, QuarodMove]):
    name = "quarod"
    title = "Quarod"
    aliases = ()
    seats = ("Black", "White")
    move_words = frozenset({"swap"})
    options = (Option("size", "int", 8, "board size (size x size squares)", minimum=5, maximum=12),)
    example_options = ({}, *({"size": n} for n in (5, 6, 7, 9, 10, 11, 12)))
    summary = """\
Quarod (Luis Bolaños Mures, 2020) is played on an empty square board
of 8x8 squares (option size: 5x5 to 12x12). Every piece is Black (X)
or White (O) and has a rod pointing at one of its edges, drawn as an
arrow: X^ points up, O< left. Two orthogonally adjacent pieces of
opposite colours are ENGAGED when their rods point at each other; a
piece that is not engaged is drawn in lower case (x, o). Black moves
first, and both players handle pieces of both colours.

A turn is one of these:

PLACE a black and a white piece on two adjacent empty squares, engaged
to each other (you choose only which square gets which colour):

     b  c  d                   b  c  d
  3  .  .  .     Bc3+Wd3    3  .  X> O<
  2  .  .  .                2  .  .  .

SWAP two adjacent pieces of different colours that are each engaged,
but not to each other: they exchange squares and turn to face each
other, and their old partners are no longer engaged. Here c2 (engaged
to b2) and c3 (engaged to c4) swap:

     b  c  d                   b  c  d
  4  .  Ov .                4  .  ov .
  3  .  X^ .     c2<>c3     3  .  Ov .
  2  X> O< .                2  x> X^ .

You pass only when no move exists; then neither player has one, and
pbm ends the game at once.

SCORE. A group is a set of like-coloured pieces connected orthogonally
(rods do not matter). Your score is the biggest group size in which
you have more groups than your opponent (zero if there is none); the
higher score wins. If both scores are zero, whoever made the last
placement or swap loses.

PIE RULE. On White's first turn only, White may answer "swap": the
players exchange colours (the first player now holds White) and White
moves next."""
    notation = """\
Placement: Bc3+Wc4 (Black on c3, White on c4; in either order; also
  "place Bc3 Wc4", X/O for B/W). One colour is enough: "c3 Wc4".
  "c3 c4" with no colour is a swap when both squares hold pieces; on
  two empty squares it is refused, as it could be either placement.
Swap: c3<>c4 (also "swap c3 c4").
Pie switch (White's first turn only): swap
There is no pass to type: when no move exists the game is over."""

    # -- states ---------------------------------------------------------------
    def new_state(self, **options: Any) -> QuarodState:
        size = self.resolve_options(options)["size"]
        return _from_cells(size, bytes(size * size), BLACK, False)

    def player_seats(self, state: QuarodState) -> tuple[int, ...]:
        # Seats are colours; the pie switch exchanges which player holds which.
        return (1, 0) if state.switched else (0, 1)

    def to_move(self, state: QuarodState) -> int | None:
        return None if self._over(state) else state.turn

    def _pie_open(self, state: QuarodState) -> bool:
        # Quarod rules, 'Pie rule': "on their first turn only". Two pieces on the board with
        # White to move happens only right after Black's first placement.
        if state.turn != WHITE or state.switched:
            return False
        return state.size * state.size - state.empty.bit_count() == 2

    def _over(self, state: QuarodState) -> bool:
        # Both sides share one set of moves, so "no move" ends the game (two passes).
        geo = geometry(state.size)
        if geo.free_pairs(state.empty):
            return False
        return not geo.swap_pairs(state.engaged, state.black, state.paired_h, state.paired_v)

    def legal_moves(self, state: QuarodState) -> list[QuarodMove]:
        moves = geometry(state.size).moves(
            state.empty, state.engaged, state.black, state.paired_h, state.paired_v
        )
        if self._pie_open(state):
            moves.append(PIE)
        return moves

    def apply(self, state: QuarodState, move: QuarodMove) -> QuarodState:
        size, cells, turn, switched, empty, black, engaged, paired_h, paired_v = state
        if move == PIE:
            # The players exchange colours; White (now the first player) moves next.
            return state._replace(switched=True)
        geo = geometry(size)
        area = geo.area
        board = bytearray(cells)
        if move < geo.swap_base:
            # Quarod rules, 'Play': two pieces of different colours on adjacent empty squares,
            # engaged to each other (each rod points at the other piece).
            b, w = divmod(move, area)
            board[b] = piece(BLACK, geo.rod_towards[w - b])
            board[w] = piece(WHITE, geo.rod_towards[b - w])
            both = (1 << b) | (1 << w)
            empty &= ~both
            black |= 1 << b
            engaged |= both
            paired_h, paired_v = _pair(b, w, paired_h, paired_v)
        else:
            # Quarod rules, 'Play': swap two adjacent pieces engaged, but not to each other,
            # and turn them to face each other.
            a, c = divmod(move - geo.swap_base, area)
            offsets = geo.offsets
            old_a, old_c = cells[a], cells[c]
            partner_a = a + offsets[rod_of(old_a)]
            partner_c = c + offsets[rod_of(old_c)]
            paired_h, paired_v = _unpair(a, partner_a, paired_h, paired_v)
            paired_h, paired_v = _unpair(c, partner_c, paired_h, paired_v)
            paired_h, paired_v = _pair(a, c, paired_h, paired_v)
            # The old partners now face a piece of their own colour: no longer engaged.
            engaged &= ~((1 << partner_a) | (1 << partner_c))
            board[c] = piece(colour_of(old_a), geo.rod_towards[a - c])
            board[a] = piece(colour_of(old_c), geo.rod_towards[c - a])
            black ^= (1 << a) | (1 << c)
        return QuarodState(
            size, bytes(board), 1 - turn, switched, empty, black, engaged, paired_h, paired_v
        )

    # -- scoring ----------------------------------------------------------------
    def scores(self, state: QuarodState) -> tuple[int, int]:
        """(Black's score, White's score) as the position stands."""
        blacks, whites = geometry(state.size).group_sizes(state.cells)
        return score(blacks, whites), score(whites, blacks)

    def outcome(self, state: QuarodState) -> Outcome | None:
        if not self._over(state):
            return None
        black_score, white_score = self.scores(state)
        scores = (black_score, white_score)
        if black_score != white_score:
            winner = BLACK if black_score > white_score else WHITE
            reason = f"higher score: Black {black_score}, White {white_score}"
            return Outcome(winner, reason, scores)
        # Both zero (equal scores above zero cannot happen). The last placement or swap
        # was made by the colour that is not to move, passes and pie excluded (pbm's
        # decision: docs/games/quarod.md, 'Rules as pbm plays them', "Zero-zero tie").
        last = 1 - state.turn
        reason = f"both scores are zero; {COLOUR_NAMES[last]} made the last move"
        return Outcome(1 - last, reason, scores)

    # -- notation -----------------------------------------------------------------
    def answer_example(self, state: QuarodState) -> str:
        return self.legal_example(state, ("Bc3+Wc4",), "Bc3+Wc4", skip=("swap",))

    def format_move(self, state: QuarodState, move: QuarodMove) -> str:
        if move == PIE:
            return "swap"
        area = state.size * state.size
        if move < area * area:
            b, w = divmod(move, area)
            return f"B{square_name(b, state.size)}+W{square_name(w, state.size)}"
        a, c = divmod(move - area * area, area)
        return f"{square_name(a, state.size)}<>{square_name(c, state.size)}"

    def describe_move(self, state: QuarodState, move: QuarodMove) -> str:
        text = self.format_move(state, move)
        if move == PIE:
            return f"{text} (pie rule: the players exchange colours; White moves next)"
        area = state.size * state.size
        if move >= area * area:
            a, c = divmod(move - area * area, area)
            offsets = geometry(state.size).offsets
            freed = sorted(
                (a + offsets[rod_of(state.cells[a])], c + offsets[rod_of(state.cells[c])])
            )
            names = " and ".join(square_name(s, state.size) for s in freed)
            text += f" ({names} no longer engaged)"
        return text

    def parse_move(self, state: QuarodState, text: str) -> QuarodMove:
        word = squash(text)
        if not word:
            raise InvalidMoveError(text, "write a placement like Bc3+Wc4 or a swap like c3<>c4")
        over = self._over(state)
        if word in _PIE_WORDS:
            if not over and self._pie_open(state):
                return PIE
            raise IllegalMoveError(text, "the pie swap is allowed only as White's first move")
        if word == "pass":
            raise IllegalMoveError(
                text, "you pass only when no move exists, and then the game is already over"
            )
        kind = None
        for keyword in ("place", "swap"):
            if word.startswith(keyword) and len(word) > len(keyword):
                kind, word = keyword, word[len(keyword) :]
                break
        found = _MOVE.fullmatch(word)
        if not found:
            raise InvalidMoveError(text, "write a placement like Bc3+Wc4 or a swap like c3<>c4")
        colour1, file1, rank1, separator, colour2, file2, rank2 = found.groups()
        if separator == "<>" or kind == "swap":
            if colour1 or colour2 or separator == "+" or kind == "place":
                raise InvalidMoveError(text, "a swap names two squares and no colours")
            kind = "swap"
        elif separator == "+" or colour1 or colour2:
            kind = "place"
        squares = []
        for file, rank in ((file1, rank1), (file2, rank2)):
            square = parse_square(file + rank, state.size, state.size)
            if square is None:
                raise InvalidMoveError(
                    text, f"{file}{rank} is not a square of the {state.size}x{state.size} board"
                )
            squares.append(square)
        if over:
            raise IllegalMoveError(text, "the game is over")
        first, second = squares
        if second not in geometry(state.size).neighbours[first]:
            raise IllegalMoveError(text, "the two squares must be orthogonally adjacent")
        cells = state.cells
        if kind is None:
            if not cells[first] and not cells[second]:
                kind = "place"
            elif cells[first] and cells[second]:
                kind = "swap"
            else:
                raise IllegalMoveError(
                    text, "a placement needs two empty squares, a swap two pieces"
                )
        if kind == "place":
            return self._parse_placement(state, text, squares, (colour1, colour2))
        return self._parse_swap(state, text, first, second)

    def _parse_placement(
        self, state: QuarodState, text: str, squares: list[int], letters: tuple[str, str]
    ) -> QuarodMove:
        names = [square_name(s, state.size) for s in squares]
        for square, name in zip(squares, names, strict=True):
            if state.cells[square]:
                raise IllegalMoveError(text, f"{name} is not empty")
        colours = [None if not x else (BLACK if x in "bx" else WHITE) for x in letters]
        if colours[0] is None and colours[1] is not None:
            colours[0] = 1 - colours[1]
        if colours[0] is None:
            area = state.size * state.size
            first, second = squares
            candidates = [first * area + second, second * area + first]
            raise AmbiguousMoveError(text, [self.format_move(state, m) for m in candidates])
        if colours[1] is not None and colours[1] == colours[0]:
            raise IllegalMoveError(text, "one piece must be Black and the other White")
        black, white = squares if colours[0] == BLACK else squares[::-1]
        return black * state.size * state.size + white

    def _parse_swap(self, state: QuarodState, text: str, a: int, c: int) -> QuarodMove:
        cells, size = state.cells, state.size
        for square in (a, c):
            if not cells[square]:
                raise IllegalMoveError(text, f"{square_name(square, size)} is empty")
        if colour_of(cells[a]) == colour_of(cells[c]):
            raise IllegalMoveError(text, "a swap needs two pieces of different colours")
        for square in (a, c):
            if not state.engaged >> square & 1:
                raise IllegalMoveError(text, f"{square_name(square, size)} is not engaged")
        offsets = geometry(size).offsets
        if a + offsets[rod_of(cells[a])] == c:
            raise IllegalMoveError(text, "those two pieces are engaged to each other")
        low, high = min(a, c), max(a, c)
        return size**4 + low * size * size + high

    # -- boards and position text ---------------------------------------------------
    def render(self, state: QuarodState, seat: int | None = None, *, headline: bool = True) -> str:
        size = state.size
        cells = []
        for square, cell in enumerate(state.cells):
            if not cell:
                cells.append(". ")
                continue
            letter = "XO"[colour_of(cell)]
            if not state.engaged >> square & 1:
                letter = letter.lower()
            cells.append(letter + ARROWS[rod_of(cell)])
        lines = render_grid(cells, size, size, cell_width=2)
        lines.append("  X Black, O White; arrow = rod; lower case x o = not engaged")
        blacks, whites = geometry(size).group_sizes(state.cells)
        for name, groups in (("Black", blacks), ("White", whites)):
            lines += _wrap(f"  {name} groups (size x count):", _group_words(groups))
        black_score, white_score = score(blacks, whites), score(whites, blacks)
        lines.append(f"  Score now: Black {black_score}, White {white_score}")
        if state.switched:
            lines.append("  Pie switch taken: the first player now holds White")
        if headline:
            lines += ["  " + line for line in self.headline(state)]
        return "\n".join(lines) + "\n"

    def headline(self, state: QuarodState) -> list[str]:
        result = self.outcome(state)
        if result is None:
            note = f"{COLOUR_NAMES[state.turn]} to move"
            if self._pie_open(state):
                note += '; White may answer "swap" (pie rule)'
            return [note]
        who = COLOUR_NAMES[result.winner] if result.winner is not None else "nobody"
        return [
            line[2:] for line in _wrap(f"  Game over: {who} wins", f"({result.reason})".split())
        ]

    def dump(self, state: QuarodState) -> str:
        size = state.size
        ranks = [
            "".join(DUMP_LETTERS[state.cells[rank * size + f]] for f in range(size))
            for rank in range(size - 1, -1, -1)
        ]
        sides = "switched" if state.switched else "kept"
        return f"{'/'.join(ranks)} {'bw'[state.turn]} {sides}"

    def load(self, text: str) -> QuarodState:
        fields = text.split()
        if len(fields) != 3:
            raise PositionError("a Quarod position is 'RANKS TURN SIDES', e.g. '...../... b kept'")
        board, turn_text, sides = fields
        ranks = board.split("/")
        size = len(ranks)
        if not 5 <= size <= 12 or any(len(rank) != size for rank in ranks):
            raise PositionError(f"the board must be N ranks of N squares, N from 5 to 12: {board}")
        if turn_text not in ("b", "w"):
            raise PositionError(f"the side to move is b or w, not '{turn_text}'")
        if sides not in ("kept", "switched"):
            raise PositionError(f"the sides field is 'kept' or 'switched', not '{sides}'")
        cells = bytearray(size * size)
        for row, rank in enumerate(ranks):
            for file, letter in enumerate(rank):
                code = DUMP_LETTERS.find(letter)
                if code < 0:
                    raise PositionError(f"'{letter}' is not one of the letters {DUMP_LETTERS}")
                cells[(size - 1 - row) * size + file] = code
        _check_rods(cells, size)
        return _from_cells(size, bytes(cells), "bw".index(turn_text), sides == "switched")


def _check_rods(cells: bytearray, size: int) -> None:
    """Reject boards no game reaches: every rod points at a piece (placed pieces face
    their partner and swaps never empty a square), and the colours are equal in number."""
    geo = geometry(size)
    for square, cell in enumerate(cells):
        if not cell:
            continue
        rod = rod_of(cell)
        other = square + geo.offsets[rod]
        if other not in geo.neighbours[square] or not cells[other]:
            name = square_name(square, size)
            raise PositionError(f"the rod of the piece on {name} does not point at a piece")
    blacks = sum(1 for cell in cells if cell and colour_of(cell) == BLACK)
    whites = sum(1 for cell in cells if cell and colour_of(cell) == WHITE)
    if blacks != whites:
        raise PositionError(f"{blacks} black and {whites} white pieces: the counts must be equal")


def _group_words(groups: dict[int, int]) -> list[str]:
    return [f"{size}x{groups[size]}" for size in sorted(groups, reverse=True)] or ["none"]


def _wrap(head: str, words: list[str], width: int = 72) -> list[str]:
    lines, line = [], head
    for word in words:
        if len(line) + 1 + len(word) > width:
            lines.append(line)
            line = " " * 4
        line += " " + word
    lines.append(line)
    return lines


GAME = Quarod()
