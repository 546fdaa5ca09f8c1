"""How long the daemon's write lock is held by players' first commands after a start,
with their password checks run outside the lock (pbm.mailstore.DbInbox._process,
PasswordCheckNeeded) and inside it.

A daemon just started has no password check kept: each player's first command runs
scrypt, about a tenth of a second at the shipped cost, and on SQLite every other writer
of the daemon (the intake storing, the sender claiming and recording) waits while the
lock is held. This builds benchmarks/process.py's set-up, small (300 boards), gives each
player of MESSAGES first moves a password hash of his own at the shipped cost, then runs
the daemon's processor (DbInbox.process_some, with the daemon's FairLock) over those
moves twice, each in a fresh process with no password kept: checks inside, then outside.
Prints, for each, how long the lock was held in all and per hold (median, max), the
wall time, how many scrypt runs happened under the lock, and how many times a message
ran again after a check outside. A hold is a run of a message, or the claim of the
next messages to run.

Usage: .venv/bin/python benchmarks/passwords_outside.py [--messages 40]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import update

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import process  # benchmarks/process.py, beside this script: its set-up

from pbm.app import register
from pbm.clock import FrozenClock
from pbm.config import Config
from pbm.fair_lock import FairLock
from pbm.mailstore import PASSWORD_CHECKS_OUTSIDE, DbInbox
from pbm.services.accounts import passwords
from pbm.services.accounts.passwords import hash_password
from pbm.store.engine import make_engine, session_for
from pbm.store.models import User
from pbm.store.schema import init_db


class TimedLock:
    """The daemon's FairLock, with how long each holder kept it."""

    def __init__(self) -> None:
        self.lock = FairLock()
        self.held: list[float] = []
        self.holding = False
        self._since = 0.0

    def __enter__(self) -> TimedLock:
        self.lock.__enter__()
        self.holding, self._since = True, time.perf_counter()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.held.append(time.perf_counter() - self._since)
        self.holding = False
        self.lock.__exit__(*exc_info)


def build(directory: Path, count: int) -> Path:
    """The database, and the raw first moves of `count` players, each of his own hash."""
    path = directory / "bench.sqlite3"
    engine = make_engine(f"sqlite:///{path}")
    init_db(engine)
    rng = random.Random(5)
    active = process.build(engine, 300, 20, 600, rng)
    messages = process.move_messages(engine, active, rng, count)
    players = sorted({int(m) for raw in messages for m in re.findall(rb"move \S+ user(\d+) ", raw)})
    with session_for(engine) as session:
        for user in players:
            digest = hash_password(process.PASSWORD)  # a salt of his own: no check shared
            session.execute(update(User).where(User.id == user + 1).values(password_hash=digest))
        session.commit()
    engine.dispose()
    (directory / "messages.json").write_text(json.dumps([raw.decode() for raw in messages]))
    return path


def run(directory: Path, outside: bool) -> dict[str, float]:
    """Process the first moves through the daemon's inbox (in this fresh process)."""
    path = directory / "bench.sqlite3"
    url = f"sqlite:///{path}"
    config = Config(data_dir=directory, database_url=url, server_address="pbm@example.org")
    engine = make_engine(url)
    lock = TimedLock()
    under_lock = runs = 0
    scrypt = passwords._scrypt

    def counted(*args: object, **kw: object) -> bytes:
        nonlocal under_lock, runs
        under_lock += lock.holding
        runs += 1
        return scrypt(*args, **kw)  # type: ignore[arg-type]

    passwords._scrypt = counted  # type: ignore[assignment]
    clock = FrozenClock(process.START + timedelta(days=1))
    checks = PASSWORD_CHECKS_OUTSIDE if outside else 0
    inbox = DbInbox(engine, clock, config, lock, password_checks_outside=checks)
    messages = [raw.encode() for raw in json.loads((directory / "messages.json").read_text())]
    inbox.store_many_now(messages, "imap")
    lock.held.clear()
    began = time.perf_counter()
    result = inbox.process_some(threading.Event(), limit=len(messages))
    wall = time.perf_counter() - began
    assert result.statuses == {"done": len(messages)}, result
    engine.dispose()
    holds = [h * 1000 for h in lock.held]
    return {
        "held": sum(holds) / 1000,
        "median": statistics.median(holds),
        "max": max(holds),
        "wall": wall,
        "under_lock": under_lock,
        "runs": runs,
        # each check outside the lock is followed by one more run of its message
        "again": runs - under_lock,
        "messages": len(messages),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=40, help="first moves, one a player")
    parser.add_argument("--inner", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    register()  # the games, commands and game-end handlers (pbm.app)
    if args.inner:
        print(json.dumps(run(Path(args.inner[0]), args.inner[1] == "outside")))
        return
    work = Path(tempfile.mkdtemp(prefix="pbm-bench-passwords-"))
    try:
        began = time.perf_counter()
        build(work, args.messages)
        print(f"{args.messages} players' first moves, each his own hash at the shipped cost")
        print(f"(set-up {time.perf_counter() - began:.1f} s)")
        print(
            f"{'checks':<8} {'lock held s':>11} {'median ms':>10} {'max ms':>8}"
            f" {'wall s':>7} {'scrypt under lock':>18} {'ran again':>10}"
        )
        for mode in ("inside", "outside"):
            copy = work / mode
            copy.mkdir()
            shutil.copy(work / "bench.sqlite3", copy)
            shutil.copy(work / "messages.json", copy)
            command = [sys.executable, __file__, "--inner", str(copy), mode]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            r = json.loads(done.stdout.strip().splitlines()[-1])
            print(
                f"{mode:<8} {r['held']:>11.2f} {r['median']:>10.1f} {r['max']:>8.1f}"
                f" {r['wall']:>7.2f} {r['under_lock']:>10} of {r['runs']:<4} {r['again']:>10}"
            )
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
