"""Quarod's picture: the board of the game's size (5x5 to 12x12), every piece with its
rod (docs/games/quarod.md; nothing is hidden).

A rod is drawn from the piece's centre to the edge of its square, so the rods of an
engaged pair meet across their common edge as one thick bar; the rod of a piece that
is not engaged is drawn thin and stops short of the edge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pbm.games import AnyGame
from pbm.games.grid import square_name
from pbm.games.quarod import (
    BLACK,
    COLOUR_NAMES,
    WHITE,
    QuarodState,
    colour_of,
    geometry,
    rod_of,
    score,
)
from pbm.pictures.board import BAND, Grid, Mark, Piece, View, game_status, inset, paint_board
from pbm.pictures.canvas import (
    DARK_EDGE,
    DARK_MAN,
    LIGHT_EDGE,
    LIGHT_MAN,
    ROD,
    WOOD,
    Canvas,
)
from pbm.pictures.words import PictureWords, say

BOARD = 432  # the board's side in pixels at most; a square is 36 to 60 pixels
# Where a rod points, as (file, rank) steps, in the order of quarod_board's rods N E S W.
ROD_STEPS = ((0, 1), (1, 0), (0, -1), (-1, 0))


def cell_size(size: int) -> int:
    return min(60, BOARD // size)


def _groups_text(words: PictureWords, groups: Mapping[int, int]) -> str:
    sizes = sorted(groups, reverse=True)
    listed = [say(words.quarod_group_size, count=groups[s], size=s) for s in sizes]
    return ", ".join(listed) or say(words.none)


class QuarodView(View):
    def __init__(
        self, game: AnyGame, state: QuarodState, names: Sequence[str], words: PictureWords
    ) -> None:
        size = state.size
        groups = tuple(
            say(words.quarod_group, side=COLOUR_NAMES[c], symbol="XO"[c]) for c in (0, 1)
        )
        # The rods' directions in the order of quarod_board's rods N E S W.
        rods = (words.quarod_north, words.quarod_east, words.quarod_south, words.quarod_west)
        pieces: dict[str, Piece] = {}
        for square, cell in enumerate(state.cells):
            if cell:
                engaged = state.engaged >> square & 1
                rod = words.quarod_engaged if engaged else words.quarod_not_engaged
                detail = say(rod, direction=say(rods[rod_of(cell)]))
                pieces[square_name(square, size)] = Piece(groups[colour_of(cell)], detail)
        super().__init__(pieces, groups, names, words)
        self.game = game
        self.state = state
        self.group_sizes = geometry(size).group_sizes(state.cells)
        blacks, whites = self.group_sizes
        self.scores = (score(blacks, whites), score(whites, blacks))

    @property
    def status(self) -> str:
        state = self.state
        words = self.phrases
        running = words.to_move
        # Quarod rules, 'Pie rule': White's first turn only, i.e. right after Black's first
        # placement.
        if state.turn == WHITE and not state.switched and len(self.pieces) == 2:
            running = words.quarod_pie
        status = say(running, who=self.names[state.turn], white=self.names[WHITE])
        return game_status(self.game, state, self.names, words, status)

    def notes(self) -> list[str]:
        words = self.phrases
        lines = self.footer()
        for colour in (0, 1):
            groups = _groups_text(words, self.group_sizes[colour])
            lines.append(say(words.quarod_groups, side=COLOUR_NAMES[colour], groups=groups))
        return lines

    def footer(self) -> list[str]:
        words = self.phrases
        black, white = self.scores
        lines = [say(words.quarod_score, size=self.state.size, black=black, white=white)]
        if self.state.switched:
            lines.append(say(words.quarod_switched))
        return lines

    @property
    def size(self) -> tuple[int, int]:
        board = self.state.size * cell_size(self.state.size) + 2 * BAND
        return board, board

    def paint(self, canvas: Canvas, x: float, y: float, marks: Mapping[str, Mark]) -> None:
        size = self.state.size
        cell = cell_size(size)
        grid = Grid(x + BAND, y + BAND, size, size, cell)
        paint_board(canvas, grid, lambda file, rank: WOOD, marks, self.pieces)
        for square, piece_cell in enumerate(self.state.cells):
            if not piece_cell:
                continue
            file, rank = square % size, square // size
            cx, cy = grid.centre(file, rank)
            box = inset(grid.box(file, rank), cell * 0.2)
            dark = colour_of(piece_cell) == BLACK
            dx, dy = ROD_STEPS[rod_of(piece_cell)]
            if self.state.engaged >> square & 1:
                end = (cx + dx * cell / 2, cy - dy * cell / 2)
                rod_width = max(3.0, cell * 0.12)
            else:
                end = (cx + dx * cell * 0.4, cy - dy * cell * 0.4)
                rod_width = max(1.5, cell * 0.045)
            canvas.disc_and_line(
                box,
                DARK_MAN if dark else LIGHT_MAN,
                DARK_EDGE if dark else LIGHT_EDGE,
                [(cx, cy), end],
                ROD,
                disc_width=1 if dark else 1.5,
                line_width=rod_width,
            )


def view(
    game: AnyGame, state: QuarodState, seat: int | None, names: Sequence[str], words: PictureWords
) -> QuarodView:
    return QuarodView(game, state, names, words)
