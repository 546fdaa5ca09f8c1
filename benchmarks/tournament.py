"""Tournament speed: pairing one round of a 1,000-player Swiss and computing its standings.

Plays ROUNDS-1 random rounds first (so brackets, colour histories and repeat bans are
realistic), then times the pairing of the next round and the standings of the field,
and counts what the timed round gave up: pairs across score groups (floats) and
players given a colour against the absolute rules (three in a row, difference over 2).
Targets: pairing under 2 s, standings under 0.5 s.
Usage: python benchmarks/tournament.py [--players N] [--rounds R]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbm.app import register
from pbm.tournaments.standings import Result, standings
from pbm.tournaments.swiss import SwissPlayer, _misses, pair_round


def play_round(state, results, rng):
    rnd = pair_round(list(state.values()))
    for w, b in rnd.pairs:
        s = rng.choice([0.0, 0.5, 1.0])
        pw, pb = state[w], state[b]
        state[w] = SwissPlayer(
            w, pw.points + s, pw.rating, pw.colours + "W", pw.opponents | {b}, pw.had_bye
        )
        state[b] = SwissPlayer(
            b, pb.points + 1 - s, pb.rating, pb.colours + "B", pb.opponents | {w}, pb.had_bye
        )
        results.append(Result(w, b, s))
    if rnd.bye is not None:
        p = state[rnd.bye]
        state[p.id] = SwissPlayer(p.id, p.points + 1, p.rating, p.colours + "-", p.opponents, True)
        results.append(Result(p.id, None, 1.0))
    return rnd


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=9, help="the round that is timed")
    args = parser.parse_args()
    rng = random.Random(7)
    state = {i: SwissPlayer(i, rating=rng.gauss(1600, 200)) for i in range(args.players)}
    results: list[Result] = []
    for _ in range(args.rounds - 1):
        play_round(state, results, rng)
    before = dict(state)
    start = time.perf_counter()
    rnd = play_round(state, results, rng)
    pairing = time.perf_counter() - start
    floats = sum(before[w].points != before[b].points for w, b in rnd.pairs)
    broken = sum(_misses(before[w], "W")[0] + _misses(before[b], "B")[0] for w, b in rnd.pairs)
    start = time.perf_counter()
    rows = standings(list(state), results)
    table = time.perf_counter() - start
    print(f"players {args.players}, round {args.rounds}: {len(rnd.pairs)} pairs")
    print(f"floats {floats}, absolute colour rules broken {broken}")
    print(f"swiss pairing   {pairing:8.3f} s   target < 2 s    {'ok' if pairing < 2 else 'MISS'}")
    print(f"standings       {table:8.3f} s   target < 0.5 s  {'ok' if table < 0.5 else 'MISS'}")
    print(f"leader {rows[0].player} with {rows[0].points} points")


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()
