"""Quad's picture: the 8x8 board and the counters each side still holds in hand
(docs/games/quad.md; nothing is hidden)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pbm.games import AnyGame
from pbm.games.grid import square_name
from pbm.games.quad import BLACK, FOUR, RIM, SIZE, SYMBOLS, WHITE, QuadState, squares_of
from pbm.pictures.board import (
    BAND,
    GAP,
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
    LIGHT_EDGE,
    LIGHT_MAN,
    MUTED,
    WOOD,
    WOOD_DARK,
    Box,
    Canvas,
    Colour,
)
from pbm.pictures.words import PictureWords, say

CELL = 44
PANEL = 150
HAND_ROW = 10  # counters in hand drawn per row
HAND_STEP = 14
SIDE_HEIGHT = 110  # one side's name, counts and up to three rows of counters in hand


def counter(canvas: Canvas, box: Box, side: int) -> None:
    if side == BLACK:
        canvas.disc(box, fill=DARK_MAN, outline=DARK_EDGE)
    else:
        canvas.disc(box, fill=LIGHT_MAN, outline=LIGHT_EDGE, width=1.5)


def exact_fours(counters: int) -> set[int]:
    """The squares of every run of exactly four counters in a rank or a file (the win of
    Winther's Quad rules: "overlines don't count", "Diagonals don't count")."""
    found: set[int] = set()
    for along, across in (((1, 0), (0, 1)), ((0, 1), (1, 0))):
        for line in range(SIZE):
            run: list[int] = []
            for step in range(SIZE + 1):
                file = line * across[0] + step * along[0]
                rank = line * across[1] + step * along[1]
                square = rank * SIZE + file
                if step < SIZE and counters >> square & 1:
                    run.append(square)
                    continue
                if len(run) == 4:
                    found.update(run)
                run = []
    return found


class QuadView(View):
    def __init__(
        self, game: AnyGame, state: QuadState, names: Sequence[str], words: PictureWords
    ) -> None:
        groups = tuple(
            say(words.quad_group, side=game.seats[side], symbol=SYMBOLS[side])
            for side in (WHITE, BLACK)
        )
        pieces: dict[str, Piece] = {}
        for side, counters in ((WHITE, state.white), (BLACK, state.black)):
            for square in squares_of(counters):
                pieces[square_name(square, SIZE)] = Piece(groups[side])
        super().__init__(pieces, groups, names, words)
        self.game = game
        self.state = state
        self.on_board = (state.white.bit_count(), state.black.bit_count())
        # Version 1.1: "White must always drop the second counter on the rim".
        self.rim_drop = (
            state.result is None
            and state.side == WHITE
            and state.hands[WHITE] == state.counters - 1
        )
        result = state.result
        line: set[int] = set()
        if result is not None and result.winner is not None and result.reason == FOUR:
            line = exact_fours((state.white, state.black)[result.winner])
        self.winning = {square_name(square, SIZE) for square in line}

    @property
    def status(self) -> str:
        state = self.state
        words = self.phrases
        if not state.hands[state.side]:
            running = words.to_move
        elif self.rim_drop:
            running = words.quad_to_drop_rim
        else:
            running = words.quad_to_drop
        status = say(running, who=self.names[state.side])
        return game_status(self.game, state, self.names, words, status)

    def notes(self) -> list[str]:
        return [
            say(
                self.phrases.quad_hand,
                side=self.game.seats[side],
                hand=self.state.hands[side],
                board=self.on_board[side],
            )
            for side in (WHITE, BLACK)
        ]

    @property
    def size(self) -> tuple[int, int]:
        board = SIZE * CELL + 2 * BAND
        return board + GAP + PANEL, board

    def paint(self, canvas: Canvas, x: float, y: float, marks: Mapping[str, Mark]) -> None:
        grid = Grid(x + BAND, y + BAND, SIZE, SIZE, CELL)

        def fill(file: int, rank: int) -> Colour:
            rim = self.rim_drop and RIM >> (rank * SIZE + file) & 1
            return WOOD_DARK if rim else WOOD

        paint_board(canvas, grid, fill, marks, self.pieces)
        outline_squares(canvas, grid, self.winning)
        for square, piece in self.pieces.items():
            side = self.groups.index(piece.group)
            counter(canvas, inset(grid.box(*grid.square(square)), 5), side)
        panel = x + SIZE * CELL + 2 * BAND + GAP
        self._side(canvas, panel, grid.y, WHITE)
        self._side(canvas, panel, grid.y + grid.height - SIDE_HEIGHT, BLACK)

    def _side(self, canvas: Canvas, x: float, y: float, side: int) -> None:
        counter(canvas, (x, y, x + 16, y + 16), side)
        words = self.phrases
        canvas.text((x + 22, y + 8), f"{self.game.seats[side]} ({SYMBOLS[side]})", 14, anchor="lm")
        on_board = say(words.on_the_board, count=self.on_board[side])
        canvas.text((x, y + 30), on_board, 12, MUTED, "lm")
        hand = self.state.hands[side]
        canvas.text((x, y + 46), say(words.in_hand, count=hand), 12, MUTED, "lm")
        for i in range(hand):
            row, column = divmod(i, HAND_ROW)
            left, top = x + column * HAND_STEP, y + 56 + row * HAND_STEP
            counter(canvas, (left, top, left + 11, top + 11), side)


def view(
    game: AnyGame, state: QuadState, seat: int | None, names: Sequence[str], words: PictureWords
) -> QuadView:
    return QuadView(game, state, names, words)
