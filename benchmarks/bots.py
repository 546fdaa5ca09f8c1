"""Strength and think time of the built-in bots (pbm.bots), per game, default options.

For every game it plays matches with the seats alternated (game i: the first-named side
takes the first player's seat when i is even) and prints the share of the points the
first-named side took (a win 1, a draw 1/2, a resignation 0):
  L4-rand  level 4 against a uniformly random player   (target: at least 95 %)
  L4-L1    level 4 against level 1                      (target: at least 75 %)
  L2-L1, L3-L2, L4-L3  each level against the one below (target: above 55 %)
and the think time of the bots' moves (median and maximum over every move of levels 1 to
4 in all the matches; target: within the budget plus 10 %).

Usage: python benchmarks/bots.py [--games N] [--seconds S] [GAME ...]
The full run is --games 40 --seconds 2 (the defaults); a short one: --games 6
--seconds 0.2. Runs in one process, on one core.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbm.app import register
from pbm.bots.engine import choose, seed_for
from pbm.games import GAMES, AnyGame, get_game

RANDOM = 0  # the uniformly random player, as a "level"
MATCHES = (("L4-rand", 4, RANDOM, 95.0), ("L4-L1", 4, 1, 75.0), ("L2-L1", 2, 1, 55.0),
           ("L3-L2", 3, 2, 55.0), ("L4-L3", 4, 3, 55.0))  # fmt: skip


def play(
    game: AnyGame, levels: tuple[int, int], seconds: float, seed: int, times: list[float]
) -> float:
    """One game between players at `levels` (by challenge order); player 0's points."""
    state = game.new_state()
    rng = random.Random(seed)
    ply = 0
    while (seat := game.to_move(state)) is not None:
        player = game.player_seats(state).index(seat)
        level = levels[player]
        if level == RANDOM:
            move = rng.choice(game.legal_moves(state))
        else:
            started = time.perf_counter()
            decision = choose(
                game, state, seat, level=level, seconds=seconds, seed=seed_for(seed, ply)
            )
            times.append(time.perf_counter() - started)
            if decision.move is None:  # resigned
                return float(player)
            move = decision.move
        state = game.apply(state, move)
        ply += 1
    outcome = game.outcome(state)
    assert outcome is not None
    if outcome.winner is None:
        return 0.5
    return 1.0 if game.player_seats(state)[0] == outcome.winner else 0.0


def match(
    game: AnyGame, first: int, second: int, games: int, seconds: float, times: list[float]
) -> float:
    """The share of the points (percent) that `first` took, seats alternated."""
    points = 0.0
    for index in range(games):
        seed = index + 1000 * first + 100 * second
        if index % 2 == 0:
            points += play(game, (first, second), seconds, seed, times)
        else:
            points += 1.0 - play(game, (second, first), seconds, seed, times)
    return 100.0 * points / games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="games (default: all)")
    parser.add_argument("--games", type=int, default=40, help="games per match")
    parser.add_argument("--seconds", type=float, default=2.0, help="time budget per move")
    args = parser.parse_args()
    games = [get_game(n) for n in args.names] if args.names else list(GAMES.values())
    header = f"{'game':<11}" + "".join(f"{name:>9}" for name, *_ in MATCHES)
    # Think times are wall-clock: other work on the machine shows in them.
    load = os.getloadavg()[0]
    print(
        f"{args.games} games per match, {args.seconds} s per move, seats alternated"
        f" (load average {load:.1f} at the start)"
    )
    print(header + f"{'median s':>10}{'max s':>8}{'minutes':>9}")
    for game in games:
        started = time.perf_counter()
        times: list[float] = []
        cells = []
        for _name, first, second, target in MATCHES:
            share = match(game, first, second, args.games, args.seconds, times)
            ok = share >= target if target >= 75 else share > target
            cells.append(f"{share:>8.0f}{'' if ok else '!'}".rjust(9))
        minutes = (time.perf_counter() - started) / 60
        median = statistics.median(times) if times else 0.0
        longest = max(times, default=0.0)
        late = "" if longest <= args.seconds * 1.1 else "!"
        print(
            f"{game.name:<11}"
            + "".join(cells)
            + f"{median:>10.3f}{longest:>8.3f}{late:1}{minutes:>8.1f}"
        )
    limit = args.seconds * 1.1
    print(f"targets: L4-rand >= 95, L4-L1 >= 75, others > 55 (! = missed); max <= {limit:.3f} s")


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()
