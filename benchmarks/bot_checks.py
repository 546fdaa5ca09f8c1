"""The cost of the checks every bot level runs before any search (pbm/bots/engine.py):
the moves that win or lose at once (`finishing`) and the must-block check (`safe`), which
the clock never cuts.

For every game and option set of its examples it plays seeded uniformly random games and
times the checks in every position a bot could meet (the side to move sees everything),
in CPU time (time.process_time: other work on a shared machine does not show in it),
and prints the median and the worst position, in milliseconds, with the worst one's
position text.

Usage: python benchmarks/bot_checks.py [--games N] [--plies N] [GAME ...]
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
from pbm.bots.engine import tactics_for
from pbm.bots.tactics import LOSS
from pbm.games import GAMES, AnyGame
from pbm.games.base import State


def checks_seconds(game: AnyGame, state: State) -> float:
    """CPU seconds of the root checks in `state`, as the engine runs them."""
    tactics = tactics_for(game)
    seat = game.to_move(state)
    assert seat is not None
    view = tactics.redact(state, seat)
    if tactics.hidden(view, seat):
        return 0.0  # a blind setup: nothing to check (docs/bots.md, hidden information)
    started = time.process_time()
    moves = game.legal_moves(view)
    known = tactics.finishing(view, moves)
    tactics.safe(view, [m for m in moves if known.get(m) != LOSS])
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=15, help="random games per option set")
    parser.add_argument("--plies", type=int, default=400, help="plies at most per game")
    parser.add_argument("names", nargs="*", help="games (default: all)")
    args = parser.parse_args()
    names = args.names or list(GAMES)
    print(f"{args.games} seeded random games per option set, CPU time of the root checks")
    print(f"{'game':<40}{'positions':>10}{'median ms':>11}{'worst ms':>10}  worst position")
    for name in names:
        game = GAMES[name]
        for options in game.example_options:
            times: list[tuple[float, str]] = []
            for seed in range(args.games):
                rng = random.Random(seed)
                state = game.new_state(**options)
                for _ in range(args.plies):
                    if game.to_move(state) is None:
                        break
                    times.append((checks_seconds(game, state), game.dump(state)))
                    state = game.apply(state, rng.choice(game.legal_moves(state)))
            label = name + "".join(f" {k}={v}" for k, v in options.items())
            median = statistics.median(t for t, _ in times)
            worst, text = max(times)
            shown = text if len(text) <= 90 else text[:87] + "..."
            figures = f"{len(times):>10}{median * 1000:>11.2f}{worst * 1000:>10.1f}"
            print(f"{label:<40}{figures}  {shown}")


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()
