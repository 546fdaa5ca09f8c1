"""The web pages under load (issue 25), on loopback, served by `pbm serve` itself.

Builds a SQLite database of active boards with their moves and players (by default
10,000 boards, 200,000 moves, 2,000 players: benchmarks/process.py's set-up, its
times moved to an hour ago so that no deadline falls due), runs `pbm serve` on it with
pbm's default settings and `[web] listen` (the pages in the daemon's child process, its
priority lowered by `[web] nice`), and sends it pages from `--clients` concurrent
clients: a static page (the style sheet) first, then board pages, player pages and
board feeds. Each kind is bounded by `--requests` and `--seconds`. For each: requests
per second, median and p99 latency, and the ratio to the static page.

The clients stand in for remote browsers, so they run in a process of their own at
the lowest priority (`--load-nice`, 19): on a small machine they must not take the
CPU the server needs. Mail must not suffer: `--messages` move commands are mailed to
the daemon's SMTP listener at once, and timed from the first sent until the daemon has
processed the last (its board mails sent too, drawn pictures and all), in `--rounds`
rounds of a batch alone and a batch while board pages load (rounds, since other work on
the machine drifts); each round's rates and the median ratio are printed, beside the
niceness of every process.

Usage: .venv/bin/python benchmarks/web.py [--games 10000] [--users 2000]
       [--moves-per-game 20] [--clients 100] [--requests 3000] [--seconds 60]
       [--messages 200] [--rounds 3] [--db PATH] [--web-nice N] [--load-nice 19]
       [--kinds K,...]
Targets (issue 25): pages served beside a static page at a stated ratio; moves by mail
slowed by less than a quarter (at least 0.75 of alone).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import smtplib
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlmodel import select, update

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import process  # benchmarks/process.py, beside this script: its set-up

from benchmarks.this_tree import child_environment
from pbm.app import register
from pbm.store.engine import make_engine, session_for
from pbm.store.models import BoardRow, GamePlayer, User
from pbm.store.schema import init_db

READY_SECONDS = 60


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def active_boards(engine) -> list[tuple[str, str, int]]:  # type: ignore[no-untyped-def]
    """(game, board, user index of the player to move) of every active board."""
    with session_for(engine) as session:
        rows = session.exec(
            select(BoardRow.game, BoardRow.board, GamePlayer.user_id)
            .join(GamePlayer, GamePlayer.game_id == BoardRow.id)
            .where(BoardRow.status == "active", GamePlayer.position == BoardRow.to_move)
        ).all()
    return [(game, board, user_id - 1) for game, board, user_id in rows]


def shift_times(engine, now: datetime) -> None:  # type: ignore[no-untyped-def]
    """Move the built boards to an hour ago: the daemon runs on the wall clock, and its
    timeout job must find nothing due."""
    with session_for(engine) as session:
        hour_ago = now - timedelta(hours=1)
        session.execute(update(BoardRow).values(last_move_at=hour_ago, created_at=hour_ago))
        session.execute(update(User).values(created_at=now - timedelta(days=1)))
        session.commit()


def waiting(engine) -> int:  # type: ignore[no-untyped-def]
    """Stored messages not processed yet, and mails not sent yet."""
    with engine.connect() as conn:
        new = conn.exec_driver_sql("SELECT count(*) FROM inbound_messages WHERE status = 'new'")
        queued = conn.exec_driver_sql("SELECT count(*) FROM outbox WHERE status = 'queued'")
        return int(new.scalar_one()) + int(queued.scalar_one())


def statuses(engine) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """The stored messages by status (each move done, none refused or failed)."""
    with engine.connect() as conn:
        rows = conn.exec_driver_sql("SELECT status, count(*) FROM inbound_messages GROUP BY 1")
        return {str(status): int(n) for status, n in rows}


def mail_moves(engine, smtp: int, count: int, seed: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Mail `count` move commands to the daemon at once and wait until it has processed
    them and sent their board mails: the moves per second."""
    rng = random.Random(seed)
    messages = process.move_messages(engine, active_boards(engine), rng, count)
    messages = [m.replace(b"<bench.", f"<web{seed}.".encode()) for m in messages]
    began = time.perf_counter()
    with smtplib.SMTP("127.0.0.1", smtp, timeout=60) as client:
        for raw in messages:
            client.sendmail("x@players.example", ["pbm@example.org"], raw)
    deadline = time.monotonic() + 900
    while waiting(engine) and time.monotonic() < deadline:
        time.sleep(0.02)
    elapsed = time.perf_counter() - began
    return {"rate": len(messages) / elapsed, "seconds": elapsed}


async def load(
    base: str, paths: Callable[[int], str], clients: int, requests: int, seconds: float
) -> tuple[int, float, list[float], dict[int | str, int]]:
    """`clients` concurrent clients asking `paths(n)` until `requests` are done or
    `seconds` have passed: (done, elapsed, latencies, status counts)."""
    latencies: list[float] = []
    codes: dict[int | str, int] = {}
    counter = iter(range(requests))
    deadline = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60) as client:

        async def one_client() -> None:
            for n in counter:
                if time.perf_counter() > deadline:
                    return
                began = time.perf_counter()
                try:
                    code: int | str = (await client.get(paths(n))).status_code
                except httpx.HTTPError as exc:  # counted, not fatal: the figures say it
                    code = type(exc).__name__
                latencies.append(time.perf_counter() - began)
                codes[code] = codes.get(code, 0) + 1

        began = time.perf_counter()
        await asyncio.gather(*(one_client() for _ in range(clients)))
        elapsed = time.perf_counter() - began
    return len(latencies), elapsed, latencies, codes


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def kind_paths(db: Path, users: int) -> dict[str, Callable[[int], str]]:
    """What each kind of client asks for: the style sheet, random boards and players."""
    engine = make_engine(f"sqlite:///{db}", create=False)
    boards = [(g, b) for g, b, _u in active_boards(engine)]
    engine.dispose()
    pick = random.Random(7)
    return {
        "static page": lambda n: "/static/web.css",
        "board page": lambda n: "/{}/{}".format(*pick.choice(boards)),
        "player page": lambda n: f"/player/user{pick.randrange(users)}",
        "board feed": lambda n: "/{}/{}/feed.atom".format(*pick.choice(boards)),
    }


def load_worker(args: argparse.Namespace) -> None:
    """The clients of one kind, at niceness `--load-nice`: print what they got (JSON)."""
    niceness = os.nice(args.load_nice)
    paths = kind_paths(args.db, args.users)[args.kind]
    done, elapsed, latencies, codes = asyncio.run(
        load(args.base, paths, args.clients, args.requests, args.seconds)
    )
    print(
        json.dumps(
            {
                "done": done,
                "elapsed": elapsed,
                "latencies": latencies,
                "codes": {str(k): v for k, v in codes.items()},
                "nice": niceness,
            }
        )
    )


def start_load(args: argparse.Namespace, db: Path, base: str, kind: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--load-worker",
            "--db",
            str(db),
            "--base",
            base,
            "--kind",
            kind,
            "--users",
            str(args.users),
            "--clients",
            str(args.clients),
            "--requests",
            str(args.requests),
            "--seconds",
            str(args.seconds),
            "--load-nice",
            str(args.load_nice),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )


def load_result(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, _ = proc.communicate(timeout=900)
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--users", type=int, default=2_000)
    parser.add_argument("--moves-per-game", type=int, default=20)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--requests", type=int, default=3_000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument(
        "--web-nice", type=int, default=None, help="[web] nice (default: pbm's own)"
    )
    parser.add_argument("--load-nice", type=int, default=19, help="the clients' niceness")
    parser.add_argument("--kinds", default="", help="only these kinds (comma-separated)")
    parser.add_argument("--rounds", type=int, default=3, help="mail alone/under load pairs")
    parser.add_argument("--load-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--base", default="", help=argparse.SUPPRESS)
    parser.add_argument("--kind", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load_worker:
        load_worker(args)
        return
    rng = random.Random(25)
    tmp = tempfile.TemporaryDirectory()
    path = args.db or Path(tmp.name) / "web.sqlite3"
    path.unlink(missing_ok=True)
    engine = make_engine(f"sqlite:///{path}")
    init_db(engine)
    began = time.perf_counter()
    process.build(engine, args.games, args.moves_per_game, args.users, rng)
    shift_times(engine, datetime.now(UTC))
    print(
        f"built {args.games} active boards, {args.games * args.moves_per_game} moves, "
        f"{args.users} players in {time.perf_counter() - began:.1f} s"
    )
    port, smtp = free_port(), free_port()
    config = Path(tmp.name) / "pbm.toml"
    nice_line = "" if args.web_nice is None else f"nice = {args.web_nice}"
    config.write_text(
        f"""
[server]
address = "pbm@example.org"
data_dir = "{path.parent}"
[store]
database_url = "sqlite:///{path}"
[mail.listen]
smtp = "127.0.0.1:{smtp}"
[web]
listen = "127.0.0.1:{port}"
metrics_listen = ""
burst = 1000000000
requests_per_second = 1000000000.0
{nice_line}
""",
        encoding="utf-8",
    )
    log_path = path.parent / "serve.log"
    log = log_path.open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "pbm", "--config", str(config), "serve", "--log-level", "INFO"],
        stdout=log,
        stderr=log,
        cwd=path.parent,
        env=child_environment(),
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{base}/robots.txt", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        kinds = list(kind_paths(path, args.users))
        if args.kinds:
            wanted = {"static page", *args.kinds.split(",")}
            kinds = [k for k in kinds if k in wanted]
        settled(log_path)  # the daemon's start: its periodic jobs scan every board first
        mail_moves(engine, smtp, max(args.messages // 4, 1), 0)  # warm: caches, pictures
        print(
            f"{args.clients} clients, at most {args.requests} requests or "
            f"{args.seconds:g} s per kind (pbm serve on SQLite, loopback)"
        )
        static_rate = 0.0
        load_nice = None
        for kind in kinds:
            found = load_result(start_load(args, path, base, kind))
            load_nice = found["nice"]
            done, latencies = found["done"], found["latencies"]
            rate = done / found["elapsed"]
            static_rate = static_rate or rate
            print(
                f"  {kind:<12} {done:>6} requests {rate:>8.0f}/s  median "
                f"{statistics.median(latencies) * 1000:>7.1f} ms  p99 {p99(latencies) * 1000:>7.1f}"
                f" ms  {rate / static_rate:5.2f} of static  statuses {found['codes']}"
            )
        pages = web_child(log_path, server.pid)
        print(
            f"niceness: pbm serve {os.getpriority(os.PRIO_PROCESS, server.pid)} (mail), "
            f"its pages' child {os.getpriority(os.PRIO_PROCESS, pages)}, clients {load_nice}, "
            f"this process (SMTP client) {os.nice(0)}"
        )
        ratios = []
        for number in range(args.rounds):
            alone, meanwhile, covered = mail_round(args, engine, smtp, path, base, 10 + 2 * number)
            ratios.append(meanwhile / alone)
            print(
                f"  round {number + 1}: moves by mail {alone:.0f}/s alone, {meanwhile:.0f}/s "
                f"while board pages load ({meanwhile / alone:.2f})"
                + ("" if covered else " (the page load ended first: raise --requests)")
            )
        if ratios:
            print(
                f"moves by mail while board pages load: {statistics.median(ratios):.2f} of alone "
                f"(median of {len(ratios)} rounds); messages {statuses(engine)}"
            )
    except BaseException:
        print(log_path.read_text(errors="replace")[-3000:], file=sys.stderr)
        raise
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(60)
        log.close()
        engine.dispose()


def mail_round(  # type: ignore[no-untyped-def]
    args, engine, smtp: int, db: Path, base: str, seed: int
) -> tuple[float, float, bool]:
    """A batch of moves mailed alone, then one while board pages load: both rates, and
    whether the load lasted until the second batch was done."""
    alone = mail_moves(engine, smtp, args.messages, seed)["rate"]
    clients = start_load(args, db, base, "board page")
    try:
        time.sleep(1.0)  # the clients under way before mail starts
        meanwhile = mail_moves(engine, smtp, args.messages, seed + 1)["rate"]
        covered = clients.poll() is None
    finally:
        clients.terminate()
        clients.communicate(timeout=60)
    return alone, meanwhile, covered


def settled(log_path: Path, quiet: float = 3.0, longest: float = 300.0) -> None:
    """Wait until the daemon's log has not grown for `quiet` seconds (at most `longest`)."""
    deadline = time.monotonic() + longest
    size, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        now = log_path.stat().st_size
        if now != size:
            size, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
        time.sleep(0.2)


def web_child(log_path: Path, daemon: int) -> int:
    """The pid of the pages' child process, from the daemon's log (a pbm older than
    the child serves its pages in the daemon itself)."""
    found = re.findall(r"event=web_child pid=(\d+)", log_path.read_text(errors="replace"))
    return int(found[-1]) if found else daemon


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()
