"""Quarto's endgame solved exactly: two boolean searches ("can the player to move force
a win?", "must the player to move lose?") with transposition tables and symmetry
reduction, on the solver's own bitboards (docs/bots.md has the figures).

The interface is `QuartoExact(tactics, clock, max_nodes)` with `values` (every move's
exact value) and `solve` (the value and the moves that keep it); the rest is private.

Values in three steps, as null-window searches: a move loses if the opponent can then
force a win (`_Search.wins`), wins if the opponent must then lose (`_Search.loses`), and
draws otherwise. Each search answers yes or no, so a node stops at its first proof (a
winning move, a move that escapes), and its table stores one bit per position.

What decides the rest of a game is, for each winning group, which of its squares are
empty and which attribute values all its pieces share (a group that shares none is dead
for good), and which pieces are left. The solver keeps exactly that, as integers:

- `common`: 8 bits per group, one per counted attribute value (tall, short, light, ...),
  set while every piece in the group has that value; placing a piece is one AND with a
  precomputed mask. A dead or full group has 0, and a position whose groups all have 0
  is a draw at once.
- the empty squares and the unused pieces as 16-bit masks, and the held piece; the
  table's key is these four packed into one integer.

A give is deadly when a group with one empty square left shares a value with the piece:
the slots of those groups map to the 16-bit mask of deadly pieces (a dict filled as
they are met; folding the slots into 8 values and a table of 256 masks fill it), so the
safe gives are one AND NOT. Deadly gives are never searched, and a player left with
none loses. The tables start at six empty squares. Five squares, the positions met most
(about two thirds of the time from ten), are searched by one method with the four
squares' search written out inside it; four squares without table or ordering; three
and two written out with precomputed masks (a piece completes a group on a square, the
other still empty; a piece on one square, then the last piece on the other, completes
one). A placement reads the empty squares it leaves and the groups then left with one
empty square, with its square, from one table by the empty squares (`splits`), and
the three squares' search its turns and pairs of squares by one subscript each. Each
search also reads the other's table (a position that can be won has an escape; a lost
one cannot be won), and from eight squares on a node first looks its children up in
both tables: a subtree proved on another path is not searched again.

At the root the wins come first (a move wins if the opponent must lose, refuted by one
escape: about a tenth of the work), then the losses and draws. So `solve`, out of time
once no move wins and some move is proved to draw, still knows the value: a draw.

Symmetry reduction, after the published solutions: Luc Goossens solved Quarto in 1998
(a draw with best play), and Matthew Kerner, "An Exploration of Gameplay in Quarto"
(Yale, 2001), shows the 12,288 transformations of a position that keep its value: 32
maps of the board that keep its groups times 384 permutations and complements of the
attributes, and a normal form under them. This late in a game a normal form saves
next to nothing (the 1,500 first table entries of a ten-empty search fall into 1,492
classes under all 12,288 transformations, and keys merged by dead values or dead
squares fall by under 1 %) and costs far more per position in Python than a position
costs to search, so the solver keys its table by `common` (positions that differ only
in what no longer matters are one entry) and uses the symmetries that the position at
hand has: empty squares that lie in the same live groups are interchangeable (a
placement is tried on one of them), and so are pieces that agree on every value a live
group still shares (one of them is given), at every node and at the root.

Move ordering by threats, in both searches: the placements after which the fewest safe
gives are left come first (they bring the opponent nearest to running out of safe
pieces, which is how Quarto is won, and a move that leaves the opponent few choices is
also the cheapest escape to prove); this halves the positions searched. The orderings
and tables measured and left out (escapes tried first by the reply they answered, by the
opponent's safe replies, killer moves, tables at four and five squares, ...) are listed
in docs/bots.md with what they cost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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

# How often (in nodes of five or more empty squares, a power of two less one) the
# clock is read.
_CHECK_EVERY = 255
# Each table is cleared when it grows past this many positions (memory bound).
_TABLE_LIMIT = 3_000_000
# Positions with fewer empty squares are searched without the tables (they would cost
# more than they save).
_TABLE_FROM = 6
# From this many empty squares on, a node first looks its children up in the tables
# (below, the lookups cost more than the subtrees they would save).
_LOOK_FROM = 8
# The classes of squares and pieces met are kept up to this many each (memory bound).
_CACHE_LIMIT = 500_000
_SLOT = 8  # bits per group in `common`


class _Bits(dict[int, tuple[int, ...]]):
    """mask -> the indices of the set bits of a 16-bit mask, lowest first (a dict, as a
    subscript costs less than a cached call)."""

    def __missing__(self, mask: int) -> tuple[int, ...]:
        found = tuple(i for i in range(16) if mask >> i & 1)
        self[mask] = found
        return found


_BITS = _Bits()


class _Turns(dict[int, tuple[tuple[int, int, int], ...]]):
    """three empty squares (a mask) -> for each of them: the square, and the other two
    as pairs `q << 4 | r` and `r << 4 | q` (indices of the pairs' masks)."""

    def __missing__(self, empties: int) -> tuple[tuple[int, int, int], ...]:
        a, b, c = _BITS[empties]
        found = tuple(
            (square, q << 4 | r, r << 4 | q) for square, q, r in ((a, b, c), (b, a, c), (c, a, b))
        )
        self[empties] = found
        return found


_TURNS = _Turns()


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


class _Deadly(dict[int, int]):
    """The slots of the groups with one empty square left (`common & lasts[empties]`)
    -> the pieces (16-bit mask) having a value one of them shares: a give of one of
    them loses at once. A dict, as one subscript costs less than folding the slots."""

    def __init__(self, by_values: tuple[int, ...]) -> None:
        super().__init__()
        self.by_values = by_values
        self[0] = 0

    def __missing__(self, threats: int) -> int:
        found = self.by_values[_shared(threats)]
        if len(self) >= _CACHE_LIMIT:
            self.clear()  # the tables live as long as the process
            self[0] = 0
        self[threats] = found
        return found


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


class _Splits(dict[int, tuple[tuple[int, int, int], ...]]):
    """empties -> (square, the empty squares after it is filled, the slots of the
    groups with one empty square left then) for each square of `empties`: what a
    placement needs besides the piece, in one subscript."""

    def __init__(self, lasts: _LastSquares) -> None:
        super().__init__()
        self.lasts = lasts

    def __missing__(self, empties: int) -> tuple[tuple[int, int, int], ...]:
        found = []
        for square in _BITS[empties]:
            rest = empties ^ (1 << square)
            found.append((square, rest, self.lasts[rest]))
        split = tuple(found)
        self[empties] = split
        return split


class _Tables:
    """The solver's masks for one variant (the groups and counted attributes)."""

    def __init__(self, var: Variant) -> None:
        groups = [squares for _, squares in var.groups]
        slots = range(len(groups))
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
        # deadly[values]: the pieces (16-bit mask) having one of the 8 bits `values`.
        self.deadly = tuple(sum(1 << p for p in PIECES if code[p] & v) for v in range(256))
        full = [sum(0xFF << (_SLOT * g) for g in through[s]) for s in SQUARES]
        # everywhere[p]: p's values in every slot.
        everywhere = [code[p] * self.low_bits for p in PIECES]
        self.everywhere = tuple(everywhere)
        # completes[p][q]: ANDed with `common`, nonzero when p on q makes a quarto, q
        # being the last empty square of the board (of every group through it).
        self.completes = tuple(tuple(everywhere[p] & full[q] for q in SQUARES) for p in PIECES)
        # completes_either[p][q << 4 | r]: p makes a quarto on q or on r, the two empty
        # squares.
        self.completes_either = tuple(
            tuple(everywhere[p] & (full[q] ^ full[r]) for q in SQUARES for r in SQUARES)
            for p in PIECES
        )
        # then_last[p][z][q << 4 | r]: ANDed with `common`, nonzero when p on q and then
        # z on r, the last empty square, makes a quarto there (four squares' worth of
        # masks for the three squares' search: 65,536 integers, about 4 MB).
        self.then_last = tuple(
            tuple(
                tuple(self.keep[p][q] & self.completes[z][r] for q in SQUARES for r in SQUARES)
                for z in PIECES
            )
            for p in PIECES
        )
        self.lasts = _LastSquares(tuple(sum(1 << s for s in g) for g in groups))
        self.deadly_at = _Deadly(self.deadly)
        self.splits = _Splits(self.lasts)
        self.squares: dict[int, tuple[tuple[int, int, int], ...]] = {}
        self.given: dict[int, tuple[int, ...]] = {}

    def live(self, common: int) -> int:
        """Bit 0 of the slot of every group whose pieces still share a value."""
        x = common | common >> 4
        x |= x >> 2
        x |= x >> 1
        return x & self.low_bits

    def square_classes(self, live: int, empties: int) -> tuple[tuple[int, int, int], ...]:
        """One square of each class of `empties` (squares in the same live groups are
        interchangeable), as in `splits`, cached by `live << 16 | empties`."""
        classes: dict[int, tuple[int, int, int]] = {}
        for split in self.splits[empties]:
            classes.setdefault(live & self.on[split[0]], split)
        found = tuple(classes.values())
        if len(self.squares) >= _CACHE_LIMIT:
            self.squares.clear()  # the tables live as long as the process
        self.squares[live << 16 | empties] = found
        return found

    def gives(self, values: int, pieces: int) -> tuple[int, ...]:
        """One piece of each class of `pieces` (pieces alike in every value of `values`
        are interchangeable), cached by `values << 16 | pieces`."""
        classes: dict[int, int] = {}
        for piece in _BITS[pieces]:
            classes.setdefault(self.code[piece] & values, piece)
        found = tuple(classes.values())
        if len(self.given) >= _CACHE_LIMIT:
            self.given.clear()
        self.given[values << 16 | pieces] = found
        return found


@cache
def _tables(var: Variant) -> _Tables:
    return _Tables(var)


class _Search:
    """The two searches over one variant's positions, with their tables and a budget.

    A position is (common, empties, unused, held): the player to move places `held`,
    which makes no quarto (the caller has checked), then gives one of `unused`.
    """

    def __init__(self, tables: _Tables, clock: Clock, max_nodes: int | None) -> None:
        self.t = tables
        self.clock = clock
        self.max_nodes = max_nodes
        self.nodes = 0
        # Whether the player to move can force a win; whether they have an escape.
        self.won: dict[int, bool] = {}
        self.escapes: dict[int, bool] = {}

    def _count(self) -> None:
        """Called every `_CHECK_EVERY + 1` nodes: out of time or nodes, stop."""
        if self.clock.expired() or (self.max_nodes is not None and self.nodes > self.max_nodes):
            raise OutOfTime

    def _places(
        self, common: int, empties: int, unused: int, held: int
    ) -> list[tuple[int, int, int, int]]:
        """(order, common after, empties after, safe gives) of each class of placement
        of `held` that leaves a safe give, fewest safe gives first."""
        t = self.t
        keep, deadly_at = t.keep[held], t.deadly_at
        live = t.live(common)
        squares = t.squares.get(live << 16 | empties)
        if squares is None:
            squares = t.square_classes(live, empties)
        places = []
        for square, rest, last in squares:
            after = common & keep[square]
            # Deadly: a piece with a value shared by a group with one empty square left.
            safe = unused & ~deadly_at[after & last]
            if safe:
                places.append((safe.bit_count() << 4 | square, after, rest, safe))
        places.sort()
        return places

    def wins(self, common: int, empties: int, unused: int, held: int) -> bool:
        """Whether the player to move can force a win."""
        n = empties.bit_count()
        if n <= 2 or not common:
            return False  # with two squares left only the opponent can still complete one
        if n == 3:
            return self._wins3(common, empties, unused, held)
        if n == 4:
            return self._wins4(common, empties, unused, held)
        if n == 5:
            return self._wins5(common, empties, unused, held)
        return self._exists(common, empties, unused, held, n, self.won, self.loses, True)

    def loses(self, common: int, empties: int, unused: int, held: int) -> bool:
        """Whether the player to move loses whatever they do."""
        n = empties.bit_count()
        if n <= 1 or not common:
            return False
        t = self.t
        if n == 2:
            # The last piece goes on the last square: lost if it completes a group
            # wherever the held piece goes.
            first, second = _BITS[empties]
            keep, last = t.keep[held], t.completes[unused.bit_length() - 1]
            return bool(common & keep[first] & last[second]) and bool(
                common & keep[second] & last[first]
            )
        if n == 3:
            return self._loses3(common, empties, unused, held)
        if n == 4:
            return self._loses4(common, empties, unused, held)
        # Lost unless some move escapes (also when every give is deadly everywhere).
        child = self._wins5 if n == 6 else self.wins
        return not self._exists(common, empties, unused, held, n, self.escapes, child, False)

    def _exists(
        self,
        common: int,
        empties: int,
        unused: int,
        held: int,
        n: int,
        table: dict[int, bool],
        child: Callable[[int, int, int, int], bool],
        answer: bool,
    ) -> bool:
        """Whether some move leads to a position where `child` is `answer` (`loses` is
        true: a winning move; `wins` is false: an escape), `table` holding the answers
        known from `_TABLE_FROM` empty squares on."""
        self.nodes += 1
        if not self.nodes & _CHECK_EVERY:
            self._count()
        key = common << 40 | empties << 24 | unused << 8 | held
        if n >= _TABLE_FROM:
            known = table.get(key)
            if known is not None:
                return known
            # The other search's answer may settle this one: a position that can be won
            # has an escape, and one that is lost cannot be won.
            if answer:
                if self.escapes.get(key) is False:
                    return False
            elif self.won.get(key):
                return True
        t = self.t
        values = _shared(common)
        given, gives = t.given, t.gives
        places = self._places(common, empties, unused, held)
        found = n >= _LOOK_FROM and self._known_child(places, values, unused, answer)
        if not found:
            for _order, after, rest, safe in places:
                classes = given.get(values << 16 | safe)
                if classes is None:
                    classes = gives(values, safe)
                for give in classes:
                    if child(after, rest, unused ^ (1 << give), give) == answer:
                        found = True
                        break
                if found:
                    break
        if n >= _TABLE_FROM:
            if len(table) >= _TABLE_LIMIT:
                table.clear()
            table[key] = found
        return found

    def _known_child(
        self, places: list[tuple[int, int, int, int]], values: int, unused: int, answer: bool
    ) -> bool:
        """Whether the tables already show a move to a child where the search's answer
        is `answer` (a lost child for a winning move, a child that cannot be won for an
        escape): one lookup per move can save a subtree searched on another path."""
        t, won, escapes = self.t, self.won, self.escapes
        for _order, after, rest, safe in places:
            classes = t.given.get(values << 16 | safe)
            if classes is None:
                classes = t.gives(values, safe)
            base = after << 40 | rest << 24
            for give in classes:
                key = base | (unused ^ (1 << give)) << 8 | give
                if escapes.get(key) is False or (not answer and won.get(key) is False):
                    return True
        return False

    def _loses4(self, common: int, empties: int, unused: int, held: int) -> bool:
        """Four squares left: lost when every safe give lets the opponent win (no table
        and no ordering: here they cost more than they save)."""
        t = self.t
        keep, deadly_at, wins3 = t.keep[held], t.deadly_at, self._wins3
        for square, rest, last in t.splits[empties]:
            after = common & keep[square]
            for give in _BITS[unused & ~deadly_at[after & last]]:
                if not wins3(after, rest, unused ^ (1 << give), give):
                    return False
        return True

    def _loses3(self, common: int, empties: int, unused: int, held: int) -> bool:
        """Three squares left: the opponent cannot win after a safe give (only the
        last piece could, and it is theirs to give), so this is lost only when every
        placement leaves both pieces deadly."""
        t = self.t
        keep, either = t.keep[held], t.completes_either
        x, y = _BITS[unused]
        deadly_x, deadly_y = either[x], either[y]
        for square, qr, _rq in _TURNS[empties]:
            after = common & keep[square]
            if not after & deadly_x[qr] or not after & deadly_y[qr]:
                return False
        return True

    def _wins4(self, common: int, empties: int, unused: int, held: int) -> bool:
        """Four squares left: a win is a safe give after which the opponent loses."""
        t = self.t
        keep, deadly_at, loses3 = t.keep[held], t.deadly_at, self._loses3
        for square, rest, last in t.splits[empties]:
            after = common & keep[square]
            if not after:
                continue
            for give in _BITS[unused & ~deadly_at[after & last]]:
                if loses3(after, rest, unused ^ (1 << give), give):
                    return True
        return False

    def _wins3(self, common: int, empties: int, unused: int, held: int) -> bool:
        """Three squares left: place, give a safe piece, and the last piece (the
        opponent's to give back) completes a group wherever the given one goes."""
        t = self.t
        x, y = _BITS[unused]
        everywhere = t.everywhere
        y_last = common & everywhere[y]  # y, the last piece, can complete some group
        x_last = common & everywhere[x]
        if not (y_last or x_last):
            return False
        keep = t.keep[held]
        either = t.completes_either
        deadly_x, deadly_y = either[x], either[y]
        x_then_y, y_then_x = t.then_last[x][y], t.then_last[y][x]
        for square, qr, rq in _TURNS[empties]:
            after = common & keep[square]
            # Give x, and y completes on the last square wherever x goes; or give y.
            if (
                y_last
                and not after & deadly_x[qr]
                and after & x_then_y[qr]
                and after & x_then_y[rq]
            ) or (
                x_last
                and not after & deadly_y[qr]
                and after & y_then_x[qr]
                and after & y_then_x[rq]
            ):
                return True
        return False

    def _wins5(self, common: int, empties: int, unused: int, held: int) -> bool:
        """Five squares left, the most numerous positions searched: a win is a safe
        give after which the opponent loses, their four squares' search written out
        here (`_loses4` without its calls), with the ordering but no table."""
        self.nodes += 1
        if not self.nodes & _CHECK_EVERY:
            self._count()
        t = self.t
        keep_all, splits, deadly_at, wins3 = t.keep, t.splits, t.deadly_at, self._wins3
        given, gives = t.given, t.gives
        values = _shared(common)
        for _order, after, rest, safe in self._places(common, empties, unused, held):
            if not after:
                continue  # no group can be completed: a draw
            classes = given.get(values << 16 | safe)
            if classes is None:
                classes = gives(values, safe)
            for give in classes:
                left = unused ^ (1 << give)
                keep = keep_all[give]
                for square, empty, last in splits[rest]:
                    placed = after & keep[square]
                    escaped = False
                    for back in _BITS[left & ~deadly_at[placed & last]]:
                        if not wins3(placed, empty, left ^ (1 << back), back):
                            escaped = True
                            break
                    if escaped:
                        break
                else:
                    return True  # no placement of `give` escapes
        return False


class QuartoExact:
    """The exact values of Quarto positions, within a deadline and a node budget."""

    def __init__(self, tactics: Tactics, clock: Clock, max_nodes: int | None = None) -> None:
        # The same construction as the generic `Solver`; the game's tactics are not
        # needed, as everything is on the solver's own bitboards.
        self.clock = clock
        self.max_nodes = max_nodes  # a bound that does not depend on the machine's speed
        self.searches: dict[Variant, _Search] = {}
        self.proved: dict[QuartoMove, float] = {}  # the root moves' values found so far
        self.no_win = False  # whether `values` has shown that no move wins

    @property
    def nodes(self) -> int:
        """The positions of five or more empty squares searched so far (those found in
        a table included)."""
        return sum(search.nodes for search in self.searches.values())

    def values(
        self, state: QuartoState, moves: Sequence[QuartoMove], *, first_win: bool = False
    ) -> dict[QuartoMove, float] | None:
        """The exact value of each of `moves` for the player to move (1 win, 0.5 draw,
        0 loss); with `first_win`, only up to the first winning move. None when the
        clock or the node budget runs out first (`proved` then holds what was found)."""
        if state.held == EMPTY:
            raise ValueError("the opening give is not searched exactly")
        t = _tables(state.variant)
        search = self.searches.get(state.variant)
        if search is None:
            search = _Search(t, self.clock, self.max_nodes)
            self.searches[state.variant] = search
        held = state.held
        empties = sum(1 << s for s in state.empties)
        unused = sum(1 << p for p in state.unused)
        common = t.start
        for square, piece in enumerate(state.board):
            if piece != EMPTY:
                common &= t.keep[piece][square]
        live = t.live(common)
        # The slots of the groups the held piece completes on their last empty square.
        completes = common & t.lasts[empties] & t.everywhere[held]
        self.proved = {}
        self.no_win = False
        found = self.proved
        # Moves of one class lead to equal positions: each class is searched once.
        verdicts: dict[tuple[int, int], float] = {}
        children: dict[tuple[int, int], tuple[int, int, int, int]] = {}
        undecided: list[tuple[QuartoMove, tuple[int, int]]] = []
        try:
            # First whether each move wins (the opponent must lose), which is quick:
            # one escape refutes it. Then whether the others lose or draw.
            for move in self._root_order(moves, completes, t):
                square, give = move >> 5, move & 31
                if completes & t.on[square] * 0xFF:
                    found[move] = WIN
                elif give == NONE:
                    found[move] = DRAW  # the sixteenth piece, no quarto
                else:
                    after = common & t.keep[held][square]
                    cls = (live & t.on[square], t.code[give] & _shared(after))
                    if cls not in verdicts and cls not in children:
                        rest = empties ^ (1 << square)
                        child = (after, rest, unused & ~(1 << give), give)
                        if t.code[give] & _shared(after & t.lasts[rest]):
                            verdicts[cls] = LOSS  # deadly
                        elif search.loses(*child):
                            verdicts[cls] = WIN
                        else:
                            children[cls] = child
                    if cls in verdicts:
                        found[move] = verdicts[cls]
                    else:
                        undecided.append((move, cls))
                if first_win and found.get(move) == WIN:
                    return found
            self.no_win = not any(value == WIN for value in found.values())
            for move, cls in undecided:
                if cls not in verdicts:
                    verdicts[cls] = LOSS if search.wins(*children[cls]) else DRAW
                found[move] = verdicts[cls]
        except OutOfTime:
            return None
        return found

    def solve(
        self, state: QuartoState, moves: Sequence[QuartoMove]
    ) -> tuple[float, list[QuartoMove]] | None:
        """The value of `state` for the player to move and the moves among `moves` that
        keep it (one winning move is enough); None when out of time, unless no move wins
        and some move is proved to draw: the value is then a draw, kept by the drawing
        moves proved by then."""
        found = self.values(state, moves, first_win=True)
        if found is None:
            draws = [m for m, v in self.proved.items() if v == DRAW]
            return (DRAW, draws) if self.no_win and draws else None
        if not found:
            return LOSS, list(moves)
        best = max(found.values())
        return best, [m for m, v in found.items() if v == best]

    @staticmethod
    def _root_order(moves: Sequence[QuartoMove], completes: int, t: _Tables) -> list[QuartoMove]:
        """Winning placements first, then the rest as given."""
        wins = [m for m in moves if completes & t.on[m >> 5] * 0xFF]
        return wins + [m for m in moves if m not in wins]
