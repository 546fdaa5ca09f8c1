"""Exact game-tree search for small positions: alpha-beta over win/draw/loss values with a
table of bounds, within a deadline.

It finds the value of a position under perfect play by both sides and the moves that
keep it. The game's tactics say which moves end the game at once (`finishing`) and which
can be left out because they lose at once (`order`), which is what makes Quarto's last
eight or nine squares searchable in Python.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from pbm.bots.tactics import LOSS, WIN, Clock, Tactics, flip
from pbm.games.base import Move, State

# How often (in nodes) the clock is read.
_CHECK_EVERY = 64
# The table is cleared when it grows past this many positions (memory bound).
_TABLE_LIMIT = 2_000_000


class OutOfTime(Exception):
    """The deadline passed in the middle of a search."""


class Solver:
    """Values of positions of one game for player 0, with a table shared across calls."""

    def __init__(self, tactics: Tactics, clock: Clock, max_nodes: int | None = None) -> None:
        self.tactics = tactics
        self.game = tactics.game
        self.clock = clock
        self.max_nodes = max_nodes  # a bound that does not depend on the machine's speed
        self.table: dict[Hashable, tuple[float, float]] = {}
        self.nodes = 0
        self.proved: dict[Move, float] = {}  # the root moves' values found so far

    def solve(self, state: State, moves: Sequence[Move]) -> tuple[float, list[Move]] | None:
        """The exact value of `state` for the player to move and the root moves among
        `moves` that keep it; None when the clock runs out first (`proved` then holds
        the root moves whose value was found)."""
        player = self.tactics.player(state) or 0
        self.proved = {}
        values = self.proved
        try:
            for move in self._root_order(state, moves):
                value = flip(self._value(self.game.apply(state, move), LOSS, WIN), player)
                values[move] = value
                if value == WIN:
                    break  # one winning move is enough
        except OutOfTime:
            return None
        if not values:
            return LOSS, list(moves)
        best = max(values.values())
        return best, [m for m, v in values.items() if v == best]

    def _root_order(self, state: State, moves: Sequence[Move]) -> list[Move]:
        known = self.tactics.finishing(state, moves)
        if WIN in known.values():
            return [m for m, v in known.items() if v == WIN]
        rest = self.tactics.order(state, [m for m in moves if m not in known])
        return [*rest, *known]

    def _value(self, state: State, alpha: float, beta: float) -> float:
        self.tick()
        tactics = self.tactics
        player = tactics.player(state)
        if player is None:
            return tactics.result(state)
        key = tactics.key(state)
        low, high = self.table.get(key, (LOSS, WIN))
        if low >= beta or low == high:
            return low
        if high <= alpha:
            return high
        alpha, beta = max(alpha, low), min(beta, high)
        start_alpha, start_beta = alpha, beta
        moves = self.game.legal_moves(state)
        known = tactics.finishing(state, moves)
        worst = flip(LOSS, player)
        best = worst
        if known:
            mover_best = max(known.values())
            best = flip(mover_best, player)
            if mover_best == WIN:
                self.store(key, best, best)
                return best
        maximize = player == 0
        for move in tactics.order(state, [m for m in moves if m not in known]):
            if maximize:
                if best >= beta:
                    break
                value = self._value(self.game.apply(state, move), max(alpha, best), beta)
                if value > best:
                    best = value
            else:
                if best <= alpha:
                    break
                value = self._value(self.game.apply(state, move), alpha, min(beta, best))
                if value < best:
                    best = value
        if best <= start_alpha:
            self.store(key, low, best)
        elif best >= start_beta:
            self.store(key, best, high)
        else:
            self.store(key, best, best)
        return best

    def tick(self) -> None:
        """Count a node; raise OutOfTime past the deadline or the node budget."""
        self.nodes += 1
        if not self.nodes % _CHECK_EVERY and self.clock.expired():
            raise OutOfTime
        if self.max_nodes is not None and self.nodes > self.max_nodes:
            raise OutOfTime

    def store(self, key: Hashable, low: float, high: float) -> None:
        if len(self.table) >= _TABLE_LIMIT:
            self.table.clear()
        self.table[key] = (low, high)
