"""Single-elimination brackets: standard seeding (1 meets the lowest seed, the top two
seeds can meet only in the final) with byes to the top seeds."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace
from typing import TypeVar

from pbm.tournaments.standings import Row

P = TypeVar("P", bound=Hashable)  # a player, as the caller names them (a user id)


def seed_order(size: int) -> list[int]:
    """Seed numbers (1-based) in bracket order for a power-of-two `size`."""
    if size < 1 or size & (size - 1):
        raise ValueError("a bracket size is a power of two")
    order = [1]
    while len(order) < size:
        total = len(order) * 2 + 1
        order = [x for seed in order for x in (seed, total - seed)]
    return order


def first_round(players: Sequence[P]) -> list[tuple[P, P | None]]:
    """First-round pairings of `players` (in seeding order); None marks a bye."""
    if len(players) < 2:
        raise ValueError("a knockout needs at least two players")
    size = 1
    while size < len(players):
        size *= 2
    order = seed_order(size)
    # Each match pairs a top-half seed, always a player (the field fills more than half
    # the bracket), with a bottom-half seed or a bye.
    return [
        (players[top - 1], players[bottom - 1] if bottom <= len(players) else None)
        for top, bottom in zip(order[::2], order[1::2], strict=True)
    ]


def next_round(winners: Sequence[P]) -> list[tuple[P, P]]:
    """Pair the previous round's winners in bracket order (winner of match 1 meets the
    winner of match 2, and so on)."""
    if len(winners) < 2 or len(winners) % 2:
        raise ValueError("a knockout round needs an even number of winners")
    return [(winners[i], winners[i + 1]) for i in range(0, len(winners), 2)]


def by_round_reached(rows: Sequence[Row[P]], reached: Mapping[P, tuple[int, bool]]) -> list[Row[P]]:
    """A knockout's table: ranked by how far each player came (the last round he played,
    and whether he is still in, so the winner of the final comes before its loser), those
    out in the same round sharing a rank; the points order them within it. Points alone
    would put an early loser who had a bye above a player who won his first match."""
    ordered = sorted(rows, key=lambda r: reached[r.player], reverse=True)  # stable: points
    return [
        replace(r, rank=1 + sum(reached[o.player] > reached[r.player] for o in rows))
        for r in ordered
    ]
