"""Quadrupel's tactics: complete or stop QUADRUPELs, judge the variants' extra turns
exactly, and keep the opponent's blind setup blind.

The rules (docs/games/quadrupel.md): a move that leaves the mover's four stones in one of
the 95 shapes ends the game in the basic, point and position games (a win, or a loss
below the threshold or with the 1-stones misplaced); in the added-value and combination
games it freezes the builder and gives the opponent up to three extra turns to beat it.
Those extra turns are a one-player search of at most three moves, which `finishing`
solves exactly, so a QUADRUPEL is built or allowed only when its extra turns are won.

Setups (point, position and combination games) are secret until both are in: when White
sets up, Black's dots are erased from the position the bot sees (`redact`) and the search
runs over random guesses of them (`determinize`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable, Sequence

from pbm.bots.exact import Solver
from pbm.bots.tactics import DRAW, LOSS, Clock, Tactics, flip, sigmoid
from pbm.games.grid import square_name
from pbm.games.quadrupel import (
    GAME,
    SEAT_NAMES,
    SHAPES,
    SIZE,
    SQUARES,
    START,
    QuadrupelMove,
    QuadrupelState,
)

# Playouts are cut after this many plies and judged by how near each side is to a shape.
PLAYOUT_DEPTH = 24
# Weight of one stone of distance to the nearest shape in the cut-off judgement.
DISTANCE_WEIGHT = 0.9
_SHAPE_MASKS = tuple(SHAPES)
_STONES = re.compile(r"\b(black|white)=(\S+)")


def _distance(mask: int) -> int:
    """Stones that must move to make the nearest shape (0 on a shape)."""
    return 4 - max((mask & shape).bit_count() for shape in _SHAPE_MASKS)


def _shape_moves(state: QuadrupelState, moves: Sequence[QuadrupelMove]) -> list[int]:
    """The board moves that leave the mover's stones on a shape."""
    mask = state.masks[state.turn]
    found = []
    for move in moves:
        if isinstance(move, int):
            frm, to = divmod(move, SQUARES)
            if mask ^ (1 << frm) ^ (1 << to) in SHAPES:
                found.append(move)
    return found


class QuadrupelTactics(Tactics):
    playout_depth = PLAYOUT_DEPTH

    # -- moves whose value is known at once ----------------------------------------
    def finishing(
        self, state: QuadrupelState, moves: Sequence[QuadrupelMove]
    ) -> dict[QuadrupelMove, float]:
        if state.pending or state.result is not None:
            return {}
        rules = state.rules
        last_extra = state.extra is not None and state.extra.used + 1 >= state.extra.limit
        at_cap = state.extra is None and state.ply + 1 >= rules.plycap
        player = self.player(state) or 0
        known: dict[QuadrupelMove, float] = {}
        shapes = _shape_moves(state, moves)
        for shape_move in shapes:
            known[shape_move] = self._value_after(GAME.apply(state, shape_move), player)
        if last_extra or at_cap:
            # The last extra turn without a shape leaves the builder's score standing
            # (seed parts 2 and 5); at the ply cap every other move draws (pbm rule).
            rest = LOSS if last_extra else DRAW
            for move in moves:
                known.setdefault(move, rest)
        return known

    def _value_after(self, after: QuadrupelState, player: int) -> float:
        """The exact value for `player` after a move that completed a shape."""
        if after.result is not None:
            return flip(self.result(after), player)
        # Extra turns follow: at most three moves of one side, solved exactly.
        solved = Solver(self, Clock(None)).solve(after, GAME.legal_moves(after))
        assert solved is not None  # no deadline
        value, _ = solved
        mover = self.player(after) or 0
        return flip(flip(value, mover), player)

    def exact_ready(self, state: QuadrupelState) -> bool:
        return state.extra is not None

    def key(self, state: QuadrupelState) -> Hashable:
        extra = state.extra
        return (state.cells, state.turn, extra.used if extra is not None else -1, state.banned)

    def order(self, state: QuadrupelState, moves: Sequence[QuadrupelMove]) -> list[QuadrupelMove]:
        return list(moves)

    def expansion_order(
        self, state: QuadrupelState, moves: list[QuadrupelMove], rng: random.Random
    ) -> list[QuadrupelMove]:
        # Moves that bring the mover's stones nearest a shape first: they make the
        # threats (and double threats) that decide the game, and block the opponent's.
        rng.shuffle(moves)
        if state.pending:
            return moves
        mask = state.masks[state.turn]

        def distance(move: QuadrupelMove) -> int:
            if not isinstance(move, int):
                return 4
            frm, to = divmod(move, SQUARES)
            return _distance(mask ^ (1 << frm) ^ (1 << to))

        moves.sort(key=distance, reverse=True)
        return moves

    # -- playouts ------------------------------------------------------------------
    def playout_move(self, state: QuadrupelState, rng: random.Random) -> QuadrupelMove:
        moves = GAME.legal_moves(state)
        if state.pending:
            return rng.choice(moves)
        shapes = _shape_moves(state, moves)
        if not shapes:
            return rng.choice(moves)
        if state.rules.variant == "basic":
            return rng.choice(shapes)
        seat = state.turn
        bad = set()
        for move in shapes:
            after = GAME.apply(state, move)
            if after.result is not None:
                if after.result.winner == seat:
                    return move
                bad.add(move)
        good = [m for m in moves if m not in bad]
        return rng.choice(good or moves)

    def evaluate(self, state: QuadrupelState) -> float:
        if state.pending:
            return 0.5
        black, white = state.masks
        edge: float = _distance(white) - _distance(black)
        edge += 0.5 if state.turn == 0 else -0.5  # the side to move is a tempo ahead
        return sigmoid(DISTANCE_WEIGHT * edge)

    # -- hidden setups -------------------------------------------------------------
    def redact(self, state: QuadrupelState, seat: int) -> QuadrupelState:
        if not self._secret(state, seat):
            return state
        # pbm's decision (docs/games/quadrupel.md, 'Setup (point, position, combination
        # games)'): the first setup is secret until both are in. The bot sees the position
        # as if the opponent had not set up yet.
        other = SEAT_NAMES[1 - seat].lower()
        text = _STONES.sub(
            lambda m: m[0] if m[1] != other else f"{other}=" + _bare(m[2]),
            GAME.dump(state),
        )
        text = re.sub(r"\bsetup=\S+", "setup=black,white", text)
        return GAME.load(text)

    @staticmethod
    def _secret(state: QuadrupelState, seat: int) -> bool:
        """Whether the opponent's setup is in and `seat`'s is still awaited."""
        return bool(state.pending & (1 << seat)) and not state.pending & (1 << (1 - seat))

    def hidden(self, state: QuadrupelState, seat: int) -> bool:
        # A redacted position awaits both setups while the second seat is to move.
        return state.pending == 3 and state.turn == seat and seat != 0

    def determinize(self, state: QuadrupelState, seat: int, rng: random.Random) -> QuadrupelState:
        other = 1 - seat
        # Any setup the rules allow (the setups are the same for both seats).
        start = GAME.new_state(**state.rules.as_options())
        dots = rng.choice([m for m in GAME.legal_moves(start) if isinstance(m, tuple)])
        stones = ",".join(
            square_name(s, SIZE) + (f":{d}" if d else "")
            for s, d in zip(START[other], dots, strict=True)
        )
        name = SEAT_NAMES[other].lower()
        text = _STONES.sub(lambda m: m[0] if m[1] != name else f"{name}={stones}", GAME.dump(state))
        text = re.sub(r"\bsetup=\S+", "setup=" + SEAT_NAMES[seat].lower(), text)
        return GAME.load(text)


def _bare(stones: str) -> str:
    """A stones field without dots: `c3:4,c4:1` -> `c3,c4`."""
    return ",".join(item.partition(":")[0] for item in stones.split(","))
