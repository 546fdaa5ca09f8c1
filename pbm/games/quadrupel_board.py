"""Quadrupel board geometry: precomputed tables for the 6x6 board (no game state here).

Squares are grid indices (rank * 6 + file, a1 = 0). Everything the move generator and
the win check need per square is computed once at import (the rules:
docs/games/quadrupel.md, 'The basic game').
"""

from __future__ import annotations

SIZE = 6
SQUARES = SIZE * SIZE

ORTHOGONAL_DIRS = ((0, 1), (1, 0), (0, -1), (-1, 0))
DIAGONAL_DIRS = ((1, 1), (1, -1), (-1, -1), (-1, 1))

# Shape kinds, numbered by their added-value worth (rule sheet, part 2: Square 1, Straight 2,
# Diamond 3, Diagonal 4), so the kind is its own shape value.
SQUARE, STRAIGHT, DIAMOND, DIAGONAL = 1, 2, 3, 4
SHAPE_NAMES = {SQUARE: "Square", STRAIGHT: "Straight", DIAMOND: "Diamond", DIAGONAL: "Diagonal"}


def _on_board(file: int, rank: int) -> bool:
    return 0 <= file < SIZE and 0 <= rank < SIZE


def _index(file: int, rank: int) -> int:
    return rank * SIZE + file


def _steps(square: int) -> tuple[int, ...]:
    """Orthogonal neighbours: the only squares a step may reach ("not diagonally!")."""
    file, rank = square % SIZE, square // SIZE
    return tuple(
        _index(file + df, rank + dr)
        for df, dr in ORTHOGONAL_DIRS
        if _on_board(file + df, rank + dr)
    )


def _jumps(square: int) -> tuple[tuple[int, int], ...]:
    """(jumped square, landing square) for each of the eight jump directions."""
    file, rank = square % SIZE, square // SIZE
    return tuple(
        (_index(file + df, rank + dr), _index(file + 2 * df, rank + 2 * dr))
        for df, dr in ORTHOGONAL_DIRS + DIAGONAL_DIRS
        if _on_board(file + 2 * df, rank + 2 * dr)
    )


def _zone(square: int) -> int:
    """Zone value for the point games: 1 edge, 3 the centre four, 2 the ring between."""
    file, rank = square % SIZE, square // SIZE
    if file in (0, SIZE - 1) or rank in (0, SIZE - 1):
        return 1
    if file in (2, 3) and rank in (2, 3):
        return 3
    return 2


def _mask(cells: list[tuple[int, int]]) -> int:
    return sum(1 << _index(f, r) for f, r in cells)


def _shapes() -> dict[int, int]:
    """Every QUADRUPEL placement on 6x6 as a bit mask of four squares -> its kind."""
    shapes: dict[int, int] = {}
    for rank in range(SIZE):
        for file in range(SIZE):
            if _on_board(file + 1, rank + 1):
                shapes[_mask([(file, rank), (file + 1, rank), (file, rank + 1),
                              (file + 1, rank + 1)])] = SQUARE  # fmt: skip
            for df, dr in ((1, 0), (0, 1)):
                if _on_board(file + 3 * df, rank + 3 * dr):
                    line = [(file + i * df, rank + i * dr) for i in range(4)]
                    shapes[_mask(line)] = STRAIGHT
            for df, dr in ((1, 1), (1, -1)):
                if _on_board(file + 3 * df, rank + 3 * dr):
                    line = [(file + i * df, rank + i * dr) for i in range(4)]
                    shapes[_mask(line)] = DIAGONAL
            # The centre of a Diamond may be empty or hold any stone (docs/games/quadrupel.md,
            # 'The basic game').
            if 0 < file < SIZE - 1 and 0 < rank < SIZE - 1:
                ring = [(file + df, rank + dr) for df, dr in ORTHOGONAL_DIRS]
                shapes[_mask(ring)] = DIAMOND
    return shapes


STEPS: tuple[tuple[int, ...], ...] = tuple(_steps(s) for s in range(SQUARES))
JUMPS: tuple[tuple[tuple[int, int], ...], ...] = tuple(_jumps(s) for s in range(SQUARES))
ZONES: tuple[int, ...] = tuple(_zone(s) for s in range(SQUARES))
SHAPES: dict[int, int] = _shapes()
# Jump lookup by (from, to) for checking a written path hop by hop.
JUMP_OVER: dict[tuple[int, int], int] = {
    (s, land): over for s in range(SQUARES) for over, land in JUMPS[s]
}
