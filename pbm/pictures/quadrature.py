"""Quadrature's picture: the 11x11 board with both home plates, each side's reserve and
marker beside it (docs/games/quadrature.md, "Board": nothing is hidden)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pbm.games import AnyGame, quadrature
from pbm.games.quadrature import SIDE_NAMES, QuadratureState
from pbm.pictures.board import (
    BAND,
    GAP,
    Grid,
    Mark,
    Piece,
    View,
    game_status,
    inset,
    name,
    paint_board,
)
from pbm.pictures.canvas import (
    DARK_EDGE,
    DARK_MAN,
    LIGHT_EDGE,
    LIGHT_MAN,
    LINE,
    MUTED,
    WOOD,
    WOOD_DEEP,
    Box,
    Canvas,
    Colour,
)
from pbm.pictures.words import PictureWords, say

CELL = 32
PANEL = 132  # the reserves and markers beside the board
RESERVE_ROW = 8  # reserve men drawn per row
RESERVE_STEP = 15
SIDE_HEIGHT = 104  # one side's name, marker, counts and two rows of reserve men


def man(canvas: Canvas, box: Box, side: int) -> None:
    """A man: Black dark, White light, each with an edge that shows on the wood."""
    if side == quadrature.BLACK:
        canvas.disc(box, fill=DARK_MAN, outline=DARK_EDGE, width=1)
    else:
        canvas.disc(box, fill=LIGHT_MAN, outline=LIGHT_EDGE, width=1.5)


def _plate(file: int, rank: int) -> int | None:
    """The side whose home plate holds the point, if any (PLATE is indexed by owner)."""
    for side in (quadrature.BLACK, quadrature.WHITE):
        if quadrature.PLATE[side] & quadrature.bit(file, rank):
            return side
    return None


class QuadratureView(View):
    def __init__(
        self, game: AnyGame, state: QuadratureState, names: Sequence[str], words: PictureWords
    ) -> None:
        groups = tuple(
            say(words.quadrature_group, side=SIDE_NAMES[side])
            for side in (quadrature.BLACK, quadrature.WHITE)
        )
        pieces: dict[str, Piece] = {}
        for side, men in ((quadrature.BLACK, state.black), (quadrature.WHITE, state.white)):
            for index in quadrature.bits(men):
                pieces[name(*quadrature.point(index))] = Piece(groups[side])
        super().__init__(pieces, groups, names, words)
        self.state = state
        self.game = game
        self.on_board = (quadrature.count(state.black), quadrature.count(state.white))

    def reserve(self, side: int) -> int:
        # Each side owns 16 men; those not on the board are its reserve (help page, "INTRO").
        return max(quadrature.MEN - self.on_board[side], 0)

    @property
    def status(self) -> str:
        return game_status(self.game, self.state, self.names, self.phrases)

    def notes(self) -> list[str]:
        words = self.phrases
        lines = [
            say(
                words.quadrature_side,
                side=SIDE_NAMES[side],
                board=self.on_board[side],
                reserve=self.reserve(side),
                marker=self.state.markers[side],
            )
            for side in (quadrature.BLACK, quadrature.WHITE)
        ]
        lines.append(say(words.quadrature_plates))
        return lines

    @property
    def size(self) -> tuple[int, int]:
        board = quadrature.SIZE * CELL + 2 * BAND
        return board + GAP + PANEL, board

    def paint(self, canvas: Canvas, x: float, y: float, marks: Mapping[str, Mark]) -> None:
        grid = Grid(x + BAND, y + BAND, quadrature.SIZE, quadrature.SIZE, CELL)

        def fill(file: int, rank: int) -> Colour:
            return WOOD if _plate(file, rank) is None else WOOD_DEEP

        paint_board(canvas, grid, fill, marks, self.pieces)
        for side in (quadrature.BLACK, quadrature.WHITE):
            # Each plate framed as one piece: e..g of rank 1 (Black's) and rank 11 (White's).
            rank = 0 if side == quadrature.BLACK else quadrature.SIZE - 1
            left = grid.box(4, rank)
            right = grid.box(6, rank)
            canvas.rect((left[0], left[1], right[2], right[3]), outline=LINE, width=2.5)
        for square, piece in self.pieces.items():
            side = self.groups.index(piece.group)
            man(canvas, inset(grid.box(*grid.square(square)), 4), side)
        panel = x + quadrature.SIZE * CELL + 2 * BAND + GAP
        # White starts at the top of the board, so its reserve is drawn at the top.
        self._side(canvas, panel, grid.y, quadrature.WHITE)
        self._side(canvas, panel, grid.y + grid.height - SIDE_HEIGHT, quadrature.BLACK)

    def _side(self, canvas: Canvas, x: float, y: float, side: int) -> None:
        man(canvas, (x, y, x + 16, y + 16), side)
        words = self.phrases
        canvas.text((x + 22, y + 8), SIDE_NAMES[side], 14, anchor="lm")
        marker = self.state.markers[side]
        canvas.text((x, y + 30), say(words.marker, count=marker), 12, MUTED, "lm")
        for slot in range(2):
            box = (x + 64 + slot * 16, y + 24, x + 76 + slot * 16, y + 36)
            canvas.disc(box, fill=DARK_MAN if slot < marker else None, outline=MUTED)
        on_board = say(words.on_the_board, count=self.on_board[side])
        canvas.text((x, y + 48), on_board, 12, MUTED, "lm")
        reserve = self.reserve(side)
        canvas.text((x, y + 64), say(words.in_reserve, count=reserve), 12, MUTED, "lm")
        for i in range(reserve):
            row, column = divmod(i, RESERVE_ROW)
            left, top = x + column * RESERVE_STEP, y + 74 + row * RESERVE_STEP
            man(canvas, (left, top, left + 12, top + 12), side)


def view(
    game: AnyGame,
    state: QuadratureState,
    seat: int | None,
    names: Sequence[str],
    words: PictureWords,
) -> QuadratureView:
    return QuadratureView(game, state, names, words)
