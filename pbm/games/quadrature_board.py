"""Quadrature's board arithmetic: bitboards, squares (rectangles), moves, conversions.

Each side's men are one int with 12 bits per rank (11 files and a guard bit that is
always zero), so a whole army steps with one shift and a rank that holds any man is
found with one addition (the carry lands in the guard bit). Bit `rank * 12 + file`
is the point; a1 is bit 0, Black starts on rank 3 and moves up, White on rank 9 and
moves down (docs/games/quadrature.md, 'Rules as pbm plays them'). Nothing here knows
about text.
"""

from __future__ import annotations

SIZE = 11
STRIDE = 12
ROW_BITS = (1 << SIZE) - 1  # the 11 point bits of one rank
REPEAT = sum(1 << (STRIDE * r) for r in range(SIZE))  # bit 0 of every rank
BOARD = ROW_BITS * REPEAT  # every point, no guard bits
GUARDS = (1 << SIZE) * REPEAT  # the guard bit of every rank
RANK = tuple(ROW_BITS << (STRIDE * r) for r in range(SIZE))
FILE = tuple(REPEAT << f for f in range(SIZE))

BLACK, WHITE = 0, 1
PASS = -1  # the move of a player with no legal move (Quadrature rules, Mark Steere 2006)
MEN = 16  # each side owns 16 men; the ones not on the board are its reserve
LOSING_COUNT = 2  # a side with this many men or fewer on the board has lost

# Starting ranks b..j (the help page's diagram): Black on rank 3, White on rank 9.
START_BLACK = (ROW_BITS & ~1 & ~(1 << 10)) << (STRIDE * 2)
START_WHITE = (ROW_BITS & ~1 & ~(1 << 10)) << (STRIDE * 8)

# Home plates (help page, "OBJECT": "the three points in the middle of his side"): e1-g1
# and e11-g11.
PLATE = (0b1110000 << 0, 0b1110000 << (STRIDE * 10))  # indexed by the plate's owner


def bit(file: int, rank: int) -> int:
    return 1 << (rank * STRIDE + file)


def point(index: int) -> tuple[int, int]:
    """(file, rank) of a bit index."""
    return index % STRIDE, index // STRIDE


def bits(mask: int) -> list[int]:
    """Bit indices of `mask`, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def count(mask: int) -> int:
    return mask.bit_count()


def squared_by(own: int, enemy: int, index: int) -> int:
    """Enemy men that, with the own man at `index` and two more own men, are the corners
    of an axis-parallel rectangle (help page, "SQUARING": "a rectangle ... with three of
    your checkers and one enemy checker"; of any size, as in Steere's 2006 rules)."""
    x, y = index % STRIDE, index // STRIDE
    others_in_rank = (own >> (STRIDE * y)) & ROW_BITS & ~(1 << x)
    others_in_file = own & FILE[x] & ~RANK[y]
    ranks_of_file = (others_in_file >> x) * ROW_BITS  # whole ranks holding an own (x, y2)
    files_of_rank = others_in_rank * REPEAT  # whole files holding an own (x2, y)
    # The enemy on the corner opposite `index`.
    found = enemy & ranks_of_file & files_of_rank
    # The enemy in the same file: own men at (x2, y) and (x2, y2).
    pairs = own & files_of_rank & ~RANK[y]
    if pairs:
        found |= enemy & (_ranks_held(pairs) << x)
    # The enemy in the same rank: own men at (x, y2) and (x2, y2).
    pairs = own & ranks_of_file & ~FILE[x]
    if pairs:
        found |= enemy & (_files_held(pairs) << (STRIDE * y))
    return found


def _ranks_held(mask: int) -> int:
    """Bit 0 of every rank where `mask` has a point: the carry of +0x7FF lands in the
    guard bit only for a non-empty rank."""
    return ((mask + ROW_BITS * REPEAT) & GUARDS) >> SIZE


def _files_held(mask: int) -> int:
    """The 11-bit set of files where `mask` has a point (all ranks folded onto rank 1)."""
    mask |= mask >> (STRIDE * 8)
    mask |= mask >> (STRIDE * 4)
    mask |= mask >> (STRIDE * 2)
    mask |= mask >> STRIDE
    return mask & ROW_BITS


def danger(enemy: int) -> int:
    """Points where a man of the other side would complete a square of `enemy`: moving
    there is suicide (help page, "NO SUICIDE MOVES": "no matter what", so the check comes
    before any conversion)."""
    if _files_held(enemy).bit_count() == enemy.bit_count():
        return 0  # no file holds two enemy men, so no rectangle has three enemy corners
    ranks = []
    held = _ranks_held(enemy)
    while held:
        low = held & -held
        held ^= low
        r = (low.bit_length() - 1) // STRIDE
        ranks.append((r, (enemy >> (STRIDE * r)) & ROW_BITS))
    points = 0
    for i, (r1, row1) in enumerate(ranks):
        for r2, row2 in ranks[i + 1 :]:
            shared = row1 & row2
            if not shared:
                continue
            if shared & (shared - 1):  # two shared files: every file of the other rank works
                points |= (row2 << (STRIDE * r1)) | (row1 << (STRIDE * r2))
            else:
                points |= ((row2 & ~shared) << (STRIDE * r1)) | ((row1 & ~shared) << (STRIDE * r2))
    return points & ~enemy


# (shift, is sideways) of each step direction; positive shifts move up the board.
STEPS = (
    ((STRIDE, False), (STRIDE - 1, False), (STRIDE + 1, False), (1, True), (-1, True)),
    ((-STRIDE, False), (-STRIDE + 1, False), (-STRIDE - 1, False), (1, True), (-1, True)),
)

# Moves of one rank of targets, by (direction, rank, 11-bit targets), filled on demand:
# listing a rank's moves in one lookup is faster than visiting its bits one by one. At
# most 10 directions x 11 ranks x 2048 rows, so the table stays bounded.
_RANK_MOVES: dict[int, tuple[int, ...]] = {}


def _rank_moves(shift: int, rank: int, row: int) -> tuple[int, ...]:
    key = (shift + STRIDE + 1) << 15 | rank << 11 | row
    found = _RANK_MOVES.get(key)
    if found is None:
        base = rank * STRIDE
        found = tuple((base + f - shift) << 8 | (base + f) for f in range(SIZE) if row >> f & 1)
        _RANK_MOVES[key] = found
    return found


def generate(own: int, enemy: int, side: int, marker: int) -> list[int]:
    """Every legal step of `side` as `from << 8 | to` (bit indices), without passes.

    A man steps one point forward, diagonally forward or sideways to an empty point
    (help page, "BASIC MOVES AND THE MARKER"), never onto a point that completes an enemy
    square; at marker 2 a sideways step is legal only if it converts (same section).
    """
    free = BOARD & ~(own | enemy) & ~danger(enemy)
    moves: list[int] = []
    table = _RANK_MOVES
    for shift, sideways in STEPS[side]:
        targets = ((own << shift) if shift > 0 else (own >> -shift)) & free
        if not targets:
            continue
        if sideways and marker >= 2:
            while targets:
                low = targets & -targets
                targets ^= low
                to = low.bit_length() - 1
                if squared_by(own ^ (1 << (to - shift)) ^ low, enemy, to):
                    moves.append((to - shift) << 8 | to)
            continue
        held = ((targets + ROW_BITS * REPEAT) & GUARDS) >> SIZE  # as _ranks_held, inlined
        key_base = (shift + STRIDE + 1) << 15
        while held:
            low = held & -held
            held ^= low
            rank = (low.bit_length() - 1) // STRIDE
            row = (targets >> (rank * STRIDE)) & ROW_BITS
            found = table.get(key_base | rank << 11 | row)
            moves += found if found is not None else _rank_moves(shift, rank, row)
    return moves


def play(own: int, enemy: int, frm: int, to: int) -> tuple[int, int, list[int], list[int]]:
    """Move a man and resolve the chain reaction (help page, "chain-reaction": until
    nothing changes, as docs/games/quadrature.md, 'Rules as pbm plays them' says).

    Returns the new own and enemy men, the points converted in the order they were
    converted, and the points whose enemy man was removed without replacement because
    the reserve ran out (only possible once the enemy is beaten: docs/games/quadrature.md,
    'Rules as pbm plays them', "Reserve").
    """
    own ^= (1 << frm) | (1 << to)
    reserve = MEN - count(own)
    converted: list[int] = []
    removed: list[int] = []
    # Men moved or added this turn: only they form squares (help page: "you must form the
    # square during your current turn").
    active = [to]
    while active:
        hit = squared_by(own, enemy, active.pop(0))
        while hit:
            low = hit & -hit
            hit ^= low
            if not enemy & low:
                continue
            enemy ^= low
            index = low.bit_length() - 1
            if reserve:
                reserve -= 1
                own |= low
                converted.append(index)
                active.append(index)
            else:
                removed.append(index)
    return own, enemy, converted, removed
