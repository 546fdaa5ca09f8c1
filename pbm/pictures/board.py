"""What every game's picture shares: the visible position in words, the board grid with
its coordinates, the marks of the last move, and the frame (heading, status, footer).

A game module turns a state, as one seat may see it, into a `View`: the contents of
each square as a `Piece` (words that the last-move diff compares and the screen-reader
list reads), notes in words, and a `paint` method for the board and its side panel.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from PIL import Image

from pbm.games import AnyGame
from pbm.games.base import State
from pbm.games.grid import FILES
from pbm.pictures.canvas import (
    CAPTURE,
    EFFECT_TINT,
    HEAD_SIZE,
    LINE,
    MARGIN,
    MOVE_TINT,
    MUTED,
    TEXT_SIZE,
    WIN,
    Box,
    Canvas,
    Colour,
    line_height,
    wrap,
)
from pbm.pictures.words import PictureWords, say

COORDINATE_SIZE = 12
CORNER_SIZE = 10  # a corner label (`paint_board`)
BAND = 20  # the strip on each side of a board that holds its coordinates
GAP = 16  # between a board and its side panel


@dataclass(frozen=True, slots=True)
class Piece:
    """What one square holds, in words: the group it is listed under ("Black men") and
    what sets it apart within the group ("3 dots"), if anything."""

    group: str
    detail: str = ""


class Mark(enum.Enum):
    """How the last move touched a square."""

    MOVE = "move"  # a square the move names: from, to, placed, dropped, swapped
    EFFECT = "effect"  # a square it changed besides: converted, captured, released


@dataclass(frozen=True, slots=True)
class Grid:
    """A board of `files` x `ranks` squares of `cell` pixels, top left at (x, y) (the
    coordinate bands lie outside). Rank 1 is at the bottom, as in the text boards."""

    x: float
    y: float
    files: int
    ranks: int
    cell: float

    @property
    def width(self) -> float:
        return self.files * self.cell

    @property
    def height(self) -> float:
        return self.ranks * self.cell

    def box(self, file: int, rank: int) -> Box:
        left = self.x + file * self.cell
        top = self.y + (self.ranks - 1 - rank) * self.cell
        return (left, top, left + self.cell, top + self.cell)

    def centre(self, file: int, rank: int) -> tuple[float, float]:
        left, top, right, bottom = self.box(file, rank)
        return (left + right) / 2, (top + bottom) / 2

    def square(self, name: str) -> tuple[int, int]:
        """(file, rank) of a square name such as `c10`."""
        return FILES.index(name[0]), int(name[1:]) - 1


def name(file: int, rank: int) -> str:
    return f"{FILES[file]}{rank + 1}"


def inset(box: Box, by: float) -> Box:
    return (box[0] + by, box[1] + by, box[2] - by, box[3] - by)


def paint_board(
    canvas: Canvas,
    grid: Grid,
    fill: Callable[[int, int], Colour],
    marks: Mapping[str, Mark],
    occupied: Iterable[str],
    corners: tuple[str, ...] = (),
) -> None:
    """The squares (tinted where the last move touched them), the lines between them,
    the coordinates on all four edges, the `corners` labels (by rank, then file: a
    small label in each square's top left corner, as Quadrupel's zone numbers), and a
    cross on each square the last move emptied of an enemy piece (a capture). The
    board without the marks is drawn once per look and kept (`bare_board`)."""
    fills = tuple(fill(file, rank) for rank in range(grid.ranks) for file in range(grid.files))
    canvas.paste(
        bare_board(grid.files, grid.ranks, grid.cell, fills, corners),
        (grid.x - BAND, grid.y - BAND),
    )
    tints = {Mark.MOVE: MOVE_TINT, Mark.EFFECT: EFFECT_TINT}
    for square, mark in marks.items():
        file, rank = grid.square(square)
        canvas.rect(grid.box(file, rank), fill=tints[mark], outline=LINE)
        if corners:  # the tint covered the kept label
            _corner(canvas, grid, file, rank, corners[rank * grid.files + file])
    canvas.rect((grid.x, grid.y, grid.x + grid.width, grid.y + grid.height), outline=LINE, width=2)
    full = set(occupied)
    for square, mark in marks.items():
        if mark is Mark.EFFECT and square not in full:
            left, top, right, bottom = inset(grid.box(*grid.square(square)), grid.cell * 0.3)
            canvas.line([(left, top), (right, bottom)], CAPTURE, 3)
            canvas.line([(left, bottom), (right, top)], CAPTURE, 3)


def _corner(canvas: Canvas, grid: Grid, file: int, rank: int, label: str) -> None:
    left, top, _, _ = grid.box(file, rank)
    canvas.text((left + 4, top + 3), label, CORNER_SIZE, MUTED)


@lru_cache(maxsize=64)
def bare_board(
    files: int, ranks: int, cell: float, fills: tuple[Colour, ...], corners: tuple[str, ...] = ()
) -> Image.Image:
    """A board of these squares and colours (by rank, then file) with its coordinate
    bands and corner labels (`paint_board`), unmarked: the part of a picture every
    position of a game shares."""
    grid = Grid(BAND, BAND, files, ranks, cell)
    canvas = Canvas(round(grid.width) + 2 * BAND, round(grid.height) + 2 * BAND, framed=False)
    for rank in range(ranks):
        for file in range(files):
            canvas.rect(grid.box(file, rank), fill=fills[rank * files + file], outline=LINE)
            if corners:
                _corner(canvas, grid, file, rank, corners[rank * files + file])
    canvas.rect((grid.x, grid.y, grid.x + grid.width, grid.y + grid.height), outline=LINE, width=2)
    half = BAND / 2
    for file in range(files):
        x = grid.x + (file + 0.5) * cell
        for y in (grid.y - half, grid.y + grid.height + half):
            canvas.text((x, y), FILES[file], COORDINATE_SIZE, MUTED, "mm")
    for rank in range(ranks):
        y = grid.y + (ranks - 0.5 - rank) * cell
        for x in (grid.x - half, grid.x + grid.width + half):
            canvas.text((x, y), str(rank + 1), COORDINATE_SIZE, MUTED, "mm")
    return canvas.image


def seat_names(game: AnyGame, state: State, players: Sequence[str] = ()) -> tuple[str, ...]:
    """The name of each seat in `state`: the userid of the player who holds it, as the
    text board names him, where `players` (by challenge order) are given, else the
    seat's own name ("Black"). A pie swap changes who holds a seat, so it takes `state`."""
    if not players:
        return tuple(game.seats)
    order = list(game.player_seats(state))
    return tuple(
        players[order.index(seat)]
        if seat in order and order.index(seat) < len(players)
        else game.seat_name(seat)
        for seat in range(len(game.seats))
    )


def game_status(
    game: AnyGame,
    state: State,
    names: Sequence[str],
    words: PictureWords,
    running: str | None = None,
) -> str:
    """How the game ended, or `running` (by default who is to move)."""
    status = game.status(state)
    result = status.outcome
    if result is None:
        return running or say(words.to_move, who=names[status.to_move or 0])
    winner = result.winner
    who = say(words.draw) if winner is None else say(words.wins, who=names[winner])
    return say(words.game_over, who=who, reason=result.reason)


def outline_squares(canvas: Canvas, grid: Grid, squares: Iterable[str]) -> None:
    """A frame around each square of a winning line or shape."""
    for square in squares:
        canvas.rect(inset(grid.box(*grid.square(square)), 1.5), outline=WIN, width=3)


class View(ABC):
    """One position as one seat sees it: everything a picture and its words show."""

    # Whether the seats are sides the picture shows (colours), so that a legend says
    # which player holds which; Quarto's seats ("First") show nothing of the kind.
    shows_sides = True

    def __init__(
        self,
        pieces: dict[str, Piece],
        groups: tuple[str, ...],
        names: Sequence[str],
        words: PictureWords,
    ) -> None:
        self.pieces = pieces
        self.groups = groups  # the order of the groups in words (listed even if empty)
        self.names = tuple(names)  # who holds each seat (see `seat_names`)
        self.phrases = words  # the words it draws and says (`PictureWords`)

    @property
    @abstractmethod
    def status(self) -> str:
        """Whose turn it is or how the game ended, one sentence without a full stop."""

    @abstractmethod
    def notes(self) -> list[str]:
        """Everything besides the squares, in words: reserves, hands, pieces to place."""

    def footer(self) -> list[str]:
        """The notes written under the picture (what the drawing cannot show)."""
        return []

    def drawing_key(self) -> list[str]:
        """The notes that explain the drawing alone (left out of the words format)."""
        return []

    @property
    @abstractmethod
    def size(self) -> tuple[int, int]:
        """Width and height of the board and its side panel, in pixels."""

    @abstractmethod
    def paint(self, canvas: Canvas, x: float, y: float, marks: Mapping[str, Mark]) -> None:
        """Draw the board with its coordinates (and side panel) at (x, y)."""

    def words(self) -> list[str]:
        """The squares by group, each group's squares by coordinate (file, then rank)."""
        lines = []
        for group in self.groups:
            squares = sorted(
                (s for s, p in self.pieces.items() if p.group == group),
                key=lambda s: (s[0], int(s[1:])),
            )
            items = [
                f"{s} ({self.pieces[s].detail})" if self.pieces[s].detail else s for s in squares
            ]
            listed = ", ".join(items) or say(self.phrases.none)
            lines.append(say(self.phrases.group, group=group, count=len(items), items=listed))
        return lines


def frame(
    view: View,
    heading: str,
    status_line: str,
    echo: str | None,
    marks: Mapping[str, Mark],
    legend: Sequence[str] = (),
) -> Canvas:
    """The whole picture: heading and status above the board, the last move, who holds
    which side and the view's footer notes below it."""
    body_width, body_height = view.size
    width = max(body_width + 2 * MARGIN, 360)
    text_width = width - 2 * MARGIN
    top = wrap(heading, text_width, HEAD_SIZE)
    status = wrap(status_line, text_width)
    moved = [say(view.phrases.last_move, echo=echo)] if echo else []
    below = [*moved, *legend, *view.footer()]
    bottom = [line for note in below for line in wrap(note, text_width)]
    head_height = len(top) * line_height(HEAD_SIZE) + len(status) * line_height()
    foot_height = len(bottom) * line_height()
    height = MARGIN + head_height + 6 + body_height + 6 + foot_height + MARGIN
    canvas = Canvas(width, height)
    y: float = MARGIN
    for line in top:
        canvas.text((MARGIN, y), line, HEAD_SIZE)
        y += line_height(HEAD_SIZE)
    for line in status:
        canvas.text((MARGIN, y), line, TEXT_SIZE, MUTED)
        y += line_height()
    y += 6
    # Whole pixels, so that the kept board and the sprites land where they were drawn.
    view.paint(canvas, MARGIN + (text_width - body_width) // 2, y, marks)
    y += body_height + 6
    for line in bottom:
        canvas.text((MARGIN, y), line, TEXT_SIZE)
        y += line_height()
    return canvas
