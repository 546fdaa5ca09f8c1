"""Quad's tactics: complete a four, stop the opponent's four, and guide playouts.

The rules (docs/games/quad.md): exactly four in an unbroken row or column wins, already
in the drop phase; in the move phase a step captures what it sandwiches, and wiping out
or stalemating the opponent wins too. Drops are checked on the bitboards of the rules
module (`exact_four`); steps, which may capture, are applied through the protocol.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from pbm.bots.tactics import LOSS, WIN, Tactics, sigmoid
from pbm.games.quad import (
    CAPTURE_PAIRS,
    FIFTH_ON_RANK,
    FOUR_STARTS_H,
    FOUR_STARTS_V,
    FULL,
    GAME,
    NOT_FILE_A,
    SQUARES,
    WHITE,
    QuadMove,
    QuadState,
    exact_four,
)

# Playouts are cut after this many plies and the position judged by material.
PLAYOUT_DEPTH = 40
# Weight of one counter of material in the cut-off judgement.
MATERIAL_WEIGHT = 0.6


def _own(state: QuadState) -> tuple[int, int]:
    """(mover's counters, opponent's counters)."""
    if state.side == WHITE:
        return state.white, state.black
    return state.black, state.white


def four_squares(own: int, empty: int) -> int:
    """The empty squares where one more counter makes an exact four (bit mask).

    Bit-parallel over every window of four in a row or column: for each place k of the
    window, the windows whose other three squares are held, whose k-th is empty, and
    whose squares just beyond both ends are not held (no overline: Winther's rules,
    "overlines don't count"; docs/games/quad.md, 'Rules as pbm plays them'); the same
    test as the rules module's `exact_four`, for all squares at once.
    """
    found = 0
    before = (own << 1) & NOT_FILE_A  # bit p: p-1 on the same rank is held
    after = (own >> 4) & FIFTH_ON_RANK  # bit p: p+4 on the same rank is held
    open_h = FOUR_STARTS_H & ~before & ~after
    open_v = FOUR_STARTS_V & ~(own << 8) & ~(own >> 32)
    shifted_h = (own, own >> 1, own >> 2, own >> 3)
    shifted_v = (own, own >> 8, own >> 16, own >> 24)
    for k in range(4):
        windows = open_h & (empty >> k)
        for j in range(4):
            if j != k:
                windows &= shifted_h[j]
        found |= windows << k
        windows = open_v & (empty >> (8 * k))
        for j in range(4):
            if j != k:
                windows &= shifted_v[j]
        found |= windows << (8 * k)
    return found & empty


def _winning_drops(own: int, moves: Sequence[QuadMove], empty: int) -> list[QuadMove]:
    squares = four_squares(own, empty)
    return [m for m in moves if squares >> m & 1] if squares else []


class QuadTactics(Tactics):
    playout_depth = PLAYOUT_DEPTH

    def finishing(self, state: QuadState, moves: Sequence[QuadMove]) -> dict[QuadMove, float]:
        hands = state.hands
        # Only a drop that leaves both hands empty can stalemate the opponent.
        if hands[state.side] and hands[0] + hands[1] > 1:
            own, other = _own(state)
            return dict.fromkeys(_winning_drops(own, moves, ~(own | other) & FULL), WIN)
        return super().finishing(state, moves)

    def tree_moves(
        self, state: QuadState, moves: list[QuadMove]
    ) -> tuple[list[QuadMove], float | None]:
        hands = state.hands
        side = state.side
        if not hands[side] or not hands[1 - side]:
            return super().tree_moves(state, moves)
        # Drop phase, and the opponent drops next: a drop never captures, so the
        # opponent's winning squares stay winning unless this drop fills one.
        own, other = _own(state)
        empty = ~(own | other) & FULL
        if four_squares(own, empty):
            return [], WIN
        threats = four_squares(other, empty)
        if not threats:
            return moves, None
        if threats & (threats - 1):
            return [], LOSS  # two squares to fill, one drop: the opponent completes the other
        return [m for m in moves if threats >> m & 1] or moves, None

    def playout_move(self, state: QuadState, rng: random.Random) -> QuadMove:
        moves = GAME.legal_moves(state)
        own, other = _own(state)
        if state.hands[state.side]:
            empty = ~(own | other) & FULL
            wins = _winning_drops(own, moves, empty)
            if wins:
                return rng.choice(wins)
            # Must-block: drop where the opponent would complete a four.
            blocks = _winning_drops(other, moves, empty)
            if blocks:
                return rng.choice(blocks)
            return rng.choice(moves)
        captures = []
        for move in moves:
            origin, destination = divmod(move - SQUARES, SQUARES)
            after = own ^ (1 << origin) ^ (1 << destination)
            if exact_four(after):
                return move
            for neighbour, beyond in CAPTURE_PAIRS[destination]:
                if other >> neighbour & 1 and after >> beyond & 1:
                    captures.append(move)
                    break
        if captures and rng.random() < 0.75:
            return rng.choice(captures)
        return rng.choice(moves)

    def evaluate(self, state: QuadState) -> float:
        white = state.white.bit_count() + state.hands[0]
        black = state.black.bit_count() + state.hands[1]
        return sigmoid(MATERIAL_WEIGHT * (white - black))
