"""Square coordinates and ASCII grids shared by the rectangular-board games.

A square is an int index `rank * width + file` (both from 0), so `a1` is 0 and
sits bottom left as seen by the side that moves first. Names are a file letter and
a rank number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

FILES = "abcdefghijklmnopqrstuvwxyz"

_SQUARE = re.compile(r"([a-z])(\d{1,2})")


@cache
def square_names(width: int, height: int) -> tuple[str, ...]:
    """Names of every square by index."""
    return tuple(f"{FILES[i % width]}{i // width + 1}" for i in range(width * height))


@cache
def square_index(width: int, height: int) -> dict[str, int]:
    """Index of every square by its (lower-case) name."""
    return {name: i for i, name in enumerate(square_names(width, height))}


def square_name(square: int, width: int) -> str:
    return f"{FILES[square % width]}{square // width + 1}"


def parse_square(text: str, width: int, height: int) -> int | None:
    """Index of a square name such as `B3`, or None when it is not a square on the board."""
    return square_index(width, height).get(text.strip().lower())


def find_squares(text: str) -> list[str]:
    """Every square-looking token in lower-cased text, in order (`b3b4` gives b3, b4)."""
    return [m.group(0) for m in _SQUARE.finditer(text.lower())]


def render_grid(
    cells: Sequence[str],
    width: int,
    height: int,
    *,
    cell_width: int = 1,
    gap: str = " ",
    side_notes: Sequence[str] = (),
) -> list[str]:
    """Lines of a board with file letters above and below and rank numbers on both sides.

    `cells` holds one string per square index, each `cell_width` characters; ranks are
    printed top (highest) first. `side_notes[i]` is appended to the i-th printed rank line.
    """
    rank_width = len(str(height))
    margin = " " * (rank_width + 2)
    letters = gap.join(FILES[f].ljust(cell_width) for f in range(width)).rstrip()
    lines = [margin + letters]
    for row, rank in enumerate(range(height - 1, -1, -1)):
        body = gap.join(cells[rank * width + f] for f in range(width))
        label = str(rank + 1).rjust(rank_width)
        line = f"{label}  {body}  {label}"
        if row < len(side_notes) and side_notes[row]:
            line += "   " + side_notes[row]
        lines.append(line.rstrip())
    lines.append(margin + letters)
    return lines
