"""Round trip of game records (docs/records.md): random finished games of every game and
variant (tests/record_games.py), each imported, then exported and imported again in
every format its game has (pbm text, JSON, SGF for Quadrature). Prints the games tried
per game, the copies compared, the problems found (positions, results or times that
differ) and the time taken.

The games are shared out over `--workers` processes (game i to worker i mod N, each
with its own database and random stream), and every worker stops at `--max-seconds`:
the figures then say how many games were done.

Usage: python benchmarks/records_roundtrip.py [--games 10000] [--seed 1] [--workers 2]
       [--max-seconds 1800]
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbm.app import register
from pbm.store.engine import session_for
from tests.record_games import (
    START,
    context,
    formats_of,
    players_database,
    random_record,
    roundtrip_problems,
    variants,
)

BATCH = 200  # games a transaction, rolled back: the database stays small


@dataclass(frozen=True)
class Share:
    worker: int
    workers: int
    games: int
    seed: int
    deadline: float  # time.time() at which the worker stops


@dataclass
class Tally:
    tried: Counter[str] = field(default_factory=Counter)
    copies: int = 0
    problems: list[str] = field(default_factory=list)
    done: int = 0

    def add(self, other: Tally) -> None:
        self.tried.update(other.tried)
        self.copies += other.copies
        self.problems += other.problems
        self.done += other.done


def run_share(share: Share) -> Tally:
    """The games numbered worker, worker + workers, ... below `games`, in one process."""
    register()  # a spawned worker starts with empty registries, as every process does
    rng = random.Random(share.seed * 1000 + share.worker)
    tally = Tally()
    all_variants = variants()
    numbers = iter(range(share.worker, share.games, share.workers))
    with tempfile.TemporaryDirectory() as tmp:
        engine, config = players_database(Path(tmp))
        running = True
        while running:
            with session_for(engine) as session:
                ctx = context(session, config)
                for _ in range(BATCH):
                    number = next(numbers, None)
                    if number is None or time.time() > share.deadline:
                        running = False
                        break
                    game, options = all_variants[number % len(all_variants)]
                    record = random_record(rng, game, options, START)
                    tally.problems += roundtrip_problems(ctx, record)
                    tally.tried[game] += 1
                    tally.copies += len(formats_of(game))
                    tally.done += 1
                session.rollback()
        engine.dispose()
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-seconds", type=float, default=1800.0)
    args = parser.parse_args()
    began = time.perf_counter()
    deadline = time.time() + args.max_seconds
    shares = [Share(w, args.workers, args.games, args.seed, deadline) for w in range(args.workers)]
    total = Tally()
    if args.workers == 1:
        total.add(run_share(shares[0]))
    else:
        with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
            for tally in pool.imap_unordered(run_share, shares):
                total.add(tally)
    seconds = time.perf_counter() - began
    print(f"games: {total.done} of {args.games} over {len(variants())} game/variant pairs")
    if total.done < args.games:
        print(f"  stopped at the time bound ({args.max_seconds:g} s)")
    for game, count in sorted(total.tried.items()):
        print(f"  {game:<11} {count:>6} games, formats: {' '.join(formats_of(game))}")
    print(f"copies compared: {total.copies}")
    print(f"problems: {len(total.problems)}")
    for line in total.problems[:10]:
        print(f"  {line}")
    per_game = 1000 * seconds * args.workers / max(total.done, 1)
    print(
        f"time: {seconds:.1f} s with {args.workers} workers ({per_game:.1f} ms of a worker a game)"
    )
    sys.exit(1 if total.problems else 0)


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()
