"""Tournament standings: points (win 1, draw 1/2, bye 1) with the tie-breaks
Sonneborn-Berger and Buchholz, in that order, then the seeding order."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

BYE_POINTS = 1.0

P = TypeVar("P", bound=Hashable)  # a player, as the caller names them (a user id)


# Not slots=True: on Python 3.11 a frozen slots dataclass that is also Generic fails when
# built through a subscripted class (`Result[int](...)`).
@dataclass(frozen=True)
class Result(Generic[P]):
    """One finished pairing: `score` is `first`'s (1, 0.5 or 0); `second` None = a bye."""

    first: P
    second: P | None
    score: float


@dataclass(frozen=True)
class Row(Generic[P]):
    rank: int
    player: P
    points: float
    sonneborn_berger: float
    buchholz: float
    wins: int
    draws: int
    losses: int
    byes: int


def standings(players: Sequence[P], results: Iterable[Result[P]]) -> list[Row[P]]:
    """The table for `players` (seeding order breaks the last ties); equal rows share a rank.

    Buchholz sums the opponents' points; Sonneborn-Berger sums the points of the
    opponents beaten and half those of the opponents drawn. A bye counts its point but
    adds nothing to either tie-break (it has no opponent to weigh).
    """
    points: dict[P, float] = defaultdict(float)
    games: dict[P, list[tuple[P, float]]] = defaultdict(list)
    tally: dict[P, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for r in results:
        if r.second is None:
            points[r.first] += BYE_POINTS
            tally[r.first][3] += 1
            continue
        points[r.first] += r.score
        points[r.second] += 1.0 - r.score
        games[r.first].append((r.second, r.score))
        games[r.second].append((r.first, 1.0 - r.score))
        for who, s in ((r.first, r.score), (r.second, 1.0 - r.score)):
            tally[who][0 if s == 1.0 else 1 if s == 0.5 else 2] += 1
    seed = {p: i for i, p in enumerate(players)}
    keyed = []
    for p in players:
        buchholz = sum(points[o] for o, _ in games[p])
        sb = sum(points[o] * s for o, s in games[p])
        keyed.append((-points[p], -sb, -buchholz, seed[p], p, buchholz, sb))
    keyed.sort(key=lambda k: k[:4])
    rows: list[Row[P]] = []
    for i, (neg_pts, neg_sb, neg_bh, _, p, bh, sb) in enumerate(keyed):
        if rows and (neg_pts, neg_sb, neg_bh) == (
            -rows[-1].points,
            -rows[-1].sonneborn_berger,
            -rows[-1].buchholz,
        ):
            rank = rows[-1].rank
        else:
            rank = i + 1
        w, d, lo, b = tally[p]
        rows.append(Row(rank, p, points[p], sb, bh, w, d, lo, b))
    return rows
