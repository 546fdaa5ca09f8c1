"""Quarod's pie decision against its budget: every level decides the pie (keep the
opening or swap seats) at `--seconds` a move (0.05 by default), `--seeds` seeds each,
and the CPU time of each decision is printed against the budget and 10 % (issue 28:
before the clock was read in the pie's playouts, level 1 took twice its budget).

CPU time, which a loaded machine cannot stretch: the bot stops by the wall clock, so
its CPU time is at most its wall time.

    .venv/bin/python benchmarks/pie_budget.py [--seconds 0.05] [--seeds 20]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbm.app import register
from pbm.bots.engine import LEVELS, choose
from pbm.games import GAMES
from pbm.games.quarod_board import PIE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=0.05, help="budget per decision")
    parser.add_argument("--seeds", type=int, default=20, help="decisions per level")
    args = parser.parse_args()
    game = GAMES["quarod"]
    state = game.new_state()
    state = game.apply(state, random.Random(3).choice(game.legal_moves(state)))
    assert PIE in game.legal_moves(state), "not a pie position"
    seat = game.to_move(state)
    assert seat is not None
    choose(game, state, seat, level=1, seconds=args.seconds, seed=99)  # tables built once
    bound = args.seconds * 1.1
    print(f"Quarod pie decision at {args.seconds:g} s, {args.seeds} seeds; CPU ms")
    print(f"{'level':>5} {'median':>7} {'max':>7}  within {bound * 1000:.0f} ms")
    for level in LEVELS:
        used = []
        for seed in range(args.seeds):
            started = time.process_time()
            choose(game, state, seat, level=level, seconds=args.seconds, seed=seed)
            used.append(time.process_time() - started)
        within = sum(u <= bound for u in used)
        print(
            f"{level:>5} {statistics.median(used) * 1000:>7.1f} {max(used) * 1000:>7.1f}"
            f"  {within}/{len(used)}"
        )


if __name__ == "__main__":
    register()  # the games (pbm.app)
    main()
