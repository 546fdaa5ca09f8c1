"""Quadrature's tactics: judging cut-off playouts by men and progress.

The rules (docs/games/quadrature.md): a side wins when the enemy is down to two men or
when its men hold the three points of the enemy home plate; men convert enemy men by
squaring them. Random games last about 175 plies, too long for many playouts in the
time of a move, so playouts stop after PLAYOUT_DEPTH plies and the position is judged:
each man on the board is worth a man in the enemy's reserve (a conversion swings two),
and men nearer the enemy's back rank are worth a little more (the home-plate win).
Immediate wins use the protocol's default (apply every move); the must-block check
judges the opponent's replies on the bitboards.
"""

from __future__ import annotations

import random

from pbm.bots.tactics import Tactics, sigmoid
from pbm.games.quadrature import (
    LOSING_COUNT,
    PASS,
    PLATE,
    RANK,
    SIZE,
    QuadratureMove,
    QuadratureState,
    play,
    squared_by,
)

PLAYOUT_DEPTH = 16
MAN_WEIGHT = 0.5
ADVANCE_WEIGHT = 0.02
# Black moves up (rank 1 to 11), White down.
_BLACK_RANK_WEIGHTS = tuple(enumerate(RANK))


def _progress(men: int, upward: bool) -> int:
    """Ranks advanced by all the men of one side together."""
    total = 0
    for rank, row in _BLACK_RANK_WEIGHTS:
        on_rank = (men & row).bit_count()
        if on_rank:
            total += on_rank * (rank if upward else SIZE - 1 - rank)
    return total


class QuadratureTactics(Tactics):
    playout_depth = PLAYOUT_DEPTH
    tree_tactics = False  # applying every move at every node costs more than it finds

    def evaluate(self, state: QuadratureState) -> float:
        black, white = state.black, state.white
        men = black.bit_count() - white.bit_count()
        progress = _progress(black, True) - _progress(white, False)
        return sigmoid(MAN_WEIGHT * men + ADVANCE_WEIGHT * progress)

    def threatened(self, state: QuadratureState, move: QuadratureMove) -> bool:
        # The opponent's replies are judged on the bitboards, without building the
        # positions after them (which lists their moves): a reply wins only by bringing
        # our side down to two men or by completing the plate, and a reply that squares
        # nothing converts no man (seed "OBJECT"; the rules module's `_win`).
        after = self.game.apply(state, move)
        if after.result is not None:
            return False
        side = after.turn
        own, enemy = (after.white, after.black) if side else (after.black, after.white)
        plate = PLATE[1 - side]
        for reply in after.moves:
            if reply == PASS:
                continue
            frm, to = reply >> 8, reply & 0xFF
            moved = own ^ (1 << frm) ^ (1 << to)
            if squared_by(moved, enemy, to):
                moved, left, _converted, _removed = play(own, enemy, frm, to)
                if left.bit_count() <= LOSING_COUNT:
                    return True
            if moved & plate == plate:
                return True
        return False

    def playout_move(self, state: QuadratureState, rng: random.Random) -> QuadratureMove:
        return rng.choice(state.moves)
