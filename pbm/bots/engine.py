"""The built-in engine: `choose` picks a bot's move in any game and variant.

Levels (docs/bots.md):
  1  a one-move tactical player: takes a win, never lets the opponent win on the next
     move if it can help it, otherwise plays at random;
  2  adds a short tree search (a tenth of the time) with uniformly random playouts;
  3  a longer search (a quarter of the time) with the game's guided playouts and the
     exact endgame search;
  4  all of it with the whole time budget, and the game's tactics at every tree node.

Every level first runs the checks it promises (take a win in one, never allow a win in
one when a move avoids it): they are never cut by the clock, and a budget they alone
exceed is logged as too small (docs/bots.md, "The checks every level keeps").

Hidden information stays hidden: the position is first redacted to what the bot's seat
may see (Quadrupel's blind setups), and where something is hidden the search runs over
several guesses of it, drawn at random, and adds their votes. A fixed seed with an
iteration cap gives the same decision on any machine; the clock still bounds the time.

Resigning: the bot resigns only a position it finds lost, and only when the loss is at
hand (every move loses at once or lets the opponent win at once). A position a search
proves lost further on is played on, with the move that leaves the opponent the most
chances to go wrong; its verdict LOST makes the bot accept a draw proposal.
"""

from __future__ import annotations

import hashlib
import logging
import random
import time
from dataclasses import dataclass

from pbm.bots.exact import Solver
from pbm.bots.mcts import ChildStat, Search, best_child
from pbm.bots.quad_tactics import QuadTactics
from pbm.bots.quadrature_tactics import QuadratureTactics
from pbm.bots.quadrupel_tactics import QuadrupelTactics
from pbm.bots.quarod_tactics import QuarodTactics
from pbm.bots.quarto_exact import QuartoExact
from pbm.bots.quarto_tactics import QuartoTactics
from pbm.bots.tactics import DRAW, LOSS, WIN, Clock, Tactics
from pbm.games import AnyGame
from pbm.games.base import Move, State

log = logging.getLogger(__name__)

LEVELS = (1, 2, 3, 4)
WON, LOST, DRAWN, UNCLEAR = "won", "lost", "drawn", "unclear"

# The share of the time (and of the iteration cap) each level searches for, whether its
# playouts follow the game's guidance, whether the game's tactics run at every tree node,
# and whether it tries the exact endgame search.
_SHARE = {2: 0.1, 3: 0.25, 4: 1.0}
_GUIDED = {2: False, 3: True, 4: True}
_TREE_TACTICS = {2: False, 3: False, 4: True}
_EXACT = {2: False, 3: True, 4: True}
# The time kept back for leaving the search and answering: a share of the budget, and
# at least a few hundredths of a second (a garbage collection, a busy machine), but
# never more than half of it.
_MARGIN = 0.08
_MARGIN_SECONDS = 0.03
# Share of the search time an exact endgame attempt may take.
_EXACT_SHARE = 0.5
# With an iteration cap, the exact search may visit this many positions per iteration
# (so that whether it finishes does not depend on the machine either).
_EXACT_NODES_PER_ITERATION = 50
# Guesses of hidden information searched (Quadrupel's blind setup).
_DETERMINIZATIONS = 6
# Without proof, the bot takes a draw when this share of the chosen move's playouts
# ended drawn and it expects no more than _DRAWISH_VALUE, or when it expects less than
# _LOST_ESTIMATE (a clearly lost position).
_DRAWISH = 0.6
_DRAWISH_VALUE = 0.55
_LOST_ESTIMATE = 0.1

_TACTICS: dict[str, type[Tactics]] = {
    "quarto": QuartoTactics,
    "quad": QuadTactics,
    "quadrupel": QuadrupelTactics,
    "quarod": QuarodTactics,
    "quadrature": QuadratureTactics,
}

_SOLVERS: dict[str, type[Solver] | type[QuartoExact]] = {"quarto": QuartoExact}


@dataclass(frozen=True, slots=True)
class Decision:
    """What the bot plays, and what it thinks of the position.

    `move` is None exactly when the bot resigns (`text` is then "resign"). `verdict` is
    WON, LOST or DRAWN when a search proved it (perfect play by both sides), else UNCLEAR;
    `value` is the bot's expected score (1 a win, 0.5 a draw, 0 a loss).
    """

    move: Move | None
    text: str
    verdict: str
    value: float
    level: int
    iterations: int
    seconds: float
    drawish: bool = False  # unproven: most of the search's games ended drawn
    # The exact search's root moves whose value it proved, and the moves it had to
    # prove: (3, 40) when it ran out of time after three of forty (verdict UNCLEAR, or
    # DRAWN when Quarto's search had shown that no move wins and one of them draws).
    proved: tuple[int, int] = (0, 0)

    @property
    def resign(self) -> bool:
        return self.move is None

    @property
    def accepts_draw(self) -> bool:
        """Whether the bot agrees to a draw proposal: only in a position its search
        finds drawn or lost (proved, or by a clear estimate)."""
        if self.verdict in (LOST, DRAWN):
            return True
        if self.verdict == WON:
            return False
        return self.value < _LOST_ESTIMATE or (self.drawish and self.value <= _DRAWISH_VALUE)


def tactics_for(game: AnyGame) -> Tactics:
    """The engine's knowledge of `game` (the protocol's defaults for an unknown game)."""
    return _TACTICS.get(game.name, Tactics)(game)


def seed_for(*parts: object) -> int:
    """A seed made from a game's identity (board number, ply ...): the same position in
    the same game always gets the same decision, and different games differ."""
    text = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big")


def choose(
    game: AnyGame,
    state: State,
    seat: int,
    *,
    level: int = 4,
    seconds: float = 2.0,
    seed: int = 0,
    iterations: int | None = None,
) -> Decision:
    """The bot's decision for `seat`, which must be to move in `state`.

    `seconds` bounds the thinking time; `iterations`, if given, caps the tree search's
    iterations (scaled by level) so that a result does not depend on the machine.
    """
    started = time.perf_counter()
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, not {level}")
    if game.to_move(state) != seat:
        raise ValueError(f"seat {seat} is not to move")
    tactics = tactics_for(game)
    view = tactics.redact(state, seat)
    rng = random.Random(seed)
    think = _Thinking(tactics, view, seat, level, rng, seconds, iterations)
    move, verdict, value, drawish = think.decide()
    elapsed = time.perf_counter() - started
    text = "resign" if move is None else game.format_move(state, move)
    return Decision(
        move, text, verdict, value, level, think.iterations, elapsed, drawish, think.proved
    )


class _Thinking:
    """One decision: root tactics, then the exact search or the tree search."""

    def __init__(
        self,
        tactics: Tactics,
        view: State,
        seat: int,
        level: int,
        rng: random.Random,
        seconds: float,
        iterations: int | None,
    ) -> None:
        self.tactics = tactics
        self.game = tactics.game
        self.view = view
        self.seat = seat
        self.level = level
        self.rng = rng
        self.seconds = seconds
        self.started = time.perf_counter()
        self.clock = Clock(seconds - min(max(seconds * _MARGIN, _MARGIN_SECONDS), seconds / 2))
        self.cap = iterations
        self.iterations = 0
        self.proved = (0, 0)

    def decide(self) -> tuple[Move | None, str, float, bool]:
        tactics, view = self.tactics, self.view
        moves = self.game.legal_moves(view)
        hidden = tactics.hidden(view, self.seat)
        known = {} if hidden else tactics.finishing(view, moves)
        wins = [m for m in moves if known.get(m) == WIN]
        if wins:
            return wins[0], WON, WIN, False
        if len(moves) == 1:
            return moves[0], UNCLEAR, known.get(moves[0], DRAW), False
        candidates = [m for m in moves if known.get(m) != LOSS]
        if not hidden:
            candidates = tactics.safe(view, candidates)
        if self.clock.expired():
            # The promised checks ran to the end anyway: the answer is late, not wrong.
            log.warning(
                "bot budget too small: %s level %d, %.3f s given, the checks took %.3f s",
                self.game.name,
                self.level,
                self.seconds,
                time.perf_counter() - self.started,
            )
        if not candidates:
            # Every move loses at once or lets the opponent win at once: resign.
            return None, LOST, LOSS, False
        if self.level == 1:
            return self._one_move(candidates, known)
        if _EXACT[self.level] and not hidden and tactics.exact_ready(view):
            solved, candidates = self._exact(candidates)
            if solved is not None:
                return solved
        return self._search(candidates, hidden)

    def _one_move(
        self, candidates: list[Move], known: dict[Move, float]
    ) -> tuple[Move | None, str, float, bool]:
        open_moves = [m for m in candidates if m not in known]
        choice = self.tactics.one_move(self.view, open_moves or candidates, self.rng, self.clock)
        return choice, UNCLEAR, known.get(choice, DRAW), False

    def _exact(
        self, candidates: list[Move]
    ) -> tuple[tuple[Move | None, str, float, bool] | None, list[Move]]:
        """The decision when the exact search finishes (or proves a win), and the moves
        left for the tree search: those it did not prove lost."""
        nodes = None if self.cap is None else self.cap * _EXACT_NODES_PER_ITERATION
        solver_class = _SOLVERS.get(self.game.name, Solver)
        clock = self.clock.part(_EXACT_SHARE * _SHARE[self.level])
        solver = solver_class(self.tactics, clock, nodes)
        solved = solver.solve(self.view, candidates)
        proved = solver.proved
        self.proved = (len(proved), len(candidates))
        if solved is None:
            # Out of time: a proved win is played, moves proved lost are left out.
            wins = [m for m, v in proved.items() if v == WIN]
            if wins:
                return (wins[0], WON, WIN, False), candidates
            alive = [m for m in candidates if proved.get(m) != LOSS]
            return None, alive or candidates
        return self._exact_choice(*solved), candidates

    def _exact_choice(self, value: float, best: list[Move]) -> tuple[Move | None, str, float, bool]:
        if value == WIN:
            return best[0], WON, WIN, False
        verdict = LOST if value == LOSS else DRAWN
        # A draw or a loss under best play: the search picks, among the moves that keep
        # the value, the one that gives the opponent the most chances to go wrong (the
        # bot plays a lost position on while the opponent still has to find the win).
        if len(best) == 1:
            return best[0], verdict, value, True
        move, _verdict, _value, _drawish = self._search(best, False)
        return move, verdict, value, value == DRAW

    def _search(self, candidates: list[Move], hidden: bool) -> tuple[Move | None, str, float, bool]:
        share = _SHARE[self.level]
        clock = self.clock.part(share)
        cap = None if self.cap is None else max(1, round(self.cap * share))
        rounds = _DETERMINIZATIONS if hidden else 1
        tallies = {m: _Tally() for m in candidates}
        proofs: list[float | None] = []
        for index in range(rounds):
            state = self.view
            if hidden:
                state = self.tactics.determinize(self.view, self.seat, self.rng)
            search = Search(
                self.tactics,
                state,
                candidates,
                self.rng,
                guided=_GUIDED[self.level],
                tree_tactics=_TREE_TACTICS[self.level],
            )
            search.run(clock.part(1 / (rounds - index)), None if cap is None else -(-cap // rounds))
            self.iterations += search.iterations
            proofs.append(search.proven())
            for stat in search.stats():
                tallies[stat.move].add(stat, first=index == 0)
        if not any(tally.visits for tally in tallies.values()):
            return self._one_move(candidates, {})  # no time was left to search
        stats = [tally.stat(move, rounds) for move, tally in tallies.items()]
        chosen = best_child(stats)
        # With hidden information a value is proven only when every guess proves it.
        proven = proofs[0] if all(p == proofs[0] for p in proofs) else None
        verdict = UNCLEAR if proven is None else {WIN: WON, DRAW: DRAWN, LOSS: LOST}[proven]
        drawish = chosen.visits > 0 and chosen.draws >= _DRAWISH * chosen.visits
        return chosen.move, verdict, chosen.value, drawish


class _Tally:
    """One root move's statistics added over the searches of several guesses."""

    __slots__ = ("draws", "proven", "rounds", "total", "visits")

    def __init__(self) -> None:
        self.rounds = 0
        self.visits = 0
        self.total = 0.0
        self.draws = 0
        self.proven: float | None = None

    def add(self, stat: ChildStat, *, first: bool) -> None:
        self.rounds += 1
        self.visits += stat.visits
        self.total += stat.value * stat.visits
        self.draws += stat.draws
        self.proven = stat.proven if first or self.proven == stat.proven else None

    def stat(self, move: Move, rounds: int) -> ChildStat:
        value = self.total / self.visits if self.visits else DRAW
        proven = self.proven if self.rounds == rounds else None
        return ChildStat(move, self.visits, value, self.draws, proven)
