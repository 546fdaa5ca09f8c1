"""QUADRUPEL (Andreas Liebl-Wachsmuth, 1986) and its four variants, on a 6x6 board.

Rules: the Quadrupel rule sheet, Andreas Liebl-Wachsmuth 1986 (English translation by
V. M. González, 2013), with pbm's decisions where it is silent (docs/games/quadrupel.md).
One module plays all five games of the sheet; the `variant` option picks one (basic,
added, points, position, combination).

A state is an immutable value: the 36 cells (0 empty, else 1 + seat + 2 * dots), the
seat to move, the phase (setups awaited, extra turns), the back-and-forth memory and the
position history that the repetition rule needs. A board move is the int
`from * 36 + to` (nothing is captured, so from and to identify it: docs/games/quadrupel.md,
'Notation'); a setup move is the tuple of dot values for the mover's four start squares in
square order.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field, replace
from itertools import pairwise, permutations
from typing import Any, ClassVar, NamedTuple, TypeAlias

from pbm.games.base import (
    Game,
    IllegalMoveError,
    InvalidMoveError,
    Option,
    OptionError,
    Outcome,
    PositionError,
    squash,
)
from pbm.games.grid import render_grid, square_name
from pbm.games.quadrupel_board import (
    JUMP_OVER,
    JUMPS,
    SHAPE_NAMES,
    SHAPES,
    SIZE,
    SQUARES,
    STEPS,
    ZONES,
)

# The game's API for bots and pictures: the rules' values and, re-exported here, the
# fast board facts they search and draw with (docs/protocol.md, "Board API"). Bots
# and pictures import them from this module, never from `quadrupel_board`, so the board's
# representation can change behind this list (tests/test_layers.py holds them to it).
__all__ = [
    "BLACK",
    "DOTTED",
    "GAME",
    "SEAT_NAMES",
    "SHAPES",
    "SHAPE_NAMES",
    "SIZE",
    "SQUARES",
    "START",
    "SYMBOLS",
    "VARIANT_TITLES",
    "WHITE",
    "ZONES",
    "Quadrupel",
    "QuadrupelMove",
    "QuadrupelState",
]

BLACK, WHITE = 0, 1
SEAT_NAMES = ("Black", "White")
SYMBOLS = ("X", "O")

VARIANTS = ("basic", "added", "points", "position", "combination")
DOTTED = frozenset({"points", "position", "combination"})  # variants with a setup move
VARIANT_TITLES = {
    "basic": "QUADRUPEL",
    "added": "QUADRUPEL - added value game",
    "points": "QUADRUPEL - point game",
    "position": "QUADRUPEL - position game",
    "combination": "QUADRUPEL - combination game",
}
VARIANT_SYNONYMS = {
    "quadrupel": "basic",
    "plain": "basic",
    "added-value": "added",
    "addedvalue": "added",
    "value": "added",
    "point": "points",
    "pointgame": "points",
    "positions": "position",
    "combined": "combination",
    "combo": "combination",
}

# Start position (the rule sheet's figure; docs/games/quadrupel.md, 'The basic game'):
# Black d5 c4 d4 c3, White c5 b4 e4 d3; Black begins.
START = ((14, 20, 21, 27), (15, 19, 22, 26))
MAX_EXTRA_TURNS = 3  # combination game: "only three additional moves are possible"
TURN_BIT = 1 << (4 * SQUARES)  # the side to move, above the 36 four-bit cells of a key

# A board move is `from * 36 + to`; a setup is the dots of the mover's start squares.
Setup: TypeAlias = tuple[int, ...]
QuadrupelMove: TypeAlias = int | Setup


def _code(seat: int, dots: int) -> int:
    return 1 + seat + 2 * dots


def _owner(code: int) -> int:
    return (code - 1) & 1


def _dots(code: int) -> int:
    return (code - 1) >> 1


def _name(square: int) -> str:
    return square_name(square, SIZE)


def _jump_path(cells: tuple[int, ...], frm: int, to: int) -> list[int] | None:
    """The squares of a jump chain from `frm` to `to` (each jump goes over one adjacent
    stone to an empty square: docs/games/quadrupel.md, 'The basic game'), the fewest
    jumps, first found in `JUMP_BITS` order; None for a step or a single jump, which
    `from-to` tells whole."""
    came: dict[int, int] = {frm: frm}
    frontier = [frm]
    for square in frontier:  # breadth first: the list grows while it is walked
        for over, land, _ in JUMP_BITS[square]:
            if cells[over] and over != frm and not cells[land] and land not in came:
                came[land] = square
                frontier.append(land)
    if to not in came or came[to] == frm:
        return None
    path = [to]
    while path[-1] != frm:
        path.append(came[path[-1]])
    return path[::-1]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _parse_variant(text: str) -> str:
    low = text.strip().lower().replace(" ", "-").replace("_", "-")
    return VARIANT_SYNONYMS.get(low, VARIANT_SYNONYMS.get(low.replace("-", ""), low))


def _parse_goal(text: str) -> str:
    low = text.strip().lower()
    return {"min": "minimum", "max": "maximum"}.get(low, low)


@dataclass(frozen=True, slots=True)
class Rules:
    """The resolved challenge options of one game."""

    variant: str = "basic"
    goal: str = "minimum"
    threshold: int = 20
    zone2: str = "placement"
    plycap: int = 400

    def as_options(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "goal": self.goal,
            "threshold": self.threshold,
            "zone2": self.zone2,
            "plycap": self.plycap,
        }


@dataclass(frozen=True, slots=True)
class ExtraTurns:
    """The added-value/combination phase after the first QUADRUPEL (rule sheet, parts 2 and 5).

    `builder` built the first QUADRUPEL (a `shape` worth `points` dots x zones) and is
    frozen; his opponent has played `used` of at most `limit` extra turns; `value` is the
    builder's score that the opponent must reach.
    """

    builder: int
    shape: int
    points: int
    value: int
    used: int
    limit: int


@dataclass(frozen=True, slots=True)
class QuadrupelState:
    rules: Rules
    cells: tuple[int, ...]
    turn: int  # the seat to move (after the end: the seat that would have moved)
    ply: int  # board moves played (setup turns do not count)
    pending: int  # bit per seat whose setup is still awaited
    extra: ExtraTurns | None
    banned: tuple[int, int]  # per seat, the move the back-and-forth rule forbids, or -1
    last: tuple[int, int]  # per seat, his last board move, or -1
    history: tuple[int, ...]  # position keys since the game (or loaded position) began
    line: tuple[int, ...]  # the board moves since then
    result: Outcome | None
    # Derived from `cells`, kept for speed.
    stones: tuple[tuple[int, ...], tuple[int, ...]] = field(compare=False)
    masks: tuple[int, int] = field(compare=False)


class ShapeMove(NamedTuple):
    """A board move that completes a QUADRUPEL: its text, the shape's name, and its
    points (dots x zones) in the point and combination games, else None."""

    move: str
    shape: str
    points: int | None


def _position_key(cells: tuple[int, ...], turn: int) -> int:
    key = turn * TURN_BIT
    for square, code in enumerate(cells):
        if code:
            key += code << (4 * square)
    return key


def _derived(
    cells: tuple[int, ...],
) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[int, int]]:
    stones: tuple[list[int], list[int]] = ([], [])
    for square, code in enumerate(cells):
        if code:
            stones[_owner(code)].append(square)
    masks = (sum(1 << s for s in stones[0]), sum(1 << s for s in stones[1]))
    return (tuple(stones[0]), tuple(stones[1])), masks


def _can_move(cells: tuple[int, ...], stones: tuple[int, ...]) -> bool:
    """Whether any stone has a step or a jump (the back-and-forth ban aside)."""
    for square in stones:
        for step in STEPS[square]:
            if not cells[step]:
                return True
        for over, land in JUMPS[square]:
            if cells[over] and not cells[land]:
                return True
    return False


def _points(cells: tuple[int, ...], stones: tuple[int, ...]) -> int:
    """Rule sheet, part 3: the sum over the four stones of dots x zone value (10..30)."""
    return sum(_dots(cells[s]) * ZONES[s] for s in stones)


def _reverse(move: int) -> int:
    frm, to = divmod(move, SQUARES)
    return to * SQUARES + frm


def _after_move(banned: int, last: int, move: int) -> tuple[int, int]:
    """(banned, last) of the mover after `move`: the third traversal x->y by the same
    stone in its owner's consecutive turns is illegal (pbm's decision "Back and forth" in
    docs/games/quadrupel.md, 'The basic game')."""
    return (last if last >= 0 and move == _reverse(last) else -1), move


SETUP_EXAMPLE = "setup c4=1 d4=2 d5=3 c3=4"
POSITION_SETUP_EXAMPLE = "setup c4=1 d4=1"
_BOARD_TEXT = re.compile(r"(?:[a-z]\d+)+")
_SQUARE_TEXT = re.compile(r"[a-z]\d+")
_SETUP_PAIR = re.compile(r"([a-z]\d+)\s*[=:]\s*([0-9?])")


class Quadrupel(Game[QuadrupelState, QuadrupelMove]):
    name: ClassVar[str] = "quadrupel"
    title: ClassVar[str] = "Quadrupel"
    aliases: ClassVar[tuple[str, ...]] = ("quadruple",)
    seats: ClassVar[tuple[str, ...]] = SEAT_NAMES
    # Names under which each game of the rule sheet can be challenged, with the options
    # they stand for; the server looks a challenged name up here (see docs/games).
    variant_aliases: ClassVar[dict[str, dict[str, Any]]] = {
        "quadrupel-basic": {"variant": "basic"},
        "quadrupel-added": {"variant": "added"},
        "quadrupel-added-value": {"variant": "added"},
        "quadrupel-points": {"variant": "points"},
        "quadrupel-point": {"variant": "points"},
        "quadrupel-minimum": {"variant": "points", "goal": "minimum"},
        "quadrupel-maximum": {"variant": "points", "goal": "maximum"},
        "quadrupel-position": {"variant": "position"},
        "quadrupel-zone2": {"variant": "position", "zone2": "placement"},
        "quadrupel-zone2-ban": {"variant": "position", "zone2": "ban"},
        "quadrupel-combination": {"variant": "combination"},
    }
    options: ClassVar[tuple[Option, ...]] = (
        Option(
            "variant",
            "choice",
            "basic",
            "which game of the rule sheet: basic, added (added value), points (point game),"
            " position (position game) or combination",
            choices=VARIANTS,
            parse=_parse_variant,
        ),
        Option(
            "goal",
            "choice",
            "minimum",
            "point game only: minimum (reach the threshold) or maximum (a match of games)",
            choices=("minimum", "maximum"),
            parse=_parse_goal,
        ),
        Option(
            "threshold",
            "int",
            20,
            "point game, goal=minimum: the points a QUADRUPEL needs to win",
            minimum=10,
            maximum=30,
        ),
        Option(
            "zone2",
            "choice",
            "placement",
            "position game: placement (both 1-stones in zone 2) or ban (neither in zone 2)",
            choices=("placement", "ban"),
        ),
        Option(
            "plycap",
            "int",
            400,
            "pbm addition: the game is drawn after this many board moves",
            minimum=20,
            maximum=2000,
        ),
    )
    summary: ClassVar[str] = """\
Quadrupel (Andreas Liebl-Wachsmuth, 1986) is played on a 6x6 board
with four stones each. Black (X) starts on c3 c4 d4 d5, White (O) on
b4 c5 d3 e4; Black moves first.

     a b c d e f
  6  . . . . . .
  5  . . O X . .
  4  . O X X O .
  3  . . X O . .
  2  . . . . . .
  1  . . . . . .

MOVES. A turn moves one of your stones: one step up, down, left or
right to an empty square, or by jumps. A jump goes over one adjacent
stone (in any of the eight directions, of either colour) onto the
empty square right behind it; nothing is captured. Jumps may be
chained, and the chain may stop after any jump, but not on the square
it started from. A stone may not go back and forth between the same
two squares a third time in a row (unless there is no other move).

WINNING. You win by ending your move with your four stones in a
QUADRUPEL:

  Square     Straight    Diagonal    Diamond
  X X        X X X X     X . . .     . X .
  X X                    . X . .     X . X
                         . . X .     . X .
                         . . . X

A Straight may also stand upright; the middle of a Diamond may hold
any stone or none.

VARIANTS (option variant, or a variant name below):
added        Shapes are worth Square 1, Straight 2, Diamond 3,
             Diagonal 4. After the first QUADRUPEL its builder is
             frozen and the other player gets 4 - value extra turns,
             each costing 1 point, to match or beat it.
points       Stones carry 1 to 4 dots, set up secretly on each
             player's first move. A QUADRUPEL scores the dots times
             the zone values below (10 to 30). goal=minimum: it wins
             with at least the threshold (default 20) and loses below
             it; goal=maximum: a match of games decided by points.
position     Two stones of each side are marked 1. zone2=placement: a
             QUADRUPEL wins only with both 1-stones on zone 2 (value
             2); zone2=ban: only with neither.
combination  Value = shape value times points; extra turns as in
             added, each taking 1 off the shape value.

Zones (the value of each square):
     a b c d e f
  6  1 1 1 1 1 1
  5  1 2 2 2 2 1
  4  1 2 3 3 2 1
  3  1 2 3 3 2 1
  2  1 2 2 2 2 1
  1  1 1 1 1 1 1

pbm additions: a draw on the third occurrence of a position with the
same side to move, a draw after plycap board moves (default 400), and
draws by agreement."""
    notation: ClassVar[str] = """\
Step or jump: from-to, e.g. c3-c2 or d5-b3; a chain may be written in
full, d5-b5-b3, and each hop is checked. Separators are optional
(d5b3, d5:b3).
Point, position and combination games: each player's first move gives
dots to his four start squares: setup c4=1 d4=2 d5=3 c3=4 (Black;
White: c5 b4 e4 d3); in the position game only the two 1-stones:
setup c4=1 d4=1. Setups stay secret until both are in. Board: X3 =
Black stone with 3 dots, O? = face-down White stone, X- = value not
shown yet."""
    example_options: ClassVar[tuple[dict[str, Any], ...]] = (
        {},
        {"variant": "added"},
        {"variant": "points"},
        {"variant": "points", "goal": "maximum"},
        {"variant": "position"},
        {"variant": "position", "zone2": "ban"},
        {"variant": "combination"},
    )

    # -- options ------------------------------------------------------------------
    def rules_from(self, options: dict[str, Any]) -> Rules:
        """Resolve options; an option that does not apply to the chosen variant must
        keep its default (a challenge naming it is probably a mistake)."""
        given = {k.strip().lower().replace("-", "_") for k in options}
        resolved = self.resolve_options(options)
        variant, goal = resolved["variant"], resolved["goal"]
        applies = {
            "goal": variant == "points",
            "threshold": variant == "points" and goal == "minimum",
            "zone2": variant == "position",
        }
        defaults = Rules()
        for name, ok in applies.items():
            if not ok and name in given and resolved[name] != getattr(defaults, name):
                raise OptionError(
                    f"option {name} does not apply to variant={variant}"
                    + (f" goal={goal}" if variant == "points" else "")
                )
        return Rules(**resolved)

    def state_options(self, state: QuadrupelState) -> dict[str, Any]:
        return state.rules.as_options()

    def move_visible(
        self, now: QuadrupelState, move: QuadrupelMove, mover: int, viewer: int | None
    ) -> bool:
        # Setups stay secret from everyone but their author until both are in (task: the
        # two setups stay hidden until both are in).
        return not (isinstance(move, tuple) and now.pending and viewer != mover)

    # -- states -------------------------------------------------------------------
    def new_state(self, **options: Any) -> QuadrupelState:
        rules = self.rules_from(options)
        cells = [0] * SQUARES
        for seat in (BLACK, WHITE):
            for square in START[seat]:
                cells[square] = _code(seat, 0)
        return self._make(
            rules,
            tuple(cells),
            turn=BLACK,
            ply=0,
            pending=3 if rules.variant in DOTTED else 0,
            extra=None,
            result=None,
        )

    def _make(
        self,
        rules: Rules,
        cells: tuple[int, ...],
        *,
        turn: int,
        ply: int,
        pending: int,
        extra: ExtraTurns | None,
        result: Outcome | None,
        line: tuple[int, ...] = (),
        history: tuple[int, ...] | None = None,
        banned: tuple[int, int] = (-1, -1),
        last: tuple[int, int] = (-1, -1),
    ) -> QuadrupelState:
        stones, masks = _derived(cells)
        if history is None:
            history = (_position_key(cells, turn),)
        return QuadrupelState(
            rules, cells, turn, ply, pending, extra, banned, last, history, line, result,
            stones, masks,
        )  # fmt: skip

    # -- whose turn ------------------------------------------------------------------
    def to_move(self, state: QuadrupelState) -> int | None:
        return None if state.result is not None else state.turn

    def outcome(self, state: QuadrupelState) -> Outcome | None:
        return state.result

    # -- move generation ------------------------------------------------------------
    def legal_moves(self, state: QuadrupelState) -> list[QuadrupelMove]:
        if state.result is not None:
            return []
        if state.pending:
            return list(_SETUPS[state.rules.variant])
        cells = state.cells
        moves: list[QuadrupelMove] = []
        append = moves.append
        for origin in state.stones[state.turn]:
            base = origin * SQUARES
            for step in STEPS[origin]:
                if not cells[step]:
                    append(base + step)
            # Jump chains (docs/games/quadrupel.md, 'The basic game'). The origin still
            # holds the stone in `cells`, so no chain ends on it; it can never be jumped
            # either, since every square a chain reaches is an even number of files and
            # ranks away from it.
            reached = 1 << origin
            frontier = [origin]
            for square in frontier:  # the list grows while it is walked
                for over, land, bit in JUMP_BITS[square]:
                    if cells[over] and not cells[land] and not reached & bit:
                        reached |= bit
                        frontier.append(land)
                        append(base + land)
        banned = state.banned[state.turn]
        if banned >= 0 and len(moves) > 1 and banned in moves:
            # Lifted when it is the only move (docs/games/quadrupel.md, 'The basic game').
            moves.remove(banned)
        return moves

    def shape_moves(self, state: QuadrupelState, seat: int) -> list[ShapeMove]:
        """The board moves of `seat` that would complete a QUADRUPEL, as if it were to
        move now: none before both setups are in or while `seat` is frozen."""
        frozen = state.extra is not None and state.extra.builder == seat
        if state.result is not None or state.pending or frozen:
            return []
        as_mover = state if state.turn == seat else replace(state, turn=seat)
        counted = state.rules.variant in ("points", "combination")
        found = []
        for move in self.legal_moves(as_mover):
            assert isinstance(move, int)  # no setup is pending
            frm, to = divmod(move, SQUARES)
            shape = SHAPES.get(state.masks[seat] ^ (1 << frm) ^ (1 << to))
            if shape is None:
                continue
            cells = list(state.cells)
            cells[to], cells[frm] = cells[frm], 0
            own = tuple(to if s == frm else s for s in state.stones[seat])
            points = _points(tuple(cells), own) if counted else None
            text = self.format_move(as_mover, move)
            found.append(ShapeMove(text, SHAPE_NAMES[shape], points))
        return found

    # -- applying moves ---------------------------------------------------------------
    def apply(self, state: QuadrupelState, move: QuadrupelMove) -> QuadrupelState:
        if isinstance(move, tuple):
            return self._apply_setup(state, move)
        frm, to = divmod(move, SQUARES)
        mover = state.turn
        cells_list = list(state.cells)
        code = cells_list[frm]
        cells_list[frm] = 0
        cells_list[to] = code
        cells = tuple(cells_list)
        own = tuple(to if s == frm else s for s in state.stones[mover])
        mask = state.masks[mover] ^ (1 << frm) ^ (1 << to)
        if mover == BLACK:
            stones = (own, state.stones[WHITE])
            masks = (mask, state.masks[WHITE])
        else:
            stones = (state.stones[BLACK], own)
            masks = (state.masks[BLACK], mask)
        ban, last = _after_move(state.banned[mover], state.last[mover], move)
        banned = (ban, state.banned[1]) if mover == BLACK else (state.banned[0], ban)
        lasts = (last, state.last[1]) if mover == BLACK else (state.last[0], last)
        extra = state.extra
        turn = mover if extra is not None else 1 - mover
        key = state.history[-1] + (code << (4 * to)) - (code << (4 * frm))
        if turn != mover:
            key += TURN_BIT if turn else -TURN_BIT
        history = (*state.history, key)
        ply = state.ply + 1
        shape = SHAPES.get(mask)
        rules = state.rules
        result: Outcome | None = None
        if extra is not None:
            extra, result = _extra_turn(rules, extra, cells, own, shape)
        elif shape is not None:
            extra, result = _first_quadrupel(rules, mover, cells, own, shape)
        elif history.count(key) >= 3:
            result = _draw(rules, "the same position occurred for the third time (pbm rule)")
        elif ply >= rules.plycap:
            result = _draw(rules, f"the ply cap of {rules.plycap} board moves was reached")
        if result is None and not _can_move(cells, stones[turn]):
            # A player who cannot move loses (pbm's decision: docs/games/quadrupel.md,
            # 'The basic game').
            result = _blocked(rules, turn, extra)
        return QuadrupelState(
            rules, cells, turn, ply, 0, extra, banned, lasts, history,
            (*state.line, move), result, stones, masks,
        )  # fmt: skip

    def _apply_setup(self, state: QuadrupelState, move: Setup) -> QuadrupelState:
        seat = state.turn
        cells = list(state.cells)
        for square, dots in zip(START[seat], move, strict=True):
            cells[square] = _code(seat, dots)
        pending = state.pending & ~(1 << seat)
        turn = 1 - seat if pending & (1 << (1 - seat)) else BLACK
        return self._make(
            state.rules,
            tuple(cells),
            turn=turn,
            ply=state.ply,
            pending=pending,
            extra=None,
            result=None,
        )

    # -- notation -----------------------------------------------------------------------
    def answer_example(self, state: QuadrupelState) -> str:
        if state.pending:
            # A setup names the mover's own squares and the dots his variant gives.
            return self.format_move(state, self.legal_moves(state)[0])
        return self.legal_example(state, ("c3-c2", "d3-e3"), "c3-c2")

    def format_move(self, state: QuadrupelState, move: QuadrupelMove) -> str:
        if isinstance(move, tuple):
            seat = state.turn
            pairs = [
                f"{_name(square)}={dots}"
                for square, dots in zip(START[seat], move, strict=True)
                if dots or state.rules.variant != "position"
            ]
            return "setup " + " ".join(pairs)
        frm, to = divmod(move, SQUARES)
        return f"{_name(frm)}-{_name(to)}"

    def parse_move(self, state: QuadrupelState, text: str) -> QuadrupelMove:
        low = text.strip().lower()
        if low.startswith("setup"):
            return self._parse_setup(state, text, low[len("setup") :])
        flat = squash(low)
        if flat == "pass":
            raise IllegalMoveError(text, "passing is not allowed; you must move a stone")
        if not flat or not _BOARD_TEXT.fullmatch(flat):
            raise InvalidMoveError(
                text, "write a move as from-to, e.g. c3-c2 or d5-b3 (or a path, d5-b5-b3)"
            )
        path = []
        for name in _SQUARE_TEXT.findall(flat):
            square = _SQUARE_INDEX.get(name)
            if square is None:
                raise InvalidMoveError(text, f"{name} is not a square of the board (a1 to f6)")
            path.append(square)
        if len(path) < 2:
            raise InvalidMoveError(text, "name the square the stone leaves and where it goes")
        if state.result is not None:
            raise IllegalMoveError(text, "the game is over")
        seat = state.turn
        if state.pending:
            example = SETUP_EXAMPLE if state.rules.variant != "position" else POSITION_SETUP_EXAMPLE
            raise IllegalMoveError(
                text, f"{SEAT_NAMES[seat]} must first set up his stones, e.g. {example}"
            )
        frm, to = path[0], path[-1]
        code = state.cells[frm]
        if not code or _owner(code) != seat:
            raise IllegalMoveError(text, f"there is no {SEAT_NAMES[seat]} stone on {_name(frm)}")
        if frm == to:
            raise IllegalMoveError(text, "a move may not end where it started")
        if len(path) > 2:
            self._check_path(state, text, path)
        move = frm * SQUARES + to
        legal = self.legal_moves(state)
        if move in legal:
            return move
        raise IllegalMoveError(text, self._why_illegal(state, frm, to, move))

    def _check_path(self, state: QuadrupelState, text: str, path: list[int]) -> None:
        """A written chain: every hop must be a jump over one stone to an empty square."""
        origin = path[0]
        for a, b in pairwise(path):
            hop = f"{_name(a)}-{_name(b)}"
            over = JUMP_OVER.get((a, b))
            if over is None:
                raise IllegalMoveError(text, f"{hop} is not a jump (over one adjacent square)")
            if over == origin or not state.cells[over]:
                raise IllegalMoveError(text, f"{hop} jumps over the empty square {_name(over)}")
            if state.cells[b] and b != origin:
                raise IllegalMoveError(text, f"{hop} lands on the occupied square {_name(b)}")

    def _why_illegal(self, state: QuadrupelState, frm: int, to: int, move: int) -> str:
        if move == state.banned[state.turn]:
            return (
                f"the stone went {_name(frm)}-{_name(to)} and back in your last two turns;"
                " a third time is not allowed"
            )
        if state.cells[to]:
            return f"{_name(to)} is occupied"
        df = abs(frm % SIZE - to % SIZE)
        dr = abs(frm // SIZE - to // SIZE)
        if df == 1 and dr == 1:
            return "steps go orthogonally, never diagonally"
        return f"the stone on {_name(frm)} cannot reach {_name(to)} by a step or by jumps"

    def _parse_setup(self, state: QuadrupelState, text: str, rest: str) -> Setup:
        variant = state.rules.variant
        pairs = _SETUP_PAIR.findall(rest)
        leftover = _SETUP_PAIR.sub("", rest).replace(",", " ").strip()
        example = POSITION_SETUP_EXAMPLE if variant == "position" else SETUP_EXAMPLE
        if leftover or not pairs:
            raise InvalidMoveError(text, f"write a setup as {example}")
        if variant not in DOTTED:
            raise IllegalMoveError(text, f"{VARIANT_TITLES[variant]} has no setup (no dots)")
        seat = state.turn
        if state.result is not None or not state.pending & (1 << seat):
            raise IllegalMoveError(text, "the stones are already set up")
        values: dict[int, int] = {}
        for name, value in pairs:
            square = _SQUARE_INDEX.get(name)
            if square not in START[seat]:
                own = " ".join(_name(s) for s in START[seat])
                raise IllegalMoveError(
                    text, f"{name} is not a start square of {SEAT_NAMES[seat]} ({own})"
                )
            if square in values:
                raise IllegalMoveError(text, f"{name} is given twice")
            values[square] = 0 if value == "?" else int(value)
        if variant == "position":
            move = tuple(values.get(s, 0) for s in START[seat])
            if sorted(move) != [0, 0, 1, 1]:
                raise IllegalMoveError(text, "mark exactly two stones as 1 (the others blank)")
        else:
            move = tuple(values.get(s, 0) for s in START[seat])
            if sorted(move) != [1, 2, 3, 4]:
                raise IllegalMoveError(text, "give the four stones the dots 1, 2, 3 and 4")
        return move

    # -- the echo ---------------------------------------------------------------------------
    def describe_move(self, state: QuadrupelState, move: QuadrupelMove) -> str:
        after = self.apply(state, move)
        if isinstance(move, tuple):
            if after.pending:
                return "setup (kept secret until both players have set up)"
            shown = "; ".join(
                f"{SEAT_NAMES[seat]} " + _setup_text(after, seat) for seat in (BLACK, WHITE)
            )
            return f"setup done; {shown}"
        path = _jump_path(state.cells, *divmod(move, SQUARES))
        text = "-".join(_name(s) for s in path) if path else self.format_move(state, move)
        mover = state.turn
        shape = SHAPES.get(after.masks[mover])
        if shape is None:
            return text
        text += f" QUADRUPEL: {SHAPE_NAMES[shape]}"
        variant = state.rules.variant
        if variant in ("points", "combination"):
            text += f", {_points(after.cells, after.stones[mover])} points"
        if after.extra is not None and state.extra is None:
            ex = after.extra
            text += (
                f"; {SEAT_NAMES[mover]} is frozen, {SEAT_NAMES[1 - mover]} has"
                f" {_plural(ex.limit, 'extra turn')}"
            )
        return text

    # -- the board ---------------------------------------------------------------------------
    def render(
        self, state: QuadrupelState, seat: int | None = None, *, headline: bool = True
    ) -> str:
        rules = state.rules
        dotted = rules.variant in DOTTED
        cells = []
        for code in state.cells:
            if not code:
                cells.append(". " if dotted else ".")
                continue
            owner = _owner(code)
            symbol = SYMBOLS[owner]
            if not dotted:
                cells.append(symbol)
            elif state.pending & (1 << owner) or (state.pending and seat != owner):
                cells.append(symbol + "-")  # not set up yet, or secret until both are in
            elif rules.variant == "position":
                cells.append(symbol + ("1" if _dots(code) else "?"))
            else:
                cells.append(symbol + str(_dots(code)))
        notes: list[str] = []
        if dotted:
            notes = [" ".join(str(ZONES[r * SIZE + f]) for f in range(SIZE))
                     for r in range(SIZE - 1, -1, -1)]  # fmt: skip
        lines = render_grid(cells, SIZE, SIZE, cell_width=2 if dotted else 1, side_notes=notes)
        if dotted:
            # Head the zone map beside the board (docs/games/quadrupel.md, 'The board').
            column = len(lines[1]) - len(notes[0])
            lines[0] = lines[0].ljust(column) + "zones"
        lines.append(f"{_variant_label(rules)}; X = Black, O = White")
        if headline:
            lines += self.headline(state)
        return "\n".join(lines) + "\n"

    def headline(self, state: QuadrupelState) -> list[str]:
        return _status_lines(state)

    # -- position text ------------------------------------------------------------------------
    def dump(self, state: QuadrupelState) -> str:
        rules = state.rules
        parts = [f"variant={rules.variant}"]
        if rules.variant == "points":
            parts.append(f"goal={rules.goal}")
            if rules.goal == "minimum":
                parts.append(f"threshold={rules.threshold}")
        if rules.variant == "position":
            parts.append(f"zone2={rules.zone2}")
        parts.append(f"plycap={rules.plycap}")
        for seat in (BLACK, WHITE):
            stones = ",".join(
                _name(s) + (f":{_dots(state.cells[s])}" if _dots(state.cells[s]) else "")
                for s in sorted(state.stones[seat])
            )
            parts.append(f"{SEAT_NAMES[seat].lower()}={stones}")
        parts.append(f"turn={SEAT_NAMES[state.turn].lower()}")
        parts.append(f"ply={state.ply}")
        if state.pending:
            waiting = [SEAT_NAMES[s].lower() for s in (BLACK, WHITE) if state.pending & (1 << s)]
            parts.append("setup=" + ",".join(waiting))
        if state.extra is not None:
            ex = state.extra
            parts.append(
                f"extra={SEAT_NAMES[ex.builder].lower()},{SHAPE_NAMES[ex.shape].lower()},"
                f"{ex.points},{ex.value},{ex.used},{ex.limit}"
            )
        if state.line:
            parts.append("line=" + "".join(f"{_name(m // SQUARES)}{_name(m % SQUARES)}"
                                           for m in state.line))  # fmt: skip
        if state.result is not None:
            res = state.result
            winner = "draw" if res.winner is None else SEAT_NAMES[res.winner].lower()
            scores = "-" if res.scores is None else ",".join(str(s) for s in res.scores)
            parts.append(f"result={winner}/{scores}/{res.reason.replace(' ', '_')}")
        return " ".join(parts)

    def load(self, text: str) -> QuadrupelState:
        return _PositionReader(self, text).read()


def _setup_text(state: QuadrupelState, seat: int) -> str:
    pairs = []
    for square in START[seat]:
        # The stone is still on its start square when setups are revealed.
        dots = _dots(state.cells[square])
        if state.rules.variant == "position":
            if dots:
                pairs.append(f"{_name(square)}=1")
        else:
            pairs.append(f"{_name(square)}={dots}")
    return " ".join(pairs)


def _variant_label(rules: Rules) -> str:
    label = VARIANT_TITLES[rules.variant]
    if rules.variant == "points":
        label += f", {rules.goal} points"
        if rules.goal == "minimum":
            label += f" ({rules.threshold})"
    elif rules.variant == "position":
        label += ", zone 2 " + ("placement" if rules.zone2 == "placement" else "placement ban")
    return label


def _status_lines(state: QuadrupelState) -> list[str]:
    if state.result is not None:
        res = state.result
        who = "draw" if res.winner is None else f"{SEAT_NAMES[res.winner]} wins"
        return textwrap.wrap(f"Game over, {who}: {res.reason}.", 70)
    seat_name = f"{SEAT_NAMES[state.turn]} ({SYMBOLS[state.turn]})"
    if state.pending:
        waiting = " and ".join(SEAT_NAMES[s] for s in (BLACK, WHITE) if state.pending & (1 << s))
        return [
            f"{seat_name} to set up his stones (awaited: {waiting}).",
            "Setups stay secret until both are in.",
        ]
    lines = []
    if state.extra is not None:
        ex = state.extra
        built = f"{SHAPE_NAMES[ex.shape]} ({_value_text(state.rules, ex)})"
        left = ex.limit - ex.used
        cost = "each costs 1 point"
        if state.rules.variant == "combination":
            cost = "each takes 1 off the shape value"
        lines += textwrap.wrap(
            f"{SEAT_NAMES[ex.builder]} completed a {built} and is frozen; {SEAT_NAMES[state.turn]}"
            f" has {_plural(left, 'extra turn')} left ({cost}).",
            70,
        )
    lines.append(
        f"{seat_name} to move (board move {state.ply + 1} of at most {state.rules.plycap})."
    )
    return lines


def _value_text(rules: Rules, extra: ExtraTurns) -> str:
    if rules.variant == "combination":
        return f"{extra.shape} x {extra.points} = {extra.value}"
    return str(extra.value)


def _scores(rules: Rules, values: tuple[int, int]) -> tuple[int, int] | None:
    return values if rules.variant in ("added", "points", "combination") else None


def _draw(rules: Rules, reason: str) -> Outcome:
    return Outcome(None, reason, _scores(rules, (0, 0)))


def _by_seat(seat: int, mine: int, theirs: int) -> tuple[int, int]:
    return (mine, theirs) if seat == BLACK else (theirs, mine)


def _blocked(rules: Rules, seat: int, extra: ExtraTurns | None) -> Outcome:
    other = 1 - seat
    reason = f"{SEAT_NAMES[seat]} has no legal move"
    if extra is not None:
        return Outcome(other, reason, _scores(rules, _by_seat(other, extra.value, 0)))
    return Outcome(other, reason, _scores(rules, (0, 0)))


def _first_quadrupel(
    rules: Rules, mover: int, cells: tuple[int, ...], own: tuple[int, ...], shape: int
) -> tuple[ExtraTurns | None, Outcome | None]:
    """The mover has just completed the game's first QUADRUPEL."""
    who, name = SEAT_NAMES[mover], SHAPE_NAMES[shape]
    variant = rules.variant
    if variant == "basic":
        return None, Outcome(mover, f"{who} completed a QUADRUPEL ({name})")
    if variant == "position":
        marked = [s for s in own if _dots(cells[s])]
        in_zone2 = sum(ZONES[s] == 2 for s in marked)
        if rules.zone2 == "placement":
            good = in_zone2 == 2
            where = "both 1-stones in zone 2" if good else "its 1-stones not both in zone 2"
        else:
            good = in_zone2 == 0
            where = "no 1-stone in zone 2" if good else "a 1-stone in zone 2"
        built = f"{who} completed a {name} with {where}"
        return None, Outcome(mover if good else 1 - mover, built)
    points = _points(cells, own)
    if variant == "points":
        scores = _by_seat(mover, points, 0)
        built = f"{who} completed a {name} worth {points} points"
        if rules.goal == "maximum":
            return None, Outcome(mover, built, scores)
        if points >= rules.threshold:
            return None, Outcome(mover, f"{built}, at least {rules.threshold}", scores)
        return None, Outcome(1 - mover, f"{built}, below {rules.threshold}", scores)
    if variant == "added":
        value = shape
        limit = 4 - value  # rule sheet's table: Diagonal 0, Diamond 1, Straight 2, Square 3
    else:
        value = shape * points
        # pbm's decision (docs/games/quadrupel.md, 'Combination game'): turn k can reach
        # at most (4 - k) x 30; at most three turns.
        limit = min(MAX_EXTRA_TURNS, (4 * 30 - value) // 30)
    if limit <= 0:
        reason = f"{who} completed a {name} worth {value}, which cannot be beaten"
        return None, Outcome(mover, reason, _by_seat(mover, value, 0))
    return ExtraTurns(mover, shape, points, value, 0, limit), None


def _extra_turn(
    rules: Rules,
    extra: ExtraTurns,
    cells: tuple[int, ...],
    own: tuple[int, ...],
    shape: int | None,
) -> tuple[ExtraTurns | None, Outcome | None]:
    """The frozen builder's opponent has played extra turn `extra.used + 1`."""
    used = extra.used + 1
    builder, chaser = extra.builder, 1 - extra.builder
    first = f"{SEAT_NAMES[builder]}'s {SHAPE_NAMES[extra.shape]} ({_value_text(rules, extra)})"
    turns = _plural(used, "extra turn")
    if shape is not None:
        # Rule sheet, parts 2 and 5: each extra turn costs 1 point (of the shape value: pbm's
        # decision, 'Combination game'); "otherwise the QUADRUPEL value will decrease to
        # zero", never below.
        factor = max(shape - used, 0)
        if rules.variant == "added":
            value = factor
            worth = f"{shape} - {used} = {value}" if shape > used else "0 (used up)"
        else:
            points = _points(cells, own)
            value = factor * points
            worth = f"({shape} - {used}) x {points} = {value}" if shape > used else "0 (used up)"
        built = f"{SEAT_NAMES[chaser]}'s {SHAPE_NAMES[shape]} in {turns} scores {worth}"
        scores = _by_seat(chaser, value, extra.value)
        if value > extra.value:
            return None, Outcome(chaser, f"{built}, beating {first}", scores)
        if value == extra.value:
            return None, Outcome(None, f"{built}, equal to {first}", scores)
        return None, Outcome(builder, f"{built}, less than {first}", scores)
    if used >= extra.limit:
        reason = f"{SEAT_NAMES[chaser]} completed no QUADRUPEL in {turns}; {first} stands"
        return None, Outcome(builder, reason, _by_seat(builder, extra.value, 0))
    return ExtraTurns(builder, extra.shape, extra.points, extra.value, used, extra.limit), None


def _setup_moves(variant: str) -> tuple[Setup, ...]:
    if variant == "position":
        return tuple(sorted(set(permutations((0, 0, 1, 1)))))
    if variant in DOTTED:
        return tuple(permutations((1, 2, 3, 4)))
    return ()


_SETUPS = {variant: _setup_moves(variant) for variant in VARIANTS}
# JUMPS with the landing square's bit, for the move generator's inner loop.
JUMP_BITS = tuple(tuple((over, land, 1 << land) for over, land in jumps) for jumps in JUMPS)
_SQUARE_INDEX = {_name(s): s for s in range(SQUARES)}
_SHAPE_BY_NAME = {name.lower(): kind for kind, name in SHAPE_NAMES.items()}
_SEAT_BY_NAME = {name.lower(): seat for seat, name in enumerate(SEAT_NAMES)}


class _PositionReader:
    """Reads the position text written by `Quadrupel.dump` (format in docs/games)."""

    def __init__(self, game: Quadrupel, text: str) -> None:
        self.game = game
        self.text = text

    def fail(self, why: str) -> PositionError:
        return PositionError(f"bad Quadrupel position ({why}): '{self.text}'")

    def read(self) -> QuadrupelState:
        fields: dict[str, str] = {}
        for token in self.text.split():
            name, sep, value = token.partition("=")
            if not sep or name in fields:
                raise self.fail(f"'{token}' is not a name=value field, or is repeated")
            fields[name] = value
        option_names = ("variant", "goal", "threshold", "zone2", "plycap")
        try:
            rules = self.game.rules_from({k: fields.pop(k) for k in option_names if k in fields})
        except OptionError as exc:
            raise self.fail(str(exc)) from None
        cells = [0] * SQUARES
        for seat in (BLACK, WHITE):
            self.read_stones(fields.pop(SEAT_NAMES[seat].lower(), ""), seat, cells)
        turn = self.seat(fields.pop("turn", ""))
        ply = self.number(fields.pop("ply", "0"))
        pending = 0
        for name in filter(None, fields.pop("setup", "").split(",")):
            pending |= 1 << self.seat(name)
        extra = self.read_extra(fields.pop("extra", None))
        line = self.read_line(fields.pop("line", ""))
        result = self.read_result(fields.pop("result", None))
        if fields:
            raise self.fail("unknown fields " + ", ".join(sorted(fields)))
        self.check(rules, cells, turn, pending, extra, line, ply)
        return self.rebuild(rules, tuple(cells), turn, ply, pending, extra, line, result)

    def seat(self, name: str) -> int:
        if name not in _SEAT_BY_NAME:
            raise self.fail(f"'{name}' is not black or white")
        return _SEAT_BY_NAME[name]

    def number(self, text: str) -> int:
        if not text.isdigit():
            raise self.fail(f"'{text}' is not a number")
        return int(text)

    def square(self, name: str) -> int:
        if name not in _SQUARE_INDEX:
            raise self.fail(f"'{name}' is not a square")
        return _SQUARE_INDEX[name]

    def read_stones(self, text: str, seat: int, cells: list[int]) -> None:
        items = [item for item in text.split(",") if item]
        if len(items) != 4:
            raise self.fail(f"{SEAT_NAMES[seat]} needs four stones")
        for item in items:
            name, _, dots = item.partition(":")
            square = self.square(name)
            value = self.number(dots) if dots else 0
            if cells[square] or value > 4:
                raise self.fail(f"'{item}' is on an occupied square or has too many dots")
            cells[square] = _code(seat, value)

    def read_extra(self, text: str | None) -> ExtraTurns | None:
        if text is None:
            return None
        parts = text.split(",")
        if len(parts) != 6 or parts[1] not in _SHAPE_BY_NAME:
            raise self.fail(f"'{text}' is not builder,shape,points,value,used,limit")
        points, value, used, limit = (self.number(p) for p in parts[2:])
        if not used < limit <= MAX_EXTRA_TURNS:
            raise self.fail(f"extra turns {used} of {limit}")
        return ExtraTurns(self.seat(parts[0]), _SHAPE_BY_NAME[parts[1]], points, value, used, limit)

    def read_line(self, text: str) -> tuple[int, ...]:
        names = _SQUARE_TEXT.findall(text)
        if "".join(names) != text or len(names) % 2:
            raise self.fail(f"line '{text}' is not a list of from-to pairs")
        squares = [self.square(n) for n in names]
        return tuple(squares[i] * SQUARES + squares[i + 1] for i in range(0, len(squares), 2))

    def read_result(self, text: str | None) -> Outcome | None:
        if text is None:
            return None
        parts = text.split("/", 2)
        if len(parts) != 3 or not parts[2]:
            raise self.fail(f"result '{text}' is not winner/scores/reason")
        winner = None if parts[0] == "draw" else self.seat(parts[0])
        scores = None
        if parts[1] != "-":
            scores = tuple(self.number(s) for s in parts[1].split(","))
            if len(scores) != 2:
                raise self.fail(f"result scores '{parts[1]}'")
        return Outcome(winner, parts[2].replace("_", " "), scores)

    def check(
        self,
        rules: Rules,
        cells: list[int],
        turn: int,
        pending: int,
        extra: ExtraTurns | None,
        line: tuple[int, ...],
        ply: int,
    ) -> None:
        variant = rules.variant
        for seat in (BLACK, WHITE):
            dots = sorted(_dots(c) for c in cells if c and _owner(c) == seat)
            if pending & (1 << seat) or variant not in DOTTED:
                expected = [0, 0, 0, 0]
            else:
                expected = [0, 0, 1, 1] if variant == "position" else [1, 2, 3, 4]
            if dots != expected:
                raise self.fail(f"{SEAT_NAMES[seat]}'s dots {dots} do not fit {variant}")
            on_start = all(cells[s] and _owner(cells[s]) == seat for s in START[seat])
            if pending & (1 << seat) and not on_start:
                raise self.fail(f"{SEAT_NAMES[seat]} has not set up but his stones moved")
        if pending and (line or extra is not None or ply):
            raise self.fail("moves were played before the setups were in")
        if pending and not pending & (1 << turn):
            raise self.fail("the seat to move has already set up")
        if extra is not None and (variant not in ("added", "combination") or extra.builder == turn):
            raise self.fail("extra turns do not fit this variant or side to move")
        if len(line) > ply:
            raise self.fail("the line is longer than the ply count")

    def rebuild(
        self,
        rules: Rules,
        cells: tuple[int, ...],
        turn: int,
        ply: int,
        pending: int,
        extra: ExtraTurns | None,
        line: tuple[int, ...],
        result: Outcome | None,
    ) -> QuadrupelState:
        """Recover the history and the back-and-forth memory by taking back `line`."""
        board = list(cells)
        keys = [_position_key(cells, turn)]
        movers: list[int] = []
        for move in reversed(line):
            frm, to = divmod(move, SQUARES)
            code = board[to]
            if not code or board[frm]:
                raise self.fail(f"line move {_name(frm)}{_name(to)} does not fit the board")
            board[to], board[frm] = 0, code
            movers.append(_owner(code))
            keys.append(_position_key(tuple(board), _owner(code)))
        movers.reverse()
        keys.reverse()
        banned, last = [-1, -1], [-1, -1]
        for seat, move in zip(movers, line, strict=True):
            banned[seat], last[seat] = _after_move(banned[seat], last[seat], move)
        return self.game._make(
            rules,
            cells,
            turn=turn,
            ply=ply,
            pending=pending,
            extra=extra,
            result=result,
            line=line,
            history=tuple(keys),
            banned=(banned[0], banned[1]),
            last=(last[0], last[1]),
        )


GAME = Quadrupel()
