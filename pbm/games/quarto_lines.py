"""Quarto's winning groups and the packed counters that detect a quarto in two operations.

A group is four squares that win when their pieces share a counted attribute: the 4 rows,
4 columns and 2 diagonals (Quarto rules, Blaise Müller, "Objective of the game"), plus the
nine contiguous 2x2 squares in the advanced variant ("9 additional ways": pbm reads them as
exactly these, docs/games/quarto.md, 'Decisions where the rules are silent or physical').

Why counters: every group owns a 24-bit slice of one Python int holding, for each of
the 8 attribute values (tall, short, light, ...), a 3-bit count of the pieces in the
group having it. Placing piece p on square s adds `code(p)` to the slice of every group
through s: one precomputed addition. A group's count reaches 4 only when it is full and
all four pieces share that value, and bit 2 of a 3-bit count is set exactly at 4 (a
group holds at most 4 pieces), so "some counted group is a quarto" is one AND with a
mask of those bits. Before any placement no group is a quarto (else the game is over),
so the test after a placement concerns only the groups through the placed square.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from pbm.games.grid import FILES
from pbm.games.quarto_pieces import ATTRIBUTE_BITS, PIECES, VALUE_WORDS

SIZE = 4
SQUARES = tuple(range(SIZE * SIZE))
_SLICE = 24  # bits per group: 8 attribute values x 3-bit counts
_COUNT = 3


def _value_field(attribute: int, value: int) -> int:
    """Index (0..7) of the counter for one value of one attribute."""
    return 2 * attribute + value


def _lines() -> tuple[tuple[str, tuple[int, ...]], ...]:
    rows = tuple((f"row {r + 1}", tuple(r * SIZE + f for f in range(SIZE))) for r in range(SIZE))
    columns = tuple(
        (f"column {FILES[f]}", tuple(r * SIZE + f for r in range(SIZE))) for f in range(SIZE)
    )
    diagonals = (
        ("diagonal a1-d4", tuple(i * SIZE + i for i in range(SIZE))),
        ("diagonal a4-d1", tuple((SIZE - 1 - i) * SIZE + i for i in range(SIZE))),
    )
    return rows + columns + diagonals


def _blocks() -> tuple[tuple[str, tuple[int, ...]], ...]:
    blocks = []
    for rank in range(SIZE - 1):
        for file in range(SIZE - 1):
            low = rank * SIZE + file
            name = f"square {FILES[file]}{rank + 1}-{FILES[file + 1]}{rank + 2}"
            blocks.append((name, (low, low + 1, low + SIZE, low + SIZE + 1)))
    return tuple(blocks)


LINES = _lines()
BLOCKS = _blocks()


def piece_counter(piece: int) -> int:
    """The increments one piece makes to a group's eight value counters."""
    total = 0
    for attribute, bit in enumerate(ATTRIBUTE_BITS):
        value = 1 if piece & bit else 0
        total += 1 << (_COUNT * _value_field(attribute, value))
    return total


def _fours_bits(attributes: int) -> int:
    """Within one group's slice: bit 2 of the counters of every counted attribute."""
    bits = 0
    for attribute, bit in enumerate(ATTRIBUTE_BITS):
        if attributes & bit:
            for value in (0, 1):
                bits |= 1 << (_COUNT * _value_field(attribute, value) + _COUNT - 1)
    return bits


@dataclass(frozen=True, slots=True)
class Variant:
    """The winning groups and counter tables of one option set (shared by its states)."""

    advanced: bool
    attributes: int
    groups: tuple[tuple[str, tuple[int, ...]], ...] = field(repr=False)
    # add[piece][square]: what placing `piece` on `square` adds to the packed counters.
    add: tuple[tuple[int, ...], ...] = field(repr=False)
    # add_everywhere[piece]: the piece added to every group at once. After it, a group
    # shows a four only if it already held three pieces sharing a value with the piece.
    add_everywhere: tuple[int, ...] = field(repr=False)
    # fours: the "count is 4" bit of each counted attribute value in every group.
    fours: int = field(repr=False)

    def counters(self, board: tuple[int, ...], empty: int) -> int:
        """The packed counters of a whole board (for positions loaded from text)."""
        return sum(self.add[p][s] for s, p in enumerate(board) if p != empty)

    def quartos(self, sums: int) -> list[tuple[str, tuple[int, ...], list[str]]]:
        """Each group that is a quarto: its name, squares and shared values (`tall`)."""
        found = []
        hits = sums & self.fours
        for index, (name, squares) in enumerate(self.groups):
            group_hits = (hits >> (_SLICE * index)) & _SLICE_MASK
            if group_hits:
                words = [word for word, bit in _FOUR_WORDS if group_hits & bit]
                found.append((name, squares, words))
        return found


_SLICE_MASK = (1 << _SLICE) - 1
# The value word of each "count is 4" bit in a group's slice, attributes in order.
_FOUR_WORDS = tuple(
    (VALUE_WORDS[attribute][1 - value], 1 << (_COUNT * _value_field(attribute, value) + 2))
    for attribute in range(len(ATTRIBUTE_BITS))
    for value in (1, 0)
)


@cache
def variant(advanced: bool, attributes: int) -> Variant:
    """The (cached, so shared and identical) tables for an option set."""
    groups = LINES + BLOCKS if advanced else LINES
    through = [0] * len(SQUARES)
    for index, (_, squares) in enumerate(groups):
        for square in squares:
            through[square] |= 1 << (_SLICE * index)
    add = tuple(tuple(piece_counter(p) * through[s] for s in SQUARES) for p in PIECES)
    every_group = sum(1 << (_SLICE * index) for index in range(len(groups)))
    add_everywhere = tuple(piece_counter(p) * every_group for p in PIECES)
    fours = _fours_bits(attributes) * every_group
    return Variant(advanced, attributes, groups, add, add_everywhere, fours)
