"""Quarto's picture: the 4x4 board, the piece to be placed and the unused pieces, each
piece drawn by its four attributes (docs/games/quarto.md; nothing is hidden).

Seen from above, as the pieces stand on the table: tall pieces are drawn large and
short ones small, round ones as discs and square ones as squares, light ones pale and
dark ones brown, and a hollow piece shows the hole in its top.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pbm.games import AnyGame
from pbm.games.grid import square_name
from pbm.games.quarto import (
    ALL_ATTRIBUTES,
    ATTRIBUTE_BITS,
    CODES,
    EMPTY,
    SIZE,
    VALUE_WORDS,
    QuartoState,
    attributes_text,
)
from pbm.pictures.board import (
    BAND,
    GAP,
    Grid,
    Mark,
    Piece,
    View,
    game_status,
    outline_squares,
    paint_board,
)
from pbm.pictures.canvas import DARK_WOOD, LIGHT_WOOD, MUTED, WOOD_DARK, Canvas
from pbm.pictures.words import PictureWords, joined, say

CELL = 72
SLOT = 46  # a cell of the unused pieces' grid
SLOT_COLUMNS = 4
PANEL = SLOT_COLUMNS * (SLOT + 6)
TALL, LIGHT, ROUND, HOLLOW = ATTRIBUTE_BITS


def describe(piece: int) -> str:
    """`TLRH: tall, light, round, hollow`."""
    words = [VALUE_WORDS[i][0 if piece & bit else 1] for i, bit in enumerate(ATTRIBUTE_BITS)]
    return f"{CODES[piece]}: {', '.join(words)}"


def paint_piece(canvas: Canvas, centre: tuple[float, float], room: float, piece: int) -> None:
    """A piece in a square of `room` pixels around `centre`."""
    body, edge, hole = LIGHT_WOOD if piece & LIGHT else DARK_WOOD
    half = room * (0.42 if piece & TALL else 0.27)
    x, y = centre
    box = (x - half, y - half, x + half, y + half)
    inner = half * 0.45
    hole_box = (x - inner, y - inner, x + inner, y + inner)
    if piece & ROUND:
        canvas.disc(box, fill=body, outline=edge, width=1.5)
        if piece & HOLLOW:
            canvas.disc(hole_box, fill=hole, outline=edge, width=1)
    else:
        canvas.rounded(box, half * 0.18, fill=body, outline=edge, width=1.5)
        if piece & HOLLOW:
            canvas.rounded(hole_box, inner * 0.2, fill=hole, outline=edge, width=1)


class QuartoView(View):
    shows_sides = False

    def __init__(
        self, game: AnyGame, state: QuartoState, names: Sequence[str], words: PictureWords
    ) -> None:
        group = say(words.quarto_group)
        pieces = {
            square_name(square, SIZE): Piece(group, describe(piece))
            for square, piece in enumerate(state.board)
            if piece != EMPTY
        }
        super().__init__(pieces, (group,), names, words)
        self.key = say(words.quarto_key)
        self.game = game
        self.state = state
        quartos = state.variant.quartos(state.sums)
        self.winning = {square_name(s, SIZE) for _, squares, _ in quartos for s in squares}

    @property
    def status(self) -> str:
        state = self.state
        words = self.phrases
        seat = self.game.to_move(state)
        if seat is None:
            running = None
        elif state.held == EMPTY:
            running = say(words.quarto_to_give, who=self.names[seat])
        else:
            to_place = words.quarto_to_place_and_give if state.unused else words.quarto_to_place
            running = say(to_place, who=self.names[seat], piece=CODES[state.held])
        return game_status(self.game, state, self.names, words, running)

    def notes(self) -> list[str]:
        state = self.state
        words = self.phrases
        lines = self.footer()
        if state.held != EMPTY:
            lines.append(say(words.quarto_held, piece=describe(state.held)))
        codes = " ".join(CODES[p] for p in state.unused) or say(words.none)
        lines.append(say(words.quarto_unused, count=len(state.unused), pieces=codes))
        return lines

    def drawing_key(self) -> list[str]:
        return [self.key]

    def footer(self) -> list[str]:
        variant = self.state.variant
        words = self.phrases
        lines = [self.key]
        if variant.advanced:
            lines.append(say(words.quarto_advanced))
        if variant.attributes != ALL_ATTRIBUTES:
            names = attributes_text(variant.attributes).split(",")
            only = words.quarto_beginners_one if len(names) == 1 else words.quarto_beginners
            lines.append(say(only, attributes=joined(words, names)))
        return lines

    @property
    def size(self) -> tuple[int, int]:
        board = SIZE * CELL + 2 * BAND
        panel = 20 + CELL + 12 + 20 + 4 * (SLOT + 14)
        return board + GAP + PANEL, max(board, panel)

    def paint(self, canvas: Canvas, x: float, y: float, marks: Mapping[str, Mark]) -> None:
        grid = Grid(x + BAND, y + BAND, SIZE, SIZE, CELL)
        paint_board(canvas, grid, lambda file, rank: WOOD_DARK, marks, self.pieces)
        outline_squares(canvas, grid, self.winning)
        for square, piece in enumerate(self.state.board):
            if piece != EMPTY:
                centre = grid.centre(square % SIZE, square // SIZE)
                paint_piece(canvas, centre, CELL, piece)
        self._panel(canvas, x + SIZE * CELL + 2 * BAND + GAP, y)

    def _panel(self, canvas: Canvas, x: float, y: float) -> None:
        state = self.state
        held = state.held
        words = self.phrases
        label = words.quarto_panel_held if held != EMPTY else words.quarto_panel_empty
        canvas.text((x, y), say(label), 13, MUTED)
        box = (x, y + 20, x + CELL, y + 20 + CELL)
        canvas.rounded(box, 6, fill=WOOD_DARK, outline=MUTED)
        if held != EMPTY:
            paint_piece(canvas, (x + CELL / 2, y + 20 + CELL / 2), CELL, held)
            canvas.text((x + CELL + 10, y + 20 + CELL / 2), CODES[held], 15, anchor="lm")
        top = y + 20 + CELL + 12
        canvas.text((x, top), say(words.quarto_panel_unused, count=len(state.unused)), 13, MUTED)
        for i, piece in enumerate(state.unused):
            row, column = divmod(i, SLOT_COLUMNS)
            left = x + column * (SLOT + 6)
            upper = top + 20 + row * (SLOT + 14)
            paint_piece(canvas, (left + SLOT / 2, upper + SLOT / 2), SLOT, piece)
            canvas.text((left + SLOT / 2, upper + SLOT + 6), CODES[piece], 11, MUTED, "mm")


def view(
    game: AnyGame, state: QuartoState, seat: int | None, names: Sequence[str], words: PictureWords
) -> QuartoView:
    return QuartoView(game, state, names, words)
