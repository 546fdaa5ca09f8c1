"""Quarod board geometry: bit masks, move numbering and group scoring for an N x N board.

Squares are grid indices (`rank * size + file`, a1 = 0); a set of squares is an int
bit mask. Everything here depends only on the board size and is built once per size.

Move numbering (moves are plain ints, see docs/games/quarod.md):
- a placement of Black on `b` and White on `w` is `b * area + w`;
- a swap of the pieces on `a < c` is `area * area + a * area + c`;
- the pie switch is `PIE` (-1).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cache
from itertools import chain
from operator import getitem

PIE = -1

# Rod directions, as the direction part of a cell code (see `piece`).
NORTH, EAST, SOUTH, WEST = 0, 1, 2, 3
BLACK, WHITE = 0, 1


def piece(colour: int, rod: int) -> int:
    """Cell code of a piece: 0 is an empty square, 1..4 Black rods N E S W, 5..8 White."""
    return colour * 4 + rod + 1


def colour_of(cell: int) -> int:
    return (cell - 1) >> 2


def rod_of(cell: int) -> int:
    return (cell - 1) & 3


@dataclass(frozen=True, eq=False)
class Geometry:
    """Tables for one board size; get them with `geometry(size)`."""

    size: int
    area: int
    swap_base: int  # first swap move number (area * area)
    not_last_file: int  # squares with a neighbour to the east
    offsets: tuple[int, int, int, int]  # index step of a rod N, E, S, W
    rod_towards: dict[int, int]  # index step (to - from) -> rod direction
    neighbours: tuple[tuple[int, ...], ...]
    # Moves by 8-bit chunk of a "pairs" mask of 4 * area bits. Bit i means the adjacent
    # squares i and i+1, bit area + i the squares i and i+size: in the lower 2 * area bits
    # both are empty (two placements each), in the upper 2 * area bits the two pieces can
    # swap (one move each). Looking the chunks up is all C work: see `moves`.
    chunk_moves: tuple[tuple[tuple[int, ...], ...], ...]

    def free_pairs(self, empty: int) -> int:
        """Pairs of adjacent empty squares (the lower half of the pairs mask)."""
        return (empty & (empty >> 1) & self.not_last_file) | (
            (empty & (empty >> self.size)) << self.area
        )

    def swap_pairs(self, engaged: int, black: int, paired_h: int, paired_v: int) -> int:
        """Pairs that can swap, in the free-pairs layout: both pieces engaged, of different
        colours, and not engaged to each other (Quarod rules, 'Play'; the reading the finished
        example game confirms: docs/games/quarod.md, 'Rules as pbm plays them', "Swap")."""
        size = self.size
        horizontal = (
            engaged & (engaged >> 1) & self.not_last_file & (black ^ (black >> 1)) & ~paired_h
        )
        vertical = engaged & (engaged >> size) & (black ^ (black >> size)) & ~paired_v
        return horizontal | (vertical << self.area)

    def moves(
        self, empty: int, engaged: int, black: int, paired_h: int, paired_v: int
    ) -> list[int]:
        """Every placement and swap (not the pie switch)."""
        pairs = self.free_pairs(empty)
        if engaged:
            pairs |= self.swap_pairs(engaged, black, paired_h, paired_v) << (2 * self.area)
        chunks = pairs.to_bytes(len(self.chunk_moves), "little")
        return list(chain.from_iterable(map(getitem, self.chunk_moves, chunks)))

    def group_sizes(self, cells: bytes) -> tuple[Counter[int], Counter[int]]:
        """Counts of groups by size for Black and for White (groups ignore rods)."""
        counts: tuple[Counter[int], Counter[int]] = (Counter(), Counter())
        seen = bytearray(self.area)
        neighbours = self.neighbours
        for start, cell in enumerate(cells):
            if not cell or seen[start]:
                continue
            colour = colour_of(cell)
            seen[start] = 1
            stack = [start]
            size = 0
            while stack:
                square = stack.pop()
                size += 1
                for other in neighbours[square]:
                    if not seen[other] and cells[other] and colour_of(cells[other]) == colour:
                        seen[other] = 1
                        stack.append(other)
            counts[colour][size] += 1
        return counts


def score(mine: Counter[int], theirs: Counter[int]) -> int:
    """The biggest group size in which `mine` has more groups than `theirs`, else 0."""
    return max((size for size, count in mine.items() if count > theirs[size]), default=0)


@cache
def geometry(size: int) -> Geometry:
    area = size * size
    not_last_file = sum(1 << i for i in range(area) if i % size != size - 1)
    neighbours = tuple(
        tuple(
            j
            for j, ok in (
                (i + size, i // size < size - 1),
                (i + 1, i % size < size - 1),
                (i - size, i >= size),
                (i - 1, i % size > 0),
            )
            if ok
        )
        for i in range(area)
    )

    swap_base = area * area
    # The moves of each bit of the pairs mask, made once so the chunk tables share them.
    pair_moves: list[tuple[int, ...]] = []
    for bit in range(2 * area):
        low = bit % area
        high = low + (1 if bit < area else size)
        pair_moves.append((low * area + high, high * area + low))
    for bit in range(2 * area):
        low = bit % area
        high = low + (1 if bit < area else size)
        pair_moves.append((swap_base + low * area + high,))
    chunks = []
    for chunk in range((len(pair_moves) + 7) // 8):
        table = []
        for byte in range(256):
            moves: tuple[int, ...] = ()
            for k in range(8):
                if byte >> k & 1 and chunk * 8 + k < len(pair_moves):
                    moves += pair_moves[chunk * 8 + k]
            table.append(moves)
        chunks.append(tuple(table))
    return Geometry(
        size=size,
        area=area,
        swap_base=swap_base,
        not_last_file=not_last_file,
        offsets=(size, 1, -size, -1),
        rod_towards={size: NORTH, 1: EAST, -size: SOUTH, -1: WEST},
        neighbours=neighbours,
        chunk_moves=tuple(chunks),
    )
