"""Quarto's tactics: winning placements, the safe-piece rule, guided playouts, and when
to try the exact search (pbm/bots/quarto_exact.py).

The rules (docs/games/quarto.md): a placement that completes a quarto wins at once, and
the piece you give is the piece your opponent places. So a piece is deadly when some
empty square would make a quarto with it, and giving a deadly piece while a harmless one
exists loses at once: never do it. Everything here works on the rules module's packed
group counters (pbm/games/quarto_lines.py): a placement is one addition and one AND.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence

from pbm.bots.tactics import DRAW, LOSS, WIN, Tactics
from pbm.games.quarto import EMPTY, NONE, PLACE_ONLY, QuartoMove, QuartoState, Variant

# Try the exact search (pbm/bots/quarto_exact.py) from this many empty squares on: it
# proves every move from 10 in about half a second of CPU (docs/bots.md); from 11 and 12
# it proves what it can in time.
EXACT_EMPTIES = 12


def deadly(var: Variant, sums: int, empties: Sequence[int], piece: int) -> bool:
    """Whether `piece` makes a quarto on one of `empties` of a board with `sums`."""
    fours = var.fours
    if not (sums + var.add_everywhere[piece]) & fours:
        return False  # no group holds three pieces sharing a value with it
    add = var.add[piece]
    return any((sums + add[s]) & fours for s in empties)


def winning_squares(state: QuartoState) -> list[int]:
    """The empty squares where the held piece makes a quarto."""
    held, sums, var = state.held, state.sums, state.variant
    if held == EMPTY or not (sums + var.add_everywhere[held]) & var.fours:
        return []
    add, fours = var.add[held], var.fours
    return [s for s in state.empties if (sums + add[s]) & fours]


def safe_gives(state: QuartoState, square: int) -> list[int]:
    """The pieces that are not deadly after the held piece goes on `square`."""
    var = state.variant
    sums = state.sums + var.add[state.held][square]
    empties = [s for s in state.empties if s != square]
    return [p for p in state.unused if not deadly(var, sums, empties, p)]


class QuartoTactics(Tactics):
    def finishing(self, state: QuartoState, moves: Sequence[QuartoMove]) -> dict[QuartoMove, float]:
        known = {PLACE_ONLY[s]: WIN for s in winning_squares(state)}
        if not known and len(state.empties) == 1 and state.held != EMPTY:
            known[PLACE_ONLY[state.empties[0]]] = DRAW  # the 16th piece, no quarto
        return known

    def threatened(self, state: QuartoState, move: QuartoMove) -> bool:
        square, give = move >> 5, move & 31
        if square == NONE or give == NONE:
            return False  # the opening give (an empty board), or nothing given
        var = state.variant
        sums = state.sums + var.add[state.held][square]
        return deadly(var, sums, [s for s in state.empties if s != square], give)

    def safe(self, state: QuartoState, moves: Sequence[QuartoMove]) -> list[int]:
        if state.held == EMPTY:
            return list(moves)
        harmless: dict[int, set[int]] = {}
        found = []
        for move in moves:
            square, give = move >> 5, move & 31
            if give == NONE:
                found.append(move)
                continue
            if square not in harmless:
                harmless[square] = set(safe_gives(state, square))
            if give in harmless[square]:
                found.append(move)
        return found

    def tree_moves(
        self, state: QuartoState, moves: list[QuartoMove]
    ) -> tuple[list[QuartoMove], float | None]:
        if state.held == EMPTY:
            return moves, None
        if winning_squares(state):
            return [], WIN
        if len(state.empties) == 1:
            return [], DRAW
        keep = self.safe(state, moves)
        if not keep:
            return [], LOSS  # every piece left is deadly: the opponent wins next
        return keep, None

    def playout_move(self, state: QuartoState, rng: random.Random) -> QuartoMove:
        held = state.held
        if held == EMPTY:
            return NONE << 5 | rng.choice(state.unused)
        wins = winning_squares(state)
        if wins:
            return PLACE_ONLY[rng.choice(wins)]
        if len(state.empties) == 1:
            return PLACE_ONLY[state.empties[0]]
        squares = list(state.empties)
        rng.shuffle(squares)
        for square in squares:
            gives = safe_gives(state, square)
            if gives:
                return square << 5 | rng.choice(gives)
        return squares[0] << 5 | rng.choice(state.unused)  # every give loses

    def exact_ready(self, state: QuartoState) -> bool:
        return state.held != EMPTY and len(state.empties) <= EXACT_EMPTIES

    def key(self, state: QuartoState) -> Hashable:
        return (state.board, state.held)

    def order(self, state: QuartoState, moves: Sequence[QuartoMove]) -> list[QuartoMove]:
        if state.held == EMPTY:
            return list(moves)
        # Deadly gives lose at once: drop them (the search sees a loss if none is left).
        return self.safe(state, moves)
