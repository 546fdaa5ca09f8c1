"""A ladder that rates the bots: Elo with 95 % intervals, per game.

Players: the built-in engine at levels 1 to 4 (its parameter sets: the share of the
time searched, guided playouts, tactics in the tree, the exact endgame search; see
docs/bots.md) and an independent baseline written here, plain UCT with uniformly random
playouts to the end of the game and no game knowledge, which shares no code with
pbm/bots: it meets the games only through their protocol (pbm.games).

Every pair plays --games games per game with the seats alternated (round by round over
all the pairs, so that a time bound leaves every pair with about as many games), at
--budget seconds a move, in one process on one core. Ratings are the maximum-likelihood
Elo of the Bradley-Terry model (a draw is half a win), with one virtual draw between
every pair as a prior (it keeps a player who won every game at a finite rating), the
baseline fixed at 0; the 95 % interval is the 2.5th to 97.5th percentile of 200
bootstrap resamplings of the games.

Usage: python benchmarks/bot_ladder.py [--games N] [--seconds S] [--budget B] [--cpu-clock]
       [GAME ...]
--seconds bounds the whole run (shared evenly by the games, what a game leaves unused
going to the next ones; it is read before every game, and a game in progress is
finished). The full ladder is --games 20 --budget 2 (many hours on one core). Budgets are
wall-clock, as in play: under each game's row it prints the median CPU seconds each
player used a move, which shows how much of the budget a loaded machine left it. With
--cpu-clock every player's budget (the bots' and the baseline's) is CPU time instead
(benchmarks/cpu_clock.py): each player thinks as if it had a core to itself.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import random
import statistics
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cpu_clock import count_budgets_in_cpu_time
from pbm.app import register
from pbm.bots.engine import choose, seed_for
from pbm.games import GAMES, AnyGame
from pbm.games.base import Move, State

BASELINE = "UCT"
PLAYERS = ("L1", "L2", "L3", "L4", BASELINE)
EXPLORATION = math.sqrt(2)
BOOTSTRAPS = 200
# The baseline's clock: wall time, or CPU time with --cpu-clock.
now = time.perf_counter


# -- the baseline: plain UCT -----------------------------------------------------------


class _Node:
    __slots__ = ("children", "move", "mover", "score", "state", "untried", "visits")

    def __init__(self, game: AnyGame, state: State, move: Move | None, mover: int | None) -> None:
        self.state = state
        self.move = move
        self.mover = mover  # the player (challenge order) who made `move`
        self.children: list[_Node] = []
        self.untried = list(game.legal_moves(state)) if game.to_move(state) is not None else []
        self.visits = 0
        self.score = 0.0  # points of `mover` over the visits


def _player(game: AnyGame, state: State) -> int:
    seat = game.to_move(state)
    assert seat is not None
    return game.player_seats(state).index(seat)


def _points(game: AnyGame, state: State, player: int) -> float:
    outcome = game.outcome(state)
    assert outcome is not None
    if outcome.winner is None:
        return 0.5
    return 1.0 if game.player_seats(state).index(outcome.winner) == player else 0.0


def uct_move(game: AnyGame, state: State, seconds: float, rng: random.Random) -> Move:
    """Plain UCT: UCB1 down the tree, one node added, a uniformly random playout."""
    deadline = now() + seconds * 0.92
    root = _Node(game, state, None, None)
    while now() < deadline:
        node, path = root, [root]
        while not node.untried and node.children:
            log_n = math.log(node.visits)
            node = max(
                node.children,
                key=lambda c: c.score / c.visits + EXPLORATION * math.sqrt(log_n / c.visits),
            )
            path.append(node)
        if node.untried:
            move = node.untried.pop(rng.randrange(len(node.untried)))
            mover = _player(game, node.state)
            child = _Node(game, game.apply(node.state, move), move, mover)
            node.children.append(child)
            path.append(child)
            node = child
        end = node.state
        while game.to_move(end) is not None:
            end = game.apply(end, rng.choice(game.legal_moves(end)))
        for step in path:
            step.visits += 1
            if step.mover is not None:
                step.score += _points(game, end, step.mover)
    if not root.children:
        return rng.choice(game.legal_moves(state))
    return max(root.children, key=lambda c: c.visits).move


# -- games and ratings --------------------------------------------------------------------


class LateChecks(logging.Handler):
    """Counts the engine's "budget too small" warnings instead of printing them."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def play(
    game: AnyGame, first: str, second: str, budget: float, seed: int, cpu: dict[str, list[float]]
) -> float:
    """One game, `first` as the player named first; the points of `first`. The CPU
    seconds of each move go to `cpu` by player."""
    state = game.new_state()
    rng = random.Random(seed)
    names = (first, second)
    ply = 0
    while (seat := game.to_move(state)) is not None:
        player = game.player_seats(state).index(seat)
        name = names[player]
        started = time.process_time()
        if name == BASELINE:
            move = uct_move(game, state, budget, rng)
        else:
            decision = choose(
                game, state, seat, level=int(name[1]), seconds=budget, seed=seed_for(seed, ply)
            )
            cpu[name].append(time.process_time() - started)
            if decision.move is None:  # resigned
                return float(player)
            move = decision.move
        if name == BASELINE:
            cpu[name].append(time.process_time() - started)
        state = game.apply(state, move)
        ply += 1
    return _points(game, state, 0)


def elo(results: list[tuple[int, int, float]], players: int, anchor: int) -> list[float]:
    """Maximum-likelihood Elo (Bradley-Terry, minorization-maximization) of `results`
    (i, j, points of i), with one virtual draw between every pair."""
    won = [0.0] * players
    games = [[0.0] * players for _ in range(players)]
    for i in range(players):
        for j in range(i + 1, players):
            won[i] += 0.5
            won[j] += 0.5
            games[i][j] += 1
            games[j][i] += 1
    for i, j, points in results:
        won[i] += points
        won[j] += 1.0 - points
        games[i][j] += 1
        games[j][i] += 1
    gamma = [1.0] * players
    for _ in range(500):
        for i in range(players):
            total = sum(games[i][j] / (gamma[i] + gamma[j]) for j in range(players) if j != i)
            gamma[i] = won[i] / total if total else gamma[i]
        scale = gamma[anchor]
        gamma = [g / scale for g in gamma]
    return [400 * math.log10(g) for g in gamma]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="games (default: all)")
    parser.add_argument("--games", type=int, default=20, help="games per pair and game")
    parser.add_argument("--seconds", type=float, default=None, help="bound of the whole run")
    parser.add_argument("--budget", type=float, default=2.0, help="seconds a move")
    parser.add_argument("--cpu-clock", action="store_true", help="budgets in CPU time")
    args = parser.parse_args()
    if args.cpu_clock:
        global now
        now = time.process_time
        count_budgets_in_cpu_time()
    names = args.names or list(GAMES)
    pairs = [(a, b) for i, a in enumerate(PLAYERS) for b in PLAYERS[i + 1 :]]
    late = LateChecks()
    engine_log = logging.getLogger("pbm.bots.engine")
    engine_log.addHandler(late)
    engine_log.propagate = False
    started = time.perf_counter()
    print(
        f"{args.games} games per pair, {args.budget} s{' of CPU' if args.cpu_clock else ''}"
        " a move, seats alternated, one core"
        f" (load average {os.getloadavg()[0]:.1f} at the start); Elo, {BASELINE} = 0"
    )
    print(f"{'game':<11}{'games':>6}" + "".join(f"{p:>17}" for p in PLAYERS) + f"{'minutes':>9}")
    for number, name in enumerate(names):
        game = GAMES[name]
        game_started = time.perf_counter()
        stop = None
        if args.seconds is not None:
            left = args.seconds - (game_started - started)
            stop = game_started + left / (len(names) - number)
        results: list[tuple[int, int, float]] = []
        cpu: dict[str, list[float]] = {p: [] for p in PLAYERS}
        for round_ in range(args.games):
            for a, b in pairs:
                if stop is not None and time.perf_counter() >= stop:
                    break  # checked before every game, so that a long round cannot overrun
                seed = zlib.crc32(f"{name} {a} {b} {round_}".encode())
                i, j = PLAYERS.index(a), PLAYERS.index(b)
                if round_ % 2 == 0:
                    results.append((i, j, play(game, a, b, args.budget, seed, cpu)))
                else:
                    results.append((j, i, play(game, b, a, args.budget, seed, cpu)))
        anchor = PLAYERS.index(BASELINE)
        ratings = elo(results, len(PLAYERS), anchor)
        rng = random.Random(7)
        samples = [
            elo([rng.choice(results) for _ in results], len(PLAYERS), anchor)
            for _ in range(BOOTSTRAPS)
        ]
        cells = []
        for p in range(len(PLAYERS)):
            spread = sorted(s[p] for s in samples)
            low, high = spread[int(0.025 * BOOTSTRAPS)], spread[int(0.975 * BOOTSTRAPS) - 1]
            cells.append(f"{ratings[p]:>6.0f} [{low:>4.0f},{high:>4.0f}]".rjust(17))
        minutes = (time.perf_counter() - game_started) / 60
        print(f"{name:<11}{len(results):>6}" + "".join(cells) + f"{minutes:>9.1f}", flush=True)
        medians = "".join(f"{statistics.median(cpu[p]) if cpu[p] else 0.0:>17.3f}" for p in PLAYERS)
        print(f"{'  CPU s/move':<17}{medians}", flush=True)
    print(
        f"run time {(time.perf_counter() - started) / 60:.1f} minutes; {late.count} moves"
        " whose checks alone took longer than the budget (wall clock)"
    )


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()
