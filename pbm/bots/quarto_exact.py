"""Quarto's endgame solved exactly: a negamax search with alpha-beta on win/draw/loss,
a transposition table and symmetry reduction, on the solver's own bitboards (ten empty
squares in one to two seconds of CPU, nine in a few tenths; docs/bots.md has the figures).

The interface is `QuartoExact(tactics, clock, max_nodes)` with `values` (every move's
exact value) and `solve` (the value and the moves that keep it); the rest is private.

What decides the rest of a game is, for each winning group, which of its squares are
empty and which attribute values all its pieces share (a group that shares none is dead
for good), and which pieces are left. The solver keeps exactly that:

- `common`: 8 bits per group, one per counted attribute value (tall, short, light, ...),
  set while every piece in the group has that value; placing a piece is one AND with a
  precomputed mask. A dead or full group has 0, and a position whose groups all have 0
  is a draw at once.
- `sums`: the rules module's packed counters (pbm/games/quarto_lines.py), which find a
  quarto in one addition and one AND;
- the empty squares and the unused pieces as 16-bit masks, and the held piece.

Symmetry reduction, after the published solutions: Luc Goossens solved Quarto in 1998
(a draw with best play), and Matthew Kerner, "An Exploration of Gameplay in Quarto"
(Yale, 2001), shows the 12,288 transformations of a position that keep its value: 32
maps of the board that keep its groups times 384 permutations and complements of the
attributes, and a normal form under them. This late in a game a normal form saves
next to nothing (the 1,500 first table entries of a ten-empty search fall into 1,492
classes under all 12,288 transformations) and costs far more per position in Python
than a position costs to search, so the solver keys its table by `common` (positions
that differ only in what no longer matters are one entry) and uses the symmetries that
the position at hand has: empty squares that lie in the same live groups are
interchangeable (a placement is tried on one of them), and so are pieces that agree on
every value a live group still shares (one of them is given), at every node and at the
root.

Move ordering by threats: deadly gives (the opponent would make a quarto at once) are
never tried (one AND against the values of the groups with one empty square left);
the placements after which the fewest safe gives are left come first (they bring the
opponent nearest to running out of safe pieces, which is how Quarto is won), then those
that keep the most live groups; among gives, those that share the most values with the
live groups first. Ordering by the safe gives halves the positions searched.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from pbm.bots.exact import OutOfTime
from pbm.bots.tactics import DRAW, LOSS, WIN, Clock, Tactics
from pbm.games.quarto import (
    ATTRIBUTE_BITS,
    EMPTY,
    NONE,
    PIECES,
    SQUARES,
    QuartoMove,
    QuartoState,
    Variant,
)

# The search's values for the player to move: 2 a win, 1 a draw, 0 a loss (negamax: 2 - v).
_WIN, _DRAW, _LOSS = 2, 1, 0
_VALUE = {_WIN: WIN, _DRAW: DRAW, _LOSS: LOSS}
# How often (in nodes) the clock is read.
_CHECK_EVERY = 256
# The table is cleared when it grows past this many positions (memory bound).
_TABLE_LIMIT = 3_000_000
_SLOT = 8  # bits per group in `common`
_COUNTER_SLICE = 24  # bits per group in the rules module's counters (quarto_lines)
_COUNTERS = (1 << _COUNTER_SLICE) - 1


@cache
def _bits(mask: int) -> tuple[int, ...]:
    """The indices of the set bits of a 16-bit mask, lowest first."""
    return tuple(i for i in range(16) if mask >> i & 1)


class _Tables:
    """The solver's masks for one variant (the groups and counted attributes)."""

    def __init__(self, var: Variant) -> None:
        groups = [squares for _, squares in var.groups]
        self.count = len(groups)
        slots = range(self.count)
        counted = [i for i, bit in enumerate(ATTRIBUTE_BITS) if var.attributes & bit]
        # code[p]: the bits of p's values of the counted attributes.
        code = [
            sum(1 << (2 * i + (1 if p & ATTRIBUTE_BITS[i] else 0)) for i in counted) for p in PIECES
        ]
        every_value = sum(3 << (2 * i) for i in counted)
        self.start = sum(every_value << (_SLOT * g) for g in slots)
        through = [[g for g in slots if s in groups[g]] for s in SQUARES]
        # keep[p][s]: ANDed into `common` when p goes on s (p's values in the groups
        # through s, everything elsewhere).
        self.keep = tuple(
            tuple(
                sum((code[p] if g in through[s] else 0xFF) << (_SLOT * g) for g in slots)
                for s in SQUARES
            )
            for p in PIECES
        )
        self.code = tuple(code)
        # on[s]: bit 0 of the slot of every group through s (which live groups hold s).
        self.on = tuple(sum(1 << (_SLOT * g) for g in through[s]) for s in SQUARES)
        self.low_bits = sum(1 << (_SLOT * g) for g in slots)
        self.add, self.every, self.fours = var.add, var.add_everywhere, var.fours
        self.squares = tuple(tuple(groups[g]) for g in slots)
        # slices[s]: the whole counter slice of every group through s.
        self.slices = tuple(
            sum(_COUNTERS << (_COUNTER_SLICE * g) for g in through[s]) for s in SQUARES
        )
        self.opened: dict[int, int] = {}
        self.given: dict[int, tuple[int, ...]] = {}
        self.group_masks = tuple(sum(1 << s for s in g) for g in groups)
        self.lasts = _LastSquares(self.group_masks)

    def live(self, common: int) -> int:
        """Bit 0 of the slot of every group whose pieces still share a value."""
        x = common | common >> 4
        x |= x >> 2
        x |= x >> 1
        return x & self.low_bits

    def open_groups(self, empties: int) -> int:
        """The counters (24 bits per group) of every group with an empty square."""
        found = self.opened.get(empties)
        if found is None:
            found = 0
            for square in _bits(empties):
                found |= self.slices[square]
            self.opened[empties] = found
        return found

    def gives(self, values: int, unused: int) -> tuple[int, ...]:
        """One piece of each class of `unused` (pieces alike in every value of `values`
        are interchangeable), those sharing the most values first (they threaten most)."""
        key = values << 16 | unused
        found = self.given.get(key)
        if found is None:
            classes: dict[int, int] = {}
            for piece in _bits(unused):
                classes.setdefault(self.code[piece] & values, piece)
            order = sorted(classes.items(), key=lambda item: -item[0].bit_count())
            found = tuple(piece for _cls, piece in order)
            self.given[key] = found
        return found


def _shared(common: int) -> int:
    """The attribute values (8 bits) some group of `common` still shares: every slot
    (at most 32 groups) shifted onto the first, as each slot number is a sum of distinct
    powers of two (what lands elsewhere is dropped by the last AND)."""
    common |= common >> 128
    common |= common >> 64
    common |= common >> 32
    common |= common >> 16
    common |= common >> 8
    return common & 0xFF


class _LastSquares(dict[int, int]):
    """empties -> all 8 bits of the slot of every group with exactly one empty square."""

    def __init__(self, group_masks: tuple[int, ...]) -> None:
        super().__init__()
        self.group_masks = group_masks

    def __missing__(self, empties: int) -> int:
        found = 0
        for slot, group in enumerate(self.group_masks):
            if (group & empties).bit_count() == 1:
                found |= 0xFF << (_SLOT * slot)
        self[empties] = found
        return found


@cache
def _tables(var: Variant) -> _Tables:
    return _Tables(var)


class QuartoExact:
    """The exact values of Quarto positions, within a deadline and a node budget."""

    def __init__(self, tactics: Tactics, clock: Clock, max_nodes: int | None = None) -> None:
        # The same construction as the generic `Solver`; the game's tactics are not
        # needed, as everything is on the solver's own bitboards.
        self.clock = clock
        self.max_nodes = max_nodes  # a bound that does not depend on the machine's speed
        self.nodes = 0
        self.table: dict[tuple[int, int, int, int], tuple[int, int]] = {}
        self.proved: dict[QuartoMove, float] = {}  # the root moves' values found so far

    # -- the root ---------------------------------------------------------------------
    def values(
        self, state: QuartoState, moves: Sequence[QuartoMove], *, first_win: bool = False
    ) -> dict[QuartoMove, float] | None:
        """The exact value of each of `moves` for the player to move (1 win, 0.5 draw,
        0 loss); with `first_win`, only up to the first winning move. None when the
        clock or the node budget runs out first (`proved` then holds what was found)."""
        if state.held == EMPTY:
            raise ValueError("the opening give is not searched exactly")
        self.t = t = _tables(state.variant)
        held = state.held
        empties = sum(1 << s for s in state.empties)
        unused = sum(1 << p for p in state.unused)
        common = self._common(state)
        self.proved = {}
        found = self.proved
        classes: dict[tuple[int, int], int] = {}
        try:
            for move in self._root_order(state, moves):
                square, give = move >> 5, move & 31
                sums = state.sums + t.add[held][square]
                if sums & t.fours:
                    value = _WIN
                elif give == NONE:
                    value = _DRAW  # the sixteenth piece, no quarto
                else:
                    after = common & t.keep[held][square]
                    # Equal classes are equal positions: searched once.
                    cls = (t.live(common) & t.on[square], t.code[give] & _shared(after))
                    known = classes.get(cls)
                    if known is None:
                        known = _WIN - self._negamax(
                            sums, after, empties & ~(1 << square), unused & ~(1 << give),
                            give, _LOSS, _WIN,
                        )  # fmt: skip
                        classes.setdefault(cls, known)
                    value = known
                found[move] = _VALUE[value]
                if first_win and value == _WIN:
                    break
        except OutOfTime:
            return None
        return found

    def solve(
        self, state: QuartoState, moves: Sequence[QuartoMove]
    ) -> tuple[float, list[QuartoMove]] | None:
        """The value of `state` for the player to move and the moves among `moves` that
        keep it (one winning move is enough); None when out of time."""
        found = self.values(state, moves, first_win=True)
        if found is None:
            return None
        if not found:
            return LOSS, list(moves)
        best = max(found.values())
        return best, [m for m, v in found.items() if v == best]

    def _common(self, state: QuartoState) -> int:
        t = self.t
        common = t.start
        for square, piece in enumerate(state.board):
            if piece != EMPTY:
                common &= t.keep[piece][square]
        return common

    def _root_order(self, state: QuartoState, moves: Sequence[QuartoMove]) -> list[QuartoMove]:
        """Winning placements first, then the rest as given."""
        t = self.t
        wins = [m for m in moves if (state.sums + t.add[state.held][m >> 5]) & t.fours]
        return wins + [m for m in moves if m not in wins]

    def _three(
        self,
        sums: int,
        squares: tuple[int, ...],
        pieces: tuple[int, ...],
        held_add: tuple[int, ...],
    ) -> int:
        """Three empty squares and two pieces left, no quarto for the held piece: every
        line to the end, written out (cheaper than the table)."""
        add, fours = self.t.add, self.t.fours
        best = _LOSS
        for square in squares:
            after = sums + held_add[square]
            a, b = [e for e in squares if e != square]
            for give, last in ((pieces[0], pieces[1]), (pieces[1], pieces[0])):
                give_add, last_add = add[give], add[last]
                if (after + give_add[a]) & fours or (after + give_add[b]) & fours:
                    continue  # deadly
                if (after + give_add[a] + last_add[b]) & fours and (
                    after + give_add[b] + last_add[a]
                ) & fours:
                    return _WIN  # wherever the opponent puts it, the last piece wins
                best = _DRAW
        return best

    # -- the search -------------------------------------------------------------------
    def _negamax(
        self, sums: int, common: int, empties: int, unused: int, held: int,
        alpha: int, beta: int,
    ) -> int:  # fmt: skip
        """The value for the player who places `held`."""
        self.nodes += 1
        if not self.nodes % _CHECK_EVERY and self.clock.expired():
            raise OutOfTime
        if self.max_nodes is not None and self.nodes > self.max_nodes:
            raise OutOfTime
        t = self.t
        fours = t.fours
        held_add = t.add[held]
        squares = _bits(empties)
        if (sums + t.every[held]) & fours & t.open_groups(empties):
            return _WIN  # a group with one empty square shares a value with the piece
        if len(squares) == 2:
            # The last piece left goes on the last square: a draw unless it wins there
            # wherever the held piece goes (and nothing is searched further).
            last = t.add[unused.bit_length() - 1]
            first, second = squares
            after = sums + held_add[first]
            if not (after + last[second]) & fours:
                return _DRAW
            after = sums + held_add[second]
            return _LOSS if (after + last[first]) & fours else _DRAW
        if len(squares) == 3:
            return self._three(sums, squares, _bits(unused), held_add)
        if not common:
            return _DRAW  # no group can still become a quarto
        key = (common, empties, unused, held)
        low, high = self.table.get(key, (_LOSS, _WIN))
        if low >= beta or low == high:
            return low
        if high <= alpha:
            return high
        if low > alpha:
            alpha = low
        if high < beta:
            beta = high
        start_alpha, start_beta = alpha, beta
        best = _LOSS  # stays a loss if every give is deadly
        keep, on, live_of, gives, code = t.keep[held], t.on, t.live, t.gives, t.code
        lasts, shared = t.lasts, _shared
        live = live_of(common)
        seen_squares: set[int] = set()
        places = []
        for square in squares:
            place_class = live & on[square]
            if place_class in seen_squares:
                continue  # a square in the same live groups as one tried
            seen_squares.add(place_class)
            after_common = common & keep[square]
            rest = empties & ~(1 << square)
            # The values a piece must not have: those shared by a group with one empty
            # square (the opponent would complete it).
            deadly = shared(after_common & lasts[rest])
            safe = gives(shared(after_common), unused)
            if deadly:  # pieces of one class are alike in the deadly values too
                safe = tuple(give for give in safe if not code[give] & deadly)
            if safe:
                after = sums + held_add[square]
                # Fewest safe gives first (they bring the opponent nearest to running
                # out of them), then the most live groups.
                order = (live_of(after_common).bit_count() - (len(safe) << 5), square)
                places.append((order, after, after_common, rest, safe))
        places.sort(reverse=True)
        # With four squares empty, a child (its piece not deadly) is written out at once.
        three = self._three if len(squares) == 4 else None
        add = t.add
        for _order, after, after_common, rest, safe in places:
            for give in safe:
                left = unused & ~(1 << give)
                if three is not None:
                    value = _WIN - three(after, _bits(rest), _bits(left), add[give])
                else:
                    value = _WIN - self._negamax(
                        after, after_common, rest, left, give,
                        _WIN - beta, _WIN - (alpha if alpha > best else best),
                    )  # fmt: skip
                if value > best:
                    best = value
                    if best >= beta:
                        break
            if best >= beta:
                break
        if len(self.table) >= _TABLE_LIMIT:
            self.table.clear()
        if best <= start_alpha:
            self.table[key] = (low, best)
        elif best >= start_beta:
            self.table[key] = (best, high)
        else:
            self.table[key] = (best, best)
        return best
