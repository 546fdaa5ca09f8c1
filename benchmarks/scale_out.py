"""Moves per second end to end with 1, 2 and 3 `pbm serve` daemons on one PostgreSQL,
and one daemon on SQLite beside them.

End to end: each move is a mail delivered over LMTP to a daemon's listener (round-robin
over the daemons, on persistent connections, as Postfix spreads deliveries), stored,
claimed, processed, and its replies written by a daemon's outbox sender to its Maildir
and marked sent. Moves go a round at a time (every board's next move, as players answer
their board mails); a round ends when every board has its move, and the run when every
message is done and every reply sent.

Reported per setup: moves/s; CPU seconds per move of the daemons alone, and of the whole
machine (daemons, PostgreSQL, this sender: /proc/stat); the ratio to one daemon on
PostgreSQL. On a machine with C cores the whole-machine figure bounds the rate at
C / (CPU per move), however many daemons run.

Usage: .venv/bin/python benchmarks/scale_out.py [--boards 60] [--rounds 6]
Needs PostgreSQL's binaries and psycopg (as the tests: tests/pg_cluster.py).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import smtplib
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pbm.app import register
from pbm.store.engine import make_engine
from pbm.store.schema import init_db
from tests import pg_cluster
from tests.pg.test_scale_out_daemons import (
    PASSWORD,
    RULES,
    SERVER,
    Daemon,
    address,
    behind,
    config_for,
    message,
    mover,
    plan,
    set_up_boards,
    unfinished,
    wait_for,
)

TICKS = os.sysconf("SC_CLK_TCK")
LANES = 3  # sending threads, each on its own LMTP connection to one daemon
ROUND_SECONDS = 120.0


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def machine_cpu() -> float:
    """CPU seconds spent by every process on the machine so far (not idle, not iowait)."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = (
        int(x) for x in Path("/proc/stat").read_text().split()[1:9]
    )
    return (user + nice + system + irq + softirq + steal) / TICKS


@contextlib.contextmanager
def daemons(url: str, root: Path, n: int) -> Iterator[list[Daemon]]:
    root.mkdir()
    running = [Daemon(root, f"d{k}", url) for k in range(n)]
    try:
        for daemon in running:
            daemon.spawn()
        for daemon in running:
            if not wait_for(daemon.running, 60):
                raise RuntimeError(f"a daemon did not start: {daemon.log()}")
        yield running
    finally:
        for daemon in running:
            daemon.stop()


def send_round(running: list[Daemon], moves: list[list[str]], ply: int) -> None:
    """Every board's `ply`-th move, spread over LANES threads, lane k to daemon k % n."""
    failures: list[BaseException] = []

    def lane(k: int) -> None:
        daemon = running[k % len(running)]
        try:
            with smtplib.LMTP("127.0.0.1", daemon.port, timeout=60) as lmtp:
                for i in range(k, len(moves), LANES):
                    who = mover(i, ply)
                    subject = f"quarto move {101 + i} {who} {PASSWORD} {moves[i][ply]}#{ply + 1}"
                    raw = message(address(who), subject, f"<b{i}.{ply}.{time.time_ns()}@bench>")
                    lmtp.sendmail(address(who), [SERVER], raw)
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=lane, args=(k,)) for k in range(LANES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(ROUND_SECONDS)
    if failures:
        raise failures[0]


def run(url: str, root: Path, n: int, moves: list[list[str]]) -> dict[str, float]:
    """One setup's figures; the daemons' directories under `root` (made here)."""
    engine = make_engine(url)
    try:
        with daemons(url, root, n) as running:
            # the replies of the set-up (welcomes, new boards) go out first
            if not wait_for(lambda: unfinished(engine) == (0, 0), 120, 0.05):
                raise RuntimeError("the set-up's mail was not sent")
            pids = [d.proc.pid for d in running if d.proc is not None]
            cpu0, all0, began = sum(map(process_cpu, pids)), machine_cpu(), time.monotonic()
            for ply in range(len(moves[0])):
                send_round(running, moves, ply)
                if not wait_for(lambda p=ply: behind(engine, p + 1) == 0, ROUND_SECONDS, 0.01):
                    raise RuntimeError(f"round {ply} did not finish")
            if not wait_for(lambda: unfinished(engine) == (0, 0), ROUND_SECONDS, 0.01):
                raise RuntimeError("the replies were not all sent")
            wall = time.monotonic() - began
            cpu = sum(map(process_cpu, pids)) - cpu0
            everything = machine_cpu() - all0
    finally:
        engine.dispose()
    count = sum(len(m) for m in moves)
    return {
        "moves": count,
        "wall": wall,
        "per_s": count / wall,
        "cpu": cpu / count,
        "all": everything / count,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--boards", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    moves = plan(args.boards, args.rounds)
    rows: list[tuple[str, dict[str, float]]] = []
    cluster = pg_cluster.start_cluster()
    try:
        with tempfile.TemporaryDirectory(prefix="pbm-bench-") as tmp:
            root = Path(tmp)
            template = pg_cluster.create_database(cluster, "bench_template")
            engine = make_engine(template)
            init_db(engine)
            set_up_boards(engine, config_for(template, root), args.boards)
            engine.dispose()
            for n in (1, 2, 3):
                url = pg_cluster.create_database(cluster, f"bench_{n}", "bench_template")
                rows.append((f"PostgreSQL, {n} daemon(s)", run(url, root / f"pg{n}", n, moves)))
            sqlite = f"sqlite:///{root / 'bench.sqlite3'}"
            engine = make_engine(sqlite)
            init_db(engine)
            set_up_boards(engine, config_for(sqlite, root), args.boards)
            engine.dispose()
            rows.append(("SQLite, 1 daemon", run(sqlite, root / "sqlite", 1, moves)))
    finally:
        cluster.stop()
    one = rows[0][1]["per_s"]
    print(
        f"{RULES.title}: {args.boards} boards x {args.rounds} rounds, end to end "
        f"(LMTP in, Maildir out); {os.cpu_count()} cores"
    )
    print(
        f"{'setup':<26} {'moves':>6} {'seconds':>8} {'moves/s':>8} "
        f"{'daemons CPU ms/move':>20} {'all CPU ms/move':>16} {'ratio':>6}"
    )
    for name, r in rows:
        print(
            f"{name:<26} {int(r['moves']):>6} {r['wall']:>8.1f} {r['per_s']:>8.1f} "
            f"{r['cpu'] * 1000:>20.1f} {r['all'] * 1000:>16.1f} {r['per_s'] / one:>6.2f}"
        )


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()
