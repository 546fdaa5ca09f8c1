"""Swiss pairing: score brackets paired top half against bottom half (the Dutch
system's shape), no repeat pairings, colour preferences honoured, one bye a player.

This is a practical subset of the FIDE Dutch rules, chosen so a 1,000-player round
pairs in well under a second: brackets are paired by a depth-first search that tries
the Dutch-preferred opponent first, floats the lowest players down when a bracket
cannot be completed, and merges the last brackets when the bottom one cannot be paired.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from itertools import groupby


class PairingError(ValueError):
    """No pairing of the field avoids every repeat (more rounds than the field allows)."""


@dataclass(frozen=True)
class SwissPlayer:
    id: Hashable
    points: float = 0.0
    rating: float = 0.0
    colours: str = ""  # colours played so far, oldest first: "W"/"B" ("-" for a bye)
    opponents: frozenset = field(default_factory=frozenset)
    had_bye: bool = False

    @property
    def colour_difference(self) -> int:
        return self.colours.count("W") - self.colours.count("B")

    def preference(self) -> tuple[str | None, int]:
        """(colour wanted, strength): 3 absolute, 2 strong, 1 mild, 0 none."""
        played = self.colours.replace("-", "")
        cd = self.colour_difference
        if cd <= -2 or played[-2:] == "BB":
            return "W", 3
        if cd >= 2 or played[-2:] == "WW":
            return "B", 3
        if cd == -1:
            return "W", 2
        if cd == 1:
            return "B", 2
        if played:
            return ("B" if played[-1] == "W" else "W"), 1
        return None, 0


@dataclass(frozen=True)
class SwissRound:
    pairs: list[tuple[Hashable, Hashable]]  # (white, black)
    bye: Hashable | None


def _compatible(a: SwissPlayer, b: SwissPlayer) -> bool:
    if b.id in a.opponents:
        return False
    pa, sa = a.preference()
    pb, sb = b.preference()
    # Two players who must both have the same colour cannot meet.
    return not (sa == 3 and sb == 3 and pa == pb)


def _colours(a: SwissPlayer, b: SwissPlayer) -> tuple[Hashable, Hashable]:
    """(white, black) for a pair; `a` is the higher-ranked player."""
    pa, sa = a.preference()
    pb, sb = b.preference()
    if pa != pb:
        if pa == "W" or pb == "B":
            return a.id, b.id
        if pa == "B" or pb == "W":
            return b.id, a.id
    if sa != sb:
        stronger, wants = (a, pa) if sa > sb else (b, pb)
        other = b if stronger is a else a
        return (stronger.id, other.id) if wants == "W" else (other.id, stronger.id)
    # Equal wishes: alternate from the last round in which their colours differed.
    for ca, cb in zip(reversed(a.colours), reversed(b.colours), strict=False):
        if ca != cb and "-" not in (ca, cb):
            return (a.id, b.id) if ca == "B" else (b.id, a.id)
    if pa == "B":
        return b.id, a.id
    return a.id, b.id


class _Budget:
    def __init__(self, nodes: int) -> None:
        self.left = nodes

    def spend(self) -> bool:
        self.left -= 1
        return self.left >= 0


def _pair_bracket(bracket: list[SwissPlayer], floats: int, budget: _Budget):
    """Pairs for a bracket (in ranking order) leaving exactly `floats` players unpaired,
    or None. Dutch preference: the top player meets the top of the bottom half first."""

    def dfs(rest: list[SwissPlayer], floats_left: int):
        if not budget.spend():
            return None
        if len(rest) == floats_left:
            return [], list(rest)
        if len(rest) < floats_left:
            return None
        top = rest[0]
        half = len(rest) // 2
        order = list(range(max(half, 1), len(rest))) + list(range(half - 1, 0, -1))
        for i in order:
            other = rest[i]
            if _compatible(top, other):
                sub = dfs(rest[1:i] + rest[i + 1 :], floats_left)
                if sub is not None:
                    return [(top, other), *sub[0]], sub[1]
        if floats_left:
            sub = dfs(rest[1:], floats_left - 1)
            if sub is not None:
                return sub[0], [top, *sub[1]]
        return None

    return dfs(bracket, floats)


def _pair_field(ranked: list[SwissPlayer], node_budget: int) -> list[tuple[SwissPlayer, ...]]:
    groups = [list(g) for _, g in groupby(ranked, key=lambda p: p.points)]
    while True:
        pairs: list[tuple[SwissPlayer, SwissPlayer]] = []
        floaters: list[SwissPlayer] = []
        failed = False
        for gi, group in enumerate(groups):
            bracket = floaters + group
            last = gi == len(groups) - 1
            result = None
            budget = _Budget(node_budget)
            for floats in [0] if last else range(len(bracket) % 2, len(bracket) + 1, 2):
                result = _pair_bracket(bracket, floats, budget)
                if result is not None:
                    break
            if result is None:
                failed = True
                break
            pairs += result[0]
            floaters = result[1]
        if not failed:
            return pairs
        if len(groups) == 1:
            raise PairingError("no pairing avoids a repeat: the field has run out of opponents")
        # The bottom could not be completed: merge the last two brackets and try again.
        groups = [*groups[:-2], groups[-2] + groups[-1]]


def pair_round(players: Sequence[SwissPlayer], *, node_budget: int = 20_000) -> SwissRound:
    """Pair one Swiss round of the active `players` (withdrawn players left out)."""
    if len(players) < 2:
        raise PairingError("a Swiss round needs at least two players")
    seed = {p.id: i for i, p in enumerate(players)}
    ranked = sorted(players, key=lambda p: (-p.points, -p.rating, seed[p.id]))
    candidates: list[SwissPlayer | None] = [None]
    if len(ranked) % 2:
        # The bye goes to the lowest-ranked player who has not had one.
        candidates = [p for p in reversed(ranked) if not p.had_bye][:8] or [ranked[-1]]
    last_error: PairingError | None = None
    for bye in candidates:
        field_ = [p for p in ranked if p is not bye]
        try:
            pairs = _pair_field(field_, node_budget)
        except PairingError as exc:
            last_error = exc
            continue
        rank = {p.id: i for i, p in enumerate(ranked)}
        ordered = []
        for a, b in sorted(pairs, key=lambda pq: min(rank[pq[0].id], rank[pq[1].id])):
            ordered.append(_colours(a, b) if rank[a.id] < rank[b.id] else _colours(b, a))
        return SwissRound(ordered, None if bye is None else bye.id)
    raise last_error or PairingError("no pairing found")
