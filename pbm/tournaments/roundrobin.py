"""Round robin by Berger tables (the FIDE tables: the last player is fixed and
alternates colours; the others rotate), single or double."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeAlias, TypeVar

P = TypeVar("P", bound=Hashable)  # a player, as the caller names them (a user id)
Pairing: TypeAlias = tuple[P, P | None]  # (first/white, second/black); None = bye


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


def round_robin(players: Sequence[P], *, double: bool = False) -> list[list[Pairing[P]]]:
    """Every round's pairings for `players` in seeding order; an odd field gets a bye
    each round (the player paired with None sits out). A double round robin repeats
    the cycle with colours reversed."""
    seats: list[P | None] = list(players)
    if len(seats) < 2:
        raise ValueError("a round robin needs at least two players")
    if len(seats) % 2:
        seats.append(None)
    cycle = []
    for games in berger_rounds(len(seats)):
        pairs: list[Pairing[P]] = []
        for white, black in games:
            a, b = seats[white - 1], seats[black - 1]
            if a is not None:
                pairs.append((a, b))  # b None: a sits out
            elif b is not None:
                pairs.append((b, None))
        cycle.append(pairs)
    if double:
        cycle += [[(b, a) if b is not None else (a, None) for a, b in rnd] for rnd in cycle]
    return cycle
