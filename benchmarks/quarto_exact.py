"""Quarto's exact search (pbm/bots/quarto_exact.py) and the level-4 bot on it.

Positions: for each count of empty squares (7, 8, 9 and 10 by default, 75 each), seeded
games of safe random play (never a give that wins at once for the opponent while
another exists) stopped at that count with a piece held. For each position it prints:
  - the exact value of every legal move, timed in CPU seconds (median, max);
  - on positions with at most --minimax empty squares, the same values from plain
    minimax over the game protocol (a mismatch is counted and shown);
  - the level-4 decision at --seconds a move: the share of decisions that keep the
    position's exact value, and its CPU time (median, max), with the share of them
    whose verdict is proved (won, drawn or lost: the exact search found the value;
    the rest fell back to the tree search).
A second part checks the values against plain minimax on --small positions with five
and six empty squares.

Usage: python benchmarks/quarto_exact.py [--per-count N] [--seconds S] [--counts 7,8,9,10]
       [--minutes M] [--cpu-clock] [--advanced]
--minutes bounds the run: each count gets its share of what is left, and its row says
how many positions it did (`done`). The bot's budget is wall time, as in play; with
--cpu-clock it is CPU time (benchmarks/cpu_clock.py: "the bot has a core to itself").
--advanced plays the advanced game (the 2x2 squares win too).
The full run is the defaults (about 300 decisions of up to 2 s: 15 minutes or more).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cpu_clock import count_budgets_in_cpu_time
from pbm.app import register
from pbm.bots.engine import UNCLEAR, choose, seed_for
from pbm.bots.quarto_exact import QuartoExact
from pbm.bots.tactics import Clock
from pbm.games.base import Move
from pbm.games.quarto import EMPTY, GAME, QuartoState
from tests.bots.judge import move_value

QUARTO = GAME


def gives_a_win(state: QuartoState, move: Move) -> bool:
    after = QUARTO.apply(state, move)
    if QUARTO.to_move(after) is None:
        return False
    return any(QUARTO.outcome(QUARTO.apply(after, m)) for m in QUARTO.legal_moves(after))


def position(seed: int, empties: int, *, advanced: bool = False) -> QuartoState:
    """The first game of safe random play from `seed` on that reaches the count."""
    while True:
        rng = random.Random(seed)
        state = QUARTO.new_state(advanced=advanced)
        while QUARTO.to_move(state) is not None and not (
            state.held != EMPTY and len(state.empties) == empties
        ):
            moves = QUARTO.legal_moves(state)
            quiet = [m for m in moves if not gives_a_win(state, m)] or moves
            state = QUARTO.apply(state, rng.choice(quiet))
        if QUARTO.to_move(state) is not None:
            return state
        seed += 10_000


def exact_values(state: QuartoState) -> tuple[dict[Move, float], float]:
    started = time.process_time()
    found = QuartoExact(None, Clock(None)).values(state, QUARTO.legal_moves(state))
    assert found is not None
    return found, time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-count", type=int, default=75, help="positions per count")
    parser.add_argument("--seconds", type=float, default=2.0, help="level 4's budget")
    parser.add_argument("--counts", default="7,8,9,10", help="empty squares, comma-separated")
    parser.add_argument("--minimax", type=int, default=6, help="check by minimax up to this")
    parser.add_argument("--small", type=int, default=20, help="minimax checks at 5 and 6 empty")
    parser.add_argument(
        "--minutes", type=float, default=None, help="bound of the run (each count its share)"
    )
    parser.add_argument("--advanced", action="store_true", help="the advanced game")
    parser.add_argument(
        "--cpu-clock", action="store_true", help="count the bot's budget in CPU time"
    )
    args = parser.parse_args()
    if args.cpu_clock:
        count_budgets_in_cpu_time()
    counts = [int(c) for c in args.counts.split(",")]
    started = time.perf_counter()
    print(
        f"{args.per_count} positions per count{' (advanced)' if args.advanced else ''},"
        f" level 4 at {args.seconds} s a move"
        f" ({'CPU' if args.cpu_clock else 'wall'} time; load average"
        f" {os.getloadavg()[0]:.1f} at the start); CPU seconds"
    )
    print(
        f"{'empty':>5} {'done':>4} {'won':>4} {'drawn':>5} {'lost':>4}"
        f" {'solve med':>9} {'solve max':>9}"
        f" {'L4 keeps':>8} {'L4 med':>7} {'L4 max':>7} {'proved':>6}"
    )
    for number, empties in enumerate(counts):
        stop = math.inf
        if args.minutes is not None:
            left = args.minutes * 60 - (time.perf_counter() - started)
            stop = time.perf_counter() + left / (len(counts) - number)
        solve_times: list[float] = []
        decision_times: list[float] = []
        kept = proved = 0
        values = {0.0: 0, 0.5: 0, 1.0: 0}
        for index in range(args.per_count):
            if time.perf_counter() >= stop:
                break  # the time bound: the row counts the positions done
            state = position(1000 * empties + index, empties, advanced=args.advanced)
            found, seconds = exact_values(state)
            solve_times.append(seconds)
            value = max(found.values())
            values[value] += 1
            seat = QUARTO.to_move(state)
            assert seat is not None
            cpu = time.process_time()
            decision = choose(
                QUARTO, state, seat, level=4, seconds=args.seconds, seed=seed_for(empties, index)
            )
            decision_times.append(time.process_time() - cpu)
            proved += decision.verdict != UNCLEAR
            got = 0.0 if decision.move is None else found[decision.move]
            kept += got == value
            if got != value:
                print(f"  lost value: {QUARTO.dump(state)} played {decision.text}")
        done = len(solve_times)
        share = 100 * kept / done
        print(
            f"{empties:>5} {done:>4} {values[1.0]:>4} {values[0.5]:>5} {values[0.0]:>4}"
            f" {statistics.median(solve_times):>9.3f} {max(solve_times):>9.3f}"
            f" {share:>7.0f}% {statistics.median(decision_times):>7.3f}"
            f" {max(decision_times):>7.3f} {100 * proved / done:>5.0f}%",
            flush=True,
        )
    mismatches = checked = 0
    for empties in (5, 6):
        for index in range(args.small):
            state = position(7 * empties + index, empties, advanced=args.advanced)
            found, _seconds = exact_values(state)
            for move, value in found.items():
                checked += 1
                if move_value(QUARTO, state, move) != value:
                    mismatches += 1
                    print(f"  mismatch: {QUARTO.dump(state)} {QUARTO.format_move(state, move)}")
    print(
        f"plain minimax: {checked} move values at 5 and 6 empty squares,"
        f" {mismatches} mismatches; {(time.perf_counter() - started) / 60:.1f} minutes"
    )


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()
