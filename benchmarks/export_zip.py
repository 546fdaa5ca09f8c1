"""The `export` zip of a player with many finished games (docs/records.md, "Exporting
all your games"): random finished games of every game and variant
(tests/record_games.py) stored for one player, then his zip made as the mail command
makes it, without the size bound. Prints the boards, the zip's size (and the mail's
size in base64) and the time to make it.

Usage: python benchmarks/export_zip.py [--games 1000] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbm.app import register
from pbm.services.accounts import bulk_export
from pbm.services.accounts.users import find_user
from pbm.services.play import records
from pbm.store.engine import session_for
from tests.record_games import PLAYERS, START, context, players_database, random_record, variants


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        engine, config = players_database(Path(tmp))
        with session_for(engine) as session:
            ctx = context(session, config)
            all_variants = variants()
            for n in range(args.games):
                game, options = all_variants[n % len(all_variants)]
                records.import_record(ctx, random_record(rng, game, options, START))
            session.commit()
        with session_for(engine) as session:
            ctx = context(session, config)
            user = find_user(ctx, PLAYERS[0])
            began = time.perf_counter()
            request = bulk_export.ExportRequest(which=bulk_export.Which.FINISHED)
            boards = bulk_export.boards_of(ctx, user, request)
            made = bulk_export.player_zip(ctx, boards, limit=2**62)
            seconds = time.perf_counter() - began
        engine.dispose()
    print(f"player {PLAYERS[0]}: {made.boards} finished boards in the zip ({len(boards)} asked)")
    print(
        f"zip: {len(made.data) / 1e6:.2f} MB; as a mail attachment (base64) "
        f"{len(made.data) * 4 / 3 / 1e6:.2f} MB; bound {config.export_bytes_per_mail / 1e6:.0f} MB"
    )
    print(
        f"time to make it: {seconds:.2f} s ({1000 * seconds / max(made.boards, 1):.1f} ms a board)"
    )


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()
