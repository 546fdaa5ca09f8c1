"""Moves per second with 1, 2 and 3 daemons on one PostgreSQL, and one on SQLite.

Each daemon is a process running the daemon's processor (DbInbox.process_some with its
own owner: claims in the database, no process lock), as `pbm serve` runs it. Move
messages for many quarto boards are stored a round at a time (every board's next move,
as players answer their board mails) and the daemons share them; a round ends when all
its messages are done. Reported: moves/s, the daemons' CPU seconds per move (not the
database server's), and the ratio to one daemon. Listeners and the outbox sender are
left out: they are the same per message on every setup.

Usage: .venv/bin/python benchmarks/scale_out.py [--boards 60] [--rounds 8]
Needs PostgreSQL's binaries and psycopg (as the tests: tests/pg_cluster.py).
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing as mp
import random
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import func
from sqlmodel import select

from pbm.clock import FrozenClock, SystemClock
from pbm.config import Config
from pbm.games import get_game
from pbm.intake import process_message
from pbm.mailstore import DbInbox
from pbm.store.db import init_db, make_engine, session_for
from pbm.store.models import InboundMessage
from tests import pg_cluster

START = datetime(2026, 1, 1, tzinfo=UTC)


def mail(sender: str, subject: str, n: int) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = "pbm@example.org"
    msg["Subject"] = subject
    msg["Message-ID"] = f"<bench.{n}.{time.time_ns()}@players.example>"
    msg.set_content("\n")
    return msg.as_bytes()


def config_for(url: str, data: Path) -> Config:
    return Config(
        data_dir=data, database_url=url, server_address="pbm@example.org", password_cost=4
    )


def setup(url: str, data: Path, boards: int) -> None:
    engine = make_engine(url)
    init_db(engine)
    cfg = config_for(url, data)
    clock = FrozenClock(START)
    n = 0
    for i in range(boards):
        for who in (f"b{i}a", f"b{i}b"):
            n += 1
            process_message(
                engine,
                mail(f"{who}@p.example", f"signup {who} pw", n),
                via="cli",
                clock=clock,
                config=cfg,
            )
        n += 1
        subject = f"quarto challenge b{i}a b{i}b"
        process_message(
            engine, mail(f"b{i}a@p.example", subject, n), via="cli", clock=clock, config=cfg
        )
    engine.dispose()


def scripts(boards: int, rounds: int) -> list[list[str]]:
    """Per round, the move subjects of every board still playing (legal, seeded)."""
    rules = get_game("quarto")
    rng = random.Random(16)
    states = [rules.new_state() for _ in range(boards)]
    out: list[list[str]] = []
    for ply in range(1, rounds + 1):
        subjects = []
        for i, state in enumerate(states):
            if rules.outcome(state) is not None:
                continue
            move = rng.choice(list(rules.legal_moves(state)))
            who = f"b{i}a" if rules.to_move(state) == 0 else f"b{i}b"
            text = rules.format_move(state, move)
            subjects.append(f"{who}|quarto move {101 + i} {who} pw {text}#{ply}")
            states[i] = rules.apply(state, move)
        out.append(subjects)
    return out


def worker(url: str, data: str, owner: int, stop: Any, cpu: Any, shared: bool) -> None:
    engine = make_engine(url)
    lock = contextlib.nullcontext() if shared else None
    inbox = DbInbox(
        engine, SystemClock(), config_for(url, Path(data)), lock, owner=owner, claim_batch=4
    )
    busy = 0.0
    keep_going = threading.Event()  # never set: `stop` ends the loop between runs
    while not stop.is_set():
        began = time.process_time()
        result = inbox.process_some(keep_going, 10)
        if result.processed:
            busy += time.process_time() - began
        else:
            time.sleep(0.02)  # an idle daemon waits (pbm serve: NOTIFY or 1 s)
    cpu[owner] = busy
    engine.dispose()


def run(
    url: str, data: Path, daemons: int, plan: list[list[str]], shared: bool
) -> dict[str, float]:
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    manager = ctx.Manager()
    cpu = manager.dict()
    procs = [
        ctx.Process(target=worker, args=(url, str(data), o, stop, cpu, shared))
        for o in range(1, daemons + 1)
    ]
    for p in procs:
        p.start()
    engine = make_engine(url)
    store = DbInbox(engine, SystemClock(), config_for(url, data))
    time.sleep(2.0)  # the workers have started (spawn imports pbm)
    moves = 0
    began = time.monotonic()
    deadline = began + 300
    n = 0
    for subjects in plan:
        raws = []
        for item in subjects:
            who, subject = item.split("|", 1)
            n += 1
            raws.append(mail(f"{who}@p.example", subject, n))
        store.store_many_now(raws, "lmtp")
        moves += len(raws)
        while time.monotonic() < deadline:
            with session_for(engine) as session:
                left = session.exec(
                    select(func.count()).where(InboundMessage.status == "new")
                ).one()
            if not left:
                break
            time.sleep(0.005)
    wall = time.monotonic() - began
    stop.set()
    for p in procs:
        p.join(30)
    engine.dispose()
    total_cpu = sum(cpu.values())
    manager.shutdown()
    return {"moves": moves, "wall": wall, "per_s": moves / wall, "cpu_per_move": total_cpu / moves}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--boards", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    plan = scripts(args.boards, args.rounds)
    rows: list[tuple[str, dict[str, float]]] = []
    cluster = pg_cluster.start_cluster()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp)
            template = pg_cluster.create_database(cluster, "bench_template")
            setup(template, data, args.boards)
            for daemons in (1, 2, 3):
                url = pg_cluster.create_database(cluster, f"bench_{daemons}", "bench_template")
                rows.append(
                    (f"PostgreSQL, {daemons} daemon(s)", run(url, data, daemons, plan, True))
                )
            sqlite = f"sqlite:///{data / 'bench.sqlite3'}"
            setup(sqlite, data, args.boards)
            rows.append(("SQLite, 1 daemon", run(sqlite, data, 1, plan, False)))
    finally:
        cluster.stop()
    one = rows[0][1]["per_s"]
    print(f"{args.boards} boards, {args.rounds} rounds; daemons' CPU only (not the server's)")
    print(f"{'setup':<26} {'moves':>6} {'moves/s':>8} {'CPU ms/move':>12} {'ratio':>6}")
    for name, r in rows:
        print(
            f"{name:<26} {int(r['moves']):>6} {r['per_s']:>8.1f} "
            f"{r['cpu_per_move'] * 1000:>12.2f} {r['per_s'] / one:>6.2f}"
        )


if __name__ == "__main__":
    main()
