"""Round trip of game records (docs/records.md): random finished games of every game and
variant (tests/record_games.py), each imported, then exported and imported again in
every format its game has (pbm text, JSON, SGF for Quadrature). Prints the games tried
per game, the copies compared, the problems found (positions, results or times that
differ) and the time taken.

Usage: python benchmarks/records_roundtrip.py [--games 10000] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    tried: Counter[str] = Counter()
    copies = 0
    problems: list[str] = []
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        engine, config = players_database(Path(tmp))
        all_variants = variants()
        done = 0
        while done < args.games:
            with session_for(engine) as session:
                ctx = context(session, config)
                for _ in range(min(BATCH, args.games - done)):
                    game, options = all_variants[done % len(all_variants)]
                    record = random_record(rng, game, options, START)
                    problems += roundtrip_problems(ctx, record)
                    tried[game] += 1
                    copies += len(formats_of(game))
                    done += 1
                session.rollback()
        engine.dispose()
    seconds = time.perf_counter() - began
    print(f"games: {done} over {len(all_variants)} game/variant pairs")
    for game, count in sorted(tried.items()):
        print(f"  {game:<11} {count:>6} games, formats: {' '.join(formats_of(game))}")
    print(f"copies compared: {copies}")
    print(f"problems: {len(problems)}")
    for line in problems[:10]:
        print(f"  {line}")
    print(f"time: {seconds:.1f} s ({1000 * seconds / max(done, 1):.1f} ms a game)")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()
