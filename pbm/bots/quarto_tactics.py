"""Quarto's tactics: winning placements, the safe-piece rule, guided playouts, and an exact
endgame search once few squares are empty.

The rules (docs/games/quarto.md): a placement that completes a quarto wins at once, and
the piece you give is the piece your opponent places. So a piece is deadly when some
empty square would make a quarto with it, and giving a deadly piece while a harmless one
exists loses at once: never do it. Everything here works on the rules module's packed
group counters (pbm/games/quarto_lines.py): a placement is one addition and one AND.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence

from pbm.bots.exact import OutOfTime, Solver
from pbm.bots.tactics import DRAW, LOSS, WIN, Tactics
from pbm.games.quarto import EMPTY, NONE, PLACE_ONLY, QuartoMove, QuartoState
from pbm.games.quarto_lines import Variant

# Try the exact search from this many empty squares on (a few seconds' worth at 9 with
# the pruning below; the time budget stops it otherwise).
EXACT_EMPTIES = 9


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


class QuartoSolver(Solver):
    """The exact search on Quarto's own numbers, several times faster than the generic
    one: a position is its packed counters, the empty squares, the pieces left and the
    held piece (what decides the rest of the game), and deadly gives are never tried."""

    def solve(self, state: QuartoState, moves: Sequence[int]) -> tuple[float, list[int]] | None:
        var = state.variant
        self.add, self.every, self.fours = var.add, var.add_everywhere, var.fours
        held, empties, unused = state.held, state.empties, state.unused
        values: dict[int, float] = {}
        try:
            for move in moves:
                square, give = move >> 5, move & 31
                sums = state.sums + self.add[held][square]
                if sums & self.fours:
                    value = WIN
                elif len(empties) == 1:
                    value = DRAW
                else:
                    rest = tuple(e for e in empties if e != square)
                    left = tuple(p for p in unused if p != give)
                    value = WIN - self._negamax(sums, rest, left, give, LOSS, WIN)
                values[move] = value
                if value == WIN:
                    break
        except OutOfTime:
            return None
        if not values:
            return LOSS, list(moves)
        best = max(values.values())
        return best, [m for m, v in values.items() if v == best]

    def _negamax(
        self, sums: int, empties: tuple[int, ...], unused: tuple[int, ...], held: int,
        alpha: float, beta: float,
    ) -> float:  # fmt: skip
        """The value for the player who places `held` (1 win, 0.5 draw, 0 loss)."""
        self.tick()
        add, fours = self.add, self.fours
        held_add = add[held]
        if (sums + self.every[held]) & fours:
            for square in empties:
                if (sums + held_add[square]) & fours:
                    return WIN
        if len(empties) == 1:
            return DRAW  # the 16th piece, and no quarto
        key = (sums, empties, unused, held)
        low, high = self.table.get(key, (LOSS, WIN))
        if low >= beta or low == high:
            return low
        if high <= alpha:
            return high
        alpha, beta = max(alpha, low), min(beta, high)
        start_alpha, start_beta = alpha, beta
        best = LOSS  # stays a loss if every give is deadly
        every = self.every
        for square in empties:
            after = sums + held_add[square]
            rest = tuple(e for e in empties if e != square)
            for give in unused:
                if (after + every[give]) & fours:
                    give_add = add[give]
                    if any((after + give_add[e]) & fours for e in rest):
                        continue  # deadly: the opponent would win at once
                left = tuple(p for p in unused if p != give)
                value = WIN - self._negamax(
                    after, rest, left, give, WIN - beta, WIN - max(alpha, best)
                )
                if value > best:
                    best = value
                    if best >= beta:
                        break
            if best >= beta:
                break
        if best <= start_alpha:
            self.store(key, low, best)
        elif best >= start_beta:
            self.store(key, best, high)
        else:
            self.store(key, best, best)
        return best
