"""Quarod's tactics: the pie decision, and exact play once few moves are left.

The rules (docs/games/quarod.md): the game ends only when no placement or swap is left,
and is then scored by group sizes, so nothing is decided early; random playouts to the
end (about 46 plies on 8x8) are cheap and the search does the rest. The pie switch
(White's first turn only) is a move like any other for the search, whose players follow
`player_seats`; level 1 decides it by playing the opening out a few dozen times from both
sides: it swaps when the opening is worth more than half a point to the player who made
it.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence

from pbm.bots.tactics import Clock, Tactics
from pbm.games.quarod import PIE, QuarodMove, QuarodState, geometry

# Playouts level 1 spends on the pie decision.
PIE_PLAYOUTS = 48
# A pie playout reads the clock every this many plies (a playout is about 46 plies).
PIE_CLOCK_PLIES = 8
# The exact search is tried when at most this many moves can still be played.
EXACT_PLIES = 9
# `finishing` looks for game-ending moves only among this few moves (else none exists:
# a placement removes at most six pairs of empty squares, a swap one engaged pair).
FINISHING_MOVES = 12


def plies_left(state: QuarodState) -> int:
    """An upper bound on the moves left: each placement fills two squares and makes one
    engaged pair; each swap unmakes one (seed, Play)."""
    empty = state.empty.bit_count()
    pairs = (state.engaged.bit_count()) // 2
    return empty // 2 + pairs + empty // 2


class QuarodTactics(Tactics):
    def finishing(self, state: QuarodState, moves: Sequence[QuarodMove]) -> dict[QuarodMove, float]:
        if len(moves) > FINISHING_MOVES:
            return {}
        return super().finishing(state, moves)

    def one_move(
        self, state: QuarodState, moves: Sequence[QuarodMove], rng: random.Random, clock: Clock
    ) -> QuarodMove:
        if PIE not in moves:
            return rng.choice(list(moves))
        # The pie rule: swap when the opening favours its maker (who would then be us).
        # The clock is read before each playout and every few plies of one: with too
        # little time the playouts made so far decide, and none means no swap.
        first = 0.0
        played = 0
        while played < PIE_PLAYOUTS and not clock.expired():
            result = self._playout(state, rng, clock)
            if result is None:
                break
            first += result
            played += 1
        if played and first / played > 0.5:
            return PIE
        return rng.choice([m for m in moves if m != PIE])

    def _playout(self, state: QuarodState, rng: random.Random, clock: Clock) -> float | None:
        """A uniformly random game to the end, its value for player 0; None when the
        clock expires on the way."""
        plies = 0
        while self.game.to_move(state) is not None:
            plies += 1
            if not plies % PIE_CLOCK_PLIES and clock.expired():
                return None
            moves = geometry(state.size).moves(
                state.empty, state.engaged, state.black, state.paired_h, state.paired_v
            )
            state = self.game.apply(state, rng.choice(moves))
        return self.result(state)

    def exact_ready(self, state: QuarodState) -> bool:
        return plies_left(state) <= EXACT_PLIES

    def key(self, state: QuarodState) -> Hashable:
        return (state.cells, state.turn, state.switched)
