"""Rules-engine speed, per game, on one core.

Prints, for every registered game (default options, plus each option set with -a):
  - microseconds per `legal_moves` call, on positions sampled from random games;
  - random-play plies per second: list the legal moves, pick one at random, apply it,
    check the outcome (one ply = one player's turn), restarting when a game ends.
Usage: python benchmarks/rules.py [--seconds S] [--all-options] [GAME ...]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbm.app import register
from pbm.games import GAMES, get_game

# Targets from the rules issues (random-play plies per second, default options).
TARGETS = {
    "quarto": 100_000,
    "quadrature": 20_000,
    "quadrupel": 20_000,
    "quad": 30_000,
    "quarod": 20_000,
}


def sample_positions(game, options, count, rng):
    positions = []
    while len(positions) < count:
        state = game.new_state(**options)
        while game.to_move(state) is not None and len(positions) < count:
            positions.append(state)
            state = game.apply(state, rng.choice(game.legal_moves(state)))
    return positions


def legal_moves_us(game, positions, seconds):
    calls = 0
    legal = game.legal_moves
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for state in positions:
            legal(state)
        calls += len(positions)
    return (time.perf_counter() - start) / calls * 1e6


def plies_per_second(game, options, seconds, rng):
    new_state, legal, apply = game.new_state, game.legal_moves, game.apply
    outcome, choice = game.outcome, rng.choice
    plies = games = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        state = new_state(**options)
        games += 1
        # One ply: list the legal moves, pick one, apply it, check the outcome.
        while True:
            state = apply(state, choice(legal(state)))
            plies += 1
            if outcome(state) is not None:
                break
    elapsed = time.perf_counter() - start
    return plies / elapsed, plies / games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="*", help="games to measure (default: all)")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument("-a", "--all-options", action="store_true", help="every example option set")
    args = parser.parse_args()
    games = [get_game(n) for n in args.games] if args.games else list(GAMES.values())
    print(
        f"{'game':<12} {'options':<34} {'legal_moves us':>14} {'plies/s':>10} "
        f"{'plies/game':>10} {'target':>8}"
    )
    for game in games:
        option_sets = game.example_options if args.all_options else game.example_options[:1]
        for options in option_sets:
            rng = random.Random(1)
            positions = sample_positions(game, options, 500, rng)
            us = legal_moves_us(game, positions, args.seconds / 2)
            rate, length = plies_per_second(game, options, args.seconds, rng)
            target = TARGETS.get(game.name) if options == game.example_options[0] else None
            verdict = "" if target is None else f"{target:>8,} {'ok' if rate >= target else 'MISS'}"
            label = ",".join(f"{k}={v}" for k, v in options.items()) or "default"
            print(
                f"{game.name:<12} {label[:34]:<34} {us:>14.2f} {rate:>10,.0f} "
                f"{length:>10.1f} {verdict}"
            )


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()
