"""Round robin by Berger tables (the FIDE tables: the last player is fixed and
alternates colours; the others rotate), single or double."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

Pairing = tuple[Hashable, Hashable | None]  # (first/white, second/black); None = bye


def berger_rounds(count: int) -> list[list[tuple[int, int]]]:
    """Berger tables for `count` (even) seats numbered 1..count: rounds of (white, black)."""
    if count < 2 or count % 2:
        raise ValueError("Berger tables need an even number of seats (add a bye)")
    m = count - 1
    half = count // 2
    rounds = []
    for r in range(m):
        p = (r * half) % m + 1
        # The fixed seat plays the rotating seat p, with White on even rounds for p.
        games = [(p, count) if r % 2 == 0 else (count, p)]
        for k in range(1, half):
            white = (p + k - 1) % m + 1
            black = (p - k - 1) % m + 1
            games.append((white, black))
        rounds.append(games)
    return rounds


def round_robin(players: Sequence[Hashable], *, double: bool = False) -> list[list[Pairing]]:
    """Every round's pairings for `players` in seeding order; an odd field gets a bye
    each round (the player paired with None sits out). A double round robin repeats
    the cycle with colours reversed."""
    seats: list[Hashable | None] = list(players)
    if len(seats) < 2:
        raise ValueError("a round robin needs at least two players")
    if len(seats) % 2:
        seats.append(None)
    cycle = []
    for games in berger_rounds(len(seats)):
        pairs: list[Pairing] = []
        for white, black in games:
            a, b = seats[white - 1], seats[black - 1]
            if a is None:
                pairs.append((b, None))
            elif b is None:
                pairs.append((a, None))
            else:
                pairs.append((a, b))
        cycle.append(pairs)
    if double:
        cycle += [[(b, a) if b is not None else (a, None) for a, b in rnd] for rnd in cycle]
    return cycle
