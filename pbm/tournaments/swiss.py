"""Swiss pairing by maximum-weight matching: no repeat pairings, at most one bye a
player, and within that the pairing that is best by these criteria, each one counting
for more than all those after it together:

1. the bye (odd fields) goes to the lowest-ranked player who has not had one;
2. no player gets a colour three times in a row or a colour difference beyond ±2;
3. players meet their own score group: the largest score difference between two
   opponents is as small as it can be, then as few pairs as possible have it, then the
   same for the next largest difference, and so on (so as few floats as possible);
4. colour preferences: a player whose colours are unbalanced by one gets the other
   colour, then a player gets the colour he did not have last;
5. the Dutch order: the top half of a score group meets its bottom half (1st against
   the first of the bottom half, 2nd against the second, ...), a float is the lowest of
   its group and meets the highest of the group below.

Each pair that has not met is an edge whose integer weight encodes those criteria in a
mixed radix, so `networkx.max_weight_matching` (exact, Edmonds' blossom algorithm in
integers) finds the best pairing of the whole field, and a round fails only when no
pairing without a repeat (or a second bye while someone has had none) exists.

That algorithm takes cubic time in pure Python: over 20 s for 1,000 players even with
only ten candidate opponents each, against 2 s wanted. A field over `EXACT_FIELD`
players is therefore paired in blocks: consecutive score groups up
to `BLOCK` players, a larger group cut into blocks that each hold a slice of its top
half and the matching slice of its bottom half; each block is matched exactly and its
unpaired players float into the next (rather than break criterion 2, except in the
last block). When the last block cannot be completed the blocks are doubled, up to the
exact matching of the whole field, so a large field gives up no earlier than a small one.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from itertools import groupby

import networkx as nx

EXACT_FIELD = 40  # fields up to this size are matched as a whole in one go
BLOCK = 16  # the block size a larger field starts from

# Positions in a cost vector (see _Problem); the score digits come after ABSOLUTE.
INELIGIBLE, UNPAIRED_RANK, ABSOLUTE = 0, 1, 2


class PairingError(ValueError):
    """No pairing of the field avoids every repeat and every second bye (more rounds
    than the field allows)."""


@dataclass(frozen=True)
class SwissPlayer:
    id: Hashable
    points: float = 0.0
    rating: float = 0.0
    colours: str = ""  # colours played so far, oldest first: "W"/"B" ("-" for a bye)
    opponents: frozenset[Hashable] = field(default_factory=frozenset)
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


def _misses(player: SwissPlayer, colour: str) -> tuple[int, int, int]:
    """(absolute, strong, mild): which colour rule giving `player` `colour` breaks."""
    played = player.colours.replace("-", "")
    after = player.colour_difference + (1 if colour == "W" else -1)
    if played[-2:] == colour * 2 or abs(after) > 2:
        return 1, 0, 0
    wanted, strength = player.preference()
    if wanted is None or wanted == colour:
        return 0, 0, 0
    return 0, int(strength == 2), int(strength == 1)


def _dutch_colours(a: SwissPlayer, b: SwissPlayer) -> tuple[SwissPlayer, SwissPlayer]:
    """(white, black) by the players' wishes; `a` is the higher-ranked player."""
    pa, sa = a.preference()
    pb, sb = b.preference()
    if pa != pb:
        if pa == "W" or pb == "B":
            return a, b
        if pa == "B" or pb == "W":
            return b, a
    if sa != sb:
        stronger, wants = (a, pa) if sa > sb else (b, pb)
        other = b if stronger is a else a
        return (stronger, other) if wants == "W" else (other, stronger)
    # Equal wishes: alternate from the last round in which their colours differed.
    for ca, cb in zip(reversed(a.colours), reversed(b.colours), strict=False):
        if ca != cb and "-" not in (ca, cb):
            return (a, b) if ca == "B" else (b, a)
    if pa == "B":
        return b, a
    return a, b


class _Field:
    """The ranked field of one round: ranks and score groups, shared by its problems."""

    def __init__(self, ranked: list[SwissPlayer]) -> None:
        self.ranked = ranked
        self.rank = {p.id: i for i, p in enumerate(ranked)}
        self.groups = [list(g) for _, g in groupby(ranked, key=lambda p: p.points)]
        self.place: dict[Hashable, tuple[int, int]] = {}  # id -> (position, group size)
        for group in self.groups:
            for i, p in enumerate(group):
                self.place[p.id] = (i, len(group))
        # A second bye only when everyone has had one (possible after withdrawals).
        self.bye_for_all = all(p.had_bye for p in ranked)
        # What each colour would cost each player, asked for every pair he could play.
        self.misses = {p.id: {c: _misses(p, c) for c in "WB"} for p in ranked}

    def colours(
        self, a: SwissPlayer, b: SwissPlayer
    ) -> tuple[SwissPlayer, SwissPlayer, tuple[int, int, int]]:
        """(white, black, colour misses) for a pair, `a` the higher-ranked: the way that
        breaks the fewest colour rules (absolute first), their wishes deciding ties."""
        ma, mb = self.misses[a.id], self.misses[b.id]
        wb = (ma["W"][0] + mb["B"][0], ma["W"][1] + mb["B"][1], ma["W"][2] + mb["B"][2])
        bw = (ma["B"][0] + mb["W"][0], ma["B"][1] + mb["W"][1], ma["B"][2] + mb["W"][2])
        if wb < bw:
            return a, b, wb
        if bw < wb:
            return b, a, bw
        white, black = _dutch_colours(a, b)
        return white, black, wb

    def order_cost(self, a: SwissPlayer, b: SwissPlayer) -> int:
        """Distance from the Dutch order, at most 3 times the field; `a` ranks higher.

        Within a group of g the k-th of the top half should meet the k-th of the bottom
        half, g/2 places down; two players of the same half cost more than any such
        distance, so a pair is first swapped within the bottom half (the Dutch
        transposition) before two halves exchange players. A float should be the lowest
        of its group and meet the highest of the group below.
        """
        (ia, ga), (ib, _) = self.place[a.id], self.place[b.id]
        if a.points == b.points:
            same_half = (ia < ga // 2) == (ib < ga // 2)
            return abs(2 * (ib - ia) - ga) + 2 * ga * same_half
        return (ga - 1 - ia) + ib


class _Problem:
    """One maximum-weight matching over `players` (a whole field or one block).

    A cost vector is compared digit by digit, the first digit the most important:
    INELIGIBLE and UNPAIRED_RANK cost a player left unpaired (one who has had a bye,
    then the rank counted from the bottom, so the lowest-ranked is left out), then the
    absolute colour misses, one digit per score difference present (the largest first)
    counting the pairs that have it, the strong and the mild colour misses, and the
    distance from the Dutch order. Each digit's radix exceeds the largest total a
    matching can reach in it, so the integer encoding adds up without carries and
    orders matchings exactly as the vectors do.
    """

    def __init__(
        self, field_: _Field, players: list[SwissPlayer], *, absolute_colours: bool = False
    ) -> None:
        self.field = field_
        self.players = players
        self.edges = [
            (i, j)
            for i, a in enumerate(players)
            for j in range(i + 1, len(players))
            if players[j].id not in a.opponents
            and a.id not in players[j].opponents
            and not (absolute_colours and field_.colours(a, players[j])[2][0])
        ]
        diffs = {abs(players[i].points - players[j].points) for i, j in self.edges} - {0.0}
        self.score_digit = {d: ABSOLUTE + 1 + k for k, d in enumerate(sorted(diffs, reverse=True))}
        n, whole = len(players), len(field_.ranked)
        self.size = ABSOLUTE + 1 + len(diffs) + 3
        self.radix = (
            [n + 1, n * whole + 1, n + 1]
            + [n // 2 + 1] * len(diffs)
            + [
                n + 1,
                n + 1,
                n * 2 * whole + 1,  # n/2 pairs of at most 3 * whole each
            ]
        )
        self.unit = [1] * self.size
        for k in range(self.size - 2, -1, -1):
            self.unit[k] = self.unit[k + 1] * self.radix[k + 1]
        self.top = self.unit[0] * self.radix[0]  # more than any matching's cost

    def pair_cost(self, a: SwissPlayer, b: SwissPlayer) -> list[int]:
        """The cost vector of pairing `a` with `b` (either order)."""
        if self.field.rank[a.id] > self.field.rank[b.id]:
            a, b = b, a
        cost = [0] * self.size
        absolute, strong, mild = self.field.colours(a, b)[2]
        cost[ABSOLUTE] = absolute
        if a.points != b.points:
            cost[self.score_digit[abs(a.points - b.points)]] = 1
        cost[-3], cost[-2], cost[-1] = strong, mild, self.field.order_cost(a, b)
        return cost

    def unpaired_cost(self, p: SwissPlayer) -> list[int]:
        """The cost vector of leaving `p` unpaired (the bye, or a float out of a block)."""
        cost = [0] * self.size
        cost[INELIGIBLE] = int(p.had_bye and not self.field.bye_for_all)
        cost[UNPAIRED_RANK] = len(self.field.ranked) - 1 - self.field.rank[p.id]
        return cost

    def encode(self, cost: list[int]) -> int:
        return sum(c * u for c, u in zip(cost, self.unit, strict=True))

    def solve(self) -> tuple[list[tuple[SwissPlayer, SwissPlayer]], list[SwissPlayer]]:
        """The best matching with the most pairs: (pairs, players left unpaired)."""
        players = self.players
        spare = [self.encode(self.unpaired_cost(p)) for p in players]
        graph: nx.Graph[int] = nx.Graph()
        graph.add_nodes_from(range(len(players)))
        # Leaving a player unpaired costs his `spare`, so pairing him earns it back.
        graph.add_weighted_edges_from(
            (i, j, self.top + spare[i] + spare[j] - self.encode(self.pair_cost(a, b)))
            for i, j in self.edges
            for a, b in [(players[i], players[j])]
        )
        matching = nx.max_weight_matching(graph, maxcardinality=True)
        paired = {i for edge in matching for i in edge}
        pairs = [(players[i], players[j]) for i, j in matching]
        return pairs, [p for i, p in enumerate(players) if i not in paired]


def _pieces(field_: _Field, players: list[SwissPlayer], block: int) -> list[list[SwissPlayer]]:
    """`players` cut into blocks of about `block` along the score groups (see above)."""
    keep = {p.id for p in players}
    pieces: list[list[SwissPlayer]] = []
    current: list[SwissPlayer] = []
    for whole_group in field_.groups:
        group = [p for p in whole_group if p.id in keep]
        if len(group) <= block:
            if current and len(current) + len(group) > block:
                pieces.append(current)
                current = []
            current += group
            continue
        if current:
            pieces.append(current)
            current = []
        # Slice k of the top half goes with slice k of the bottom half, so each block
        # holds the opponents the Dutch order gives its players.
        top, bottom = group[: len(group) // 2], group[len(group) // 2 :]
        count = -(-len(group) // block)
        for k in range(count):
            pieces.append(
                top[k * len(top) // count : (k + 1) * len(top) // count]
                + bottom[k * len(bottom) // count : (k + 1) * len(bottom) // count]
            )
    if current:
        pieces.append(current)
    return pieces


def _pair_in_blocks(
    field_: _Field, players: list[SwissPlayer], block: int
) -> list[tuple[SwissPlayer, SwissPlayer]] | None:
    """Pairs for all of `players` block by block, or None if the last block fails."""
    pairs: list[tuple[SwissPlayer, SwissPlayer]] = []
    floats: list[SwissPlayer] = []
    pieces = _pieces(field_, players, block)
    for k, piece in enumerate(pieces):
        # A player floats on rather than break an absolute colour rule, but in the
        # last block nobody is left to float to.
        last = k == len(pieces) - 1
        found, floats = _Problem(field_, floats + piece, absolute_colours=not last).solve()
        pairs += found
    return None if floats else pairs


def _pair_whole(field_: _Field) -> tuple[list[tuple[SwissPlayer, SwissPlayer]], SwissPlayer | None]:
    """The best pairing of the whole field and its bye, or PairingError."""
    pairs, unpaired = _Problem(field_, field_.ranked).solve()
    if len(unpaired) > 1 or (unpaired and unpaired[0].had_bye and not field_.bye_for_all):
        raise PairingError("no pairing avoids a repeat: the field has run out of opponents")
    return pairs, unpaired[0] if unpaired else None


def _rank(players: Sequence[SwissPlayer]) -> _Field:
    """The field ranked by points, then rating, then the order given (the seeding)."""
    seed = {p.id: i for i, p in enumerate(players)}
    return _Field(sorted(players, key=lambda p: (-p.points, -p.rating, seed[p.id])))


def pair_round(players: Sequence[SwissPlayer]) -> SwissRound:
    """Pair one Swiss round of the active `players` (withdrawn players left out)."""
    if len(players) < 2:
        raise PairingError("a Swiss round needs at least two players")
    field_ = _rank(players)
    ranked = field_.ranked
    found: list[tuple[SwissPlayer, SwissPlayer]] | None = None
    bye: SwissPlayer | None = None
    if len(ranked) > EXACT_FIELD:
        if len(ranked) % 2:
            bye = next((p for p in reversed(ranked) if not p.had_bye), ranked[-1])
        rest = [p for p in ranked if p is not bye]
        block = BLOCK
        while found is None and block < len(rest):
            found = _pair_in_blocks(field_, rest, block)
            block *= 2
    if found is None:
        found, bye = _pair_whole(field_)
    rank = field_.rank
    ordered = [
        field_.colours(a, b)[:2] if rank[a.id] < rank[b.id] else field_.colours(b, a)[:2]
        for a, b in sorted(found, key=lambda ab: min(rank[ab[0].id], rank[ab[1].id]))
    ]
    return SwissRound([(w.id, b.id) for w, b in ordered], None if bye is None else bye.id)
