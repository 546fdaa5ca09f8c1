"""What the engine knows of a game beyond its rules, with defaults that work for any game
through the game protocol (pbm/games/base.py).

The search (pbm/bots/mcts.py, pbm/bots/exact.py) and the one-move player meet a game only
through a `Tactics` object: its defaults apply every move and look at the outcome, and
each game's module (quarto_tactics.py, ...) overrides what it can do faster or better:
finding the moves that end the game at once, guiding playouts, judging a cut-off
position, hiding what a seat may not see.

Players, not seats: a value is always the score of the player named first in the
challenge (1 a win, 0.5 a draw, 0 a loss), and the player to move is found through
`player_seats`, so Quarod's pie switch (which exchanges the seats) needs no special case.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Hashable, Sequence

from pbm.games import AnyGame
from pbm.games.base import Move, State

WIN, DRAW, LOSS = 1.0, 0.5, 0.0


class Clock:
    """A deadline on the monotonic clock; `None` seconds never expire."""

    __slots__ = ("deadline",)

    def __init__(self, seconds: float | None) -> None:
        self.deadline = math.inf if seconds is None else time.perf_counter() + max(seconds, 0.0)

    def expired(self) -> bool:
        return time.perf_counter() >= self.deadline

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def part(self, fraction: float) -> Clock:
        """A clock expiring after `fraction` of the time left (never after this one)."""
        left = self.left()
        return Clock(None if math.isinf(left) else left * fraction)


def flip(value: float, player: int) -> float:
    """A player-0 value seen by `player`, or the reverse (the same arithmetic)."""
    return value if player == 0 else 1.0 - value


class Tactics:
    """The defaults: correct for every game, fast enough for short games.

    Subclasses set `playout_depth` (cut playouts there and `evaluate`, None to play to the
    end) and override what their game allows to do better.
    """

    playout_depth: int | None = None
    # Whether `finishing` is cheap enough to run at every new tree node.
    tree_tactics = True

    def __init__(self, game: AnyGame) -> None:
        self.game = game

    # -- players and results -------------------------------------------------------
    def player(self, state: State) -> int | None:
        """The player (challenge order) to move, or None when the game is over."""
        seat = self.game.to_move(state)
        if seat is None:
            return None
        return self.game.player_seats(state).index(seat)

    def result(self, state: State) -> float:
        """The value of a finished game for player 0."""
        outcome = self.game.outcome(state)
        if outcome is None or outcome.winner is None:
            return DRAW
        return WIN if self.game.player_seats(state)[0] == outcome.winner else LOSS

    # -- hidden information --------------------------------------------------------
    def redact(self, state: State, seat: int) -> State:
        """The state with what `seat` may not see erased (or made up the same way for
        every hidden content), so that nothing the bot decides depends on it."""
        return state

    def hidden(self, state: State, seat: int) -> bool:
        """Whether a redacted state hides something that `determinize` must fill in."""
        return False

    def determinize(self, state: State, seat: int, rng: random.Random) -> State:
        """One guess of the hidden part of a redacted state, drawn with `rng`."""
        return state

    # -- moves whose value is known at once ----------------------------------------
    def finishing(self, state: State, moves: Sequence[Move]) -> dict[Move, float]:
        """The moves among `moves` whose exact value for the player to move is known
        at once (they end the game, or start a phase solved exactly)."""
        apply, player = self.game.apply, self.player(state)
        known: dict[Move, float] = {}
        for move in moves:
            after = apply(state, move)
            if self.game.to_move(after) is None:
                known[move] = flip(self.result(after), player or 0)
        return known

    def threatened(self, state: State, move: Move) -> bool:
        """Whether after `move` the opponent, to move, has a winning move at once."""
        after = self.game.apply(state, move)
        nxt = self.player(after)
        if nxt is None or nxt == self.player(state):
            return False
        return WIN in self.finishing(after, self.game.legal_moves(after)).values()

    def safe(self, state: State, moves: Sequence[Move]) -> list[Move]:
        """The moves after which the opponent cannot win at once (must-block). Every move
        is checked, whatever the clock says: a level promises this check."""
        return [move for move in moves if not self.threatened(state, move)]

    def tree_moves(self, state: State, moves: list[Move]) -> tuple[list[Move], float | None]:
        """The moves a new tree node searches, or its exact value for the player to move
        when the moves that end the game at once decide it (a win, or nothing but
        losses). Moves that lose at once are dropped while others remain."""
        known = self.finishing(state, moves)
        if known:
            best = max(known.values())
            if best == WIN or len(known) == len(moves):
                return [], best
            moves = [m for m in moves if known.get(m) != LOSS]
        return moves, None

    def expansion_order(self, state: State, moves: list[Move], rng: random.Random) -> list[Move]:
        """The order in which a tree node tries its moves, the first to try last (it is
        popped): at random, unless the game knows which moves to look at first."""
        rng.shuffle(moves)
        return moves

    def one_move(
        self, state: State, moves: Sequence[Move], rng: random.Random, clock: Clock
    ) -> Move:
        """Level 1's choice among moves that neither win nor lose at once (a game that
        thinks about it reads `clock`)."""
        return rng.choice(list(moves))

    # -- playouts ------------------------------------------------------------------
    def playout_move(self, state: State, rng: random.Random) -> Move:
        """The next move of a playout: uniformly random unless a game guides it."""
        return rng.choice(self.game.legal_moves(state))

    def evaluate(self, state: State) -> float:
        """A guess of the value for player 0 of a running game (playout cut-off)."""
        return DRAW

    # -- exact search --------------------------------------------------------------
    def exact_ready(self, state: State) -> bool:
        """Whether an exact search of this position is worth trying."""
        return False

    def key(self, state: State) -> Hashable:
        """What identifies a position for the exact search's table."""
        key: Hashable = state
        return key

    def order(self, state: State, moves: Sequence[Move]) -> list[Move]:
        """The moves an exact search tries, best first; it may drop moves that lose at
        once when a move that does not exists (they cannot change the value)."""
        return list(moves)


def sigmoid(x: float) -> float:
    """A score difference squashed into a value between 0 and 1."""
    return 1.0 / (1.0 + math.exp(-x))
