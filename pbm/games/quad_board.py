"""Bitboard tables for Quad's 8x8 board: steps, custodian captures and exact-four lines.

A set of counters is an int with bit `rank * 8 + file` set for every occupied square
(a1 = bit 0), as in pbm.games.grid. Everything here is computed once at import.
"""

from __future__ import annotations

SIZE = 8
SQUARES = SIZE * SIZE
FULL = (1 << SQUARES) - 1

# Step directions as (file offset, rank offset): north, east, south, west.
DIRECTIONS = ((0, 1), (1, 0), (0, -1), (-1, 0))


def _file_mask(files: range) -> int:
    return sum(1 << (r * SIZE + f) for r in range(SIZE) for f in files)


NOT_FILE_A = _file_mask(range(1, SIZE))
NOT_FILE_H = _file_mask(range(0, SIZE - 1))
# Squares where a horizontal four can start (files a-e), and those whose fifth square
# (start + 4) is still on the same rank (files a-d).
FOUR_STARTS_H = _file_mask(range(0, SIZE - 3))
FIFTH_ON_RANK = _file_mask(range(0, SIZE - 4))
# Squares where a vertical four can start (ranks 1-5).
FOUR_STARTS_V = (1 << (SIZE * (SIZE - 3))) - 1

# The rim: the 28 edge squares (Quad, Mats Winther, version 1.1: "White must always drop
# the second counter on the rim").
RIM = sum(
    1 << sq for sq in range(SQUARES) if sq % SIZE in (0, SIZE - 1) or sq // SIZE in (0, SIZE - 1)
)


def _on_board(file: int, rank: int) -> bool:
    return 0 <= file < SIZE and 0 <= rank < SIZE


def _capture_pairs(square: int) -> tuple[tuple[int, int], ...]:
    """(neighbour, square beyond it) for every direction where both are on the board."""
    file, rank = square % SIZE, square // SIZE
    pairs = []
    for df, dr in DIRECTIONS:
        if _on_board(file + 2 * df, rank + 2 * dr):
            pairs.append(((rank + dr) * SIZE + file + df, (rank + 2 * dr) * SIZE + file + 2 * df))
    return tuple(pairs)


# CAPTURE_PAIRS[to]: the sandwiches a counter arriving on `to` can close. The direction
# back to its origin is included harmlessly: the origin square is empty after the move.
CAPTURE_PAIRS: tuple[tuple[tuple[int, int], ...], ...] = tuple(
    _capture_pairs(sq) for sq in range(SQUARES)
)


def exact_four(counters: int) -> bool:
    """True when the counters hold a line of exactly four in a row or a column.

    A run counts when its four squares are held and the squares just beyond both ends
    are not (an edge counts as "not held"): overlines of five or more never count and
    diagonals are not looked at (Winther's rules: "overlines don't count", "Diagonals don't count").
    """
    b = counters
    run = b & (b >> 1) & (b >> 2) & (b >> 3) & FOUR_STARTS_H
    if run:
        before = (b << 1) & NOT_FILE_A  # bit p: square p-1 on the same rank is held
        after = (b >> 4) & FIFTH_ON_RANK  # bit p: square p+4 on the same rank is held
        if run & ~before & ~after:
            return True
    run = b & (b >> 8) & (b >> 16) & (b >> 24) & FOUR_STARTS_V
    # Below rank 1 and above rank 8 there are no bits, so no masks are needed.
    return bool(run & ~(b << 8) & ~(b >> 32))


def has_step(counters: int, occupied: int) -> bool:
    """True when some counter can step orthogonally to an empty square."""
    empty = ~occupied & FULL
    return bool(
        ((counters << 8) & empty)
        or ((counters >> 8) & empty)
        or (((counters & NOT_FILE_H) << 1) & empty)
        or (((counters & NOT_FILE_A) >> 1) & empty)
    )


# _BYTE_SQUARES[k][v]: the squares of byte k (ranks are bytes) whose bits are set in v.
_BYTE_SQUARES = tuple(
    tuple(tuple(8 * k + i for i in range(8) if v >> i & 1) for v in range(256)) for k in range(SIZE)
)
_R1, _R2, _R3, _R4, _R5, _R6, _R7, _R8 = _BYTE_SQUARES


def squares_of(counters: int) -> list[int]:
    """The occupied square indices, lowest first (a table lookup per rank, for speed)."""
    b = counters
    return [
        *_R1[b & 255],
        *_R2[b >> 8 & 255],
        *_R3[b >> 16 & 255],
        *_R4[b >> 24 & 255],
        *_R5[b >> 32 & 255],
        *_R6[b >> 40 & 255],
        *_R7[b >> 48 & 255],
        *_R8[b >> 56],
    ]
