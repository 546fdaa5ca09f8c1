"""Quadrupel's picture: the 6x6 board shaded by its three zones, the stones with their
dots (docs/games/quadrupel.md).

What a seat may see follows `Quadrupel.render`: a setup stays secret from everyone but
its author until both setups are in (pbm's decision in docs/games/quadrupel.md,
'Setup (point, position, combination games)'), so such a stone is drawn with a question
mark, exactly as a stone whose setup is still awaited.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pbm.games import AnyGame
from pbm.games.grid import square_name
from pbm.games.quadrupel import (
    DOTTED,
    SEAT_NAMES,
    SHAPE_NAMES,
    SHAPES,
    SIZE,
    SYMBOLS,
    VARIANT_TITLES,
    ZONES,
    QuadrupelState,
)
from pbm.pictures.board import (
    BAND,
    Grid,
    Mark,
    Piece,
    View,
    game_status,
    inset,
    outline_squares,
    paint_board,
)
from pbm.pictures.canvas import (
    DARK_EDGE,
    DARK_MAN,
    INK,
    LIGHT_EDGE,
    LIGHT_MAN,
    WOOD,
    WOOD_DARK,
    WOOD_DEEP,
    Canvas,
    Colour,
)
from pbm.pictures.words import PictureWords, joined, say

CELL = 56
ZONE_FILL = {1: WOOD, 2: WOOD_DARK, 3: WOOD_DEEP}
# Where the dots of a stone sit, as fractions of a cell from its centre (as on a die).
PIPS = {
    1: ((0.0, 0.0),),
    2: ((-0.13, -0.13), (0.13, 0.13)),
    3: ((-0.15, -0.15), (0.0, 0.0), (0.15, 0.15)),
    4: ((-0.13, -0.13), (0.13, -0.13), (-0.13, 0.13), (0.13, 0.13)),
}


def _plural(count: int, one: str, many: str) -> str:
    return say(one if count == 1 else many, count=count)


class QuadrupelView(View):
    def __init__(
        self,
        game: AnyGame,
        state: QuadrupelState,
        seat: int | None,
        names: Sequence[str],
        words: PictureWords,
    ) -> None:
        self.game = game
        self.state = state
        rules = state.rules
        dotted = rules.variant in DOTTED
        # The dots each visible stone shows: None for a secret or awaited setup.
        self.dots: dict[str, int | None] = {}
        self.owner: dict[str, int] = {}
        groups = tuple(
            say(words.quadrupel_group, side=SEAT_NAMES[seat], symbol=SYMBOLS[seat])
            for seat in (0, 1)
        )
        pieces: dict[str, Piece] = {}
        for square, code in enumerate(state.cells):
            if not code:
                continue
            # A cell is 1 + seat + 2 * dots (the module docstring of pbm.games.quadrupel).
            owner, dots = (code - 1) & 1, (code - 1) >> 1
            where = square_name(square, SIZE)
            self.owner[where] = owner
            shown: int | None = dots
            if dotted and (state.pending & (1 << owner) or (state.pending and seat != owner)):
                shown = None
            self.dots[where] = shown if dotted else 0
            if not dotted:
                detail = ""
            elif shown is None:
                detail = say(words.quadrupel_hidden)
            elif rules.variant == "position":
                detail = say(words.quadrupel_marked if shown else words.quadrupel_blank)
            else:
                detail = _plural(shown, words.quadrupel_dot, words.quadrupel_dots)
            pieces[where] = Piece(groups[owner], detail)
        super().__init__(pieces, groups, names, words)
        self.winning = {
            square_name(square, SIZE)
            for mask in state.masks
            if mask in SHAPES
            for square in range(SIZE * SIZE)
            if mask >> square & 1
        }

    @property
    def status(self) -> str:
        state = self.state
        words = self.phrases
        who = self.names[state.turn]
        if state.pending:
            running = say(words.quadrupel_to_set_up, who=who)
        else:
            running = say(
                words.quadrupel_to_move, who=who, number=state.ply + 1, most=state.rules.plycap
            )
        return game_status(self.game, state, self.names, words, running)

    def notes(self) -> list[str]:
        return self.footer()

    def footer(self) -> list[str]:
        state = self.state
        rules = state.rules
        words = self.phrases
        # "Variant: point game", never the bare "QUADRUPEL" of the basic game's title,
        # which under the last move reads as a QUADRUPEL just made.
        variant = VARIANT_TITLES[rules.variant].removeprefix("QUADRUPEL - ")
        if rules.variant == "basic":
            variant = say(words.quadrupel_basic)
        label = words.quadrupel_variant
        if rules.variant == "points":
            label = words.quadrupel_minimum if rules.goal == "minimum" else words.quadrupel_points
        elif rules.variant == "position":
            placement = rules.zone2 == "placement"
            label = words.quadrupel_placement if placement else words.quadrupel_ban
        lines = [say(label, variant=variant, goal=rules.goal, threshold=rules.threshold)]
        if rules.variant in DOTTED:
            lines.append(say(words.quadrupel_zones))
        if state.pending:
            waiting = joined(words, [self.names[s] for s in (0, 1) if state.pending & (1 << s)])
            lines.append(say(words.quadrupel_awaited, userids=waiting))
        extra = state.extra
        if extra is not None:
            left = extra.limit - extra.used
            lines.append(
                say(
                    words.quadrupel_extra_turns if left != 1 else words.quadrupel_extra_turn,
                    builder=self.names[extra.builder],
                    shape=SHAPE_NAMES[extra.shape],
                    value=extra.value,
                    other=self.names[1 - extra.builder],
                    count=left,
                )
            )
        return lines

    @property
    def size(self) -> tuple[int, int]:
        board = SIZE * CELL + 2 * BAND
        return board, board

    def paint(self, canvas: Canvas, x: float, y: float, marks: Mapping[str, Mark]) -> None:
        grid = Grid(x + BAND, y + BAND, SIZE, SIZE, CELL)

        def fill(file: int, rank: int) -> Colour:
            return ZONE_FILL[ZONES[rank * SIZE + file]]

        # The zones' numbers, where zones count (the variants with dotted stones).
        zones = tuple(map(str, ZONES)) if self.state.rules.variant in DOTTED else ()
        paint_board(canvas, grid, fill, marks, self.pieces, zones)
        outline_squares(canvas, grid, self.winning)
        for square, owner in self.owner.items():
            file, rank = grid.square(square)
            box = inset(grid.box(file, rank), CELL * 0.14)
            if owner == 0:
                canvas.disc(box, fill=DARK_MAN, outline=DARK_EDGE)
                pip = LIGHT_MAN
            else:
                canvas.disc(box, fill=LIGHT_MAN, outline=LIGHT_EDGE, width=1.5)
                pip = INK
            cx, cy = grid.centre(file, rank)
            dots = self.dots[square]
            if dots is None:
                canvas.text((cx, cy), "?", 20, pip, "mm")
            elif dots:
                radius = CELL * 0.055
                for dx, dy in PIPS[dots]:
                    px, py = cx + dx * CELL, cy + dy * CELL
                    canvas.disc((px - radius, py - radius, px + radius, py + radius), fill=pip)


def view(
    game: AnyGame,
    state: QuadrupelState,
    seat: int | None,
    names: Sequence[str],
    words: PictureWords,
) -> QuadrupelView:
    return QuadrupelView(game, state, seat, names, words)
