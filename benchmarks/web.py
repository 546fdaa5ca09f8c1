"""The web pages under load (issue 25), on loopback.

Builds a SQLite database of active boards with their moves and players (by default
10,000 boards, 200,000 moves, 2,000 players: benchmarks/process.py's set-up), runs
`pbm web` on it in a process of its own with pbm's default settings (`[web] nice`: its
priority lowered as `pbm serve` lowers its pages' child), and sends it pages from
`--clients` concurrent clients: a static page (the style sheet) first, then board
pages, player pages and board feeds. Each kind is bounded by `--requests` and
`--seconds`. For each: requests per second, median and p99 latency, and the ratio to
the static page.

The clients stand in for remote browsers, so they run in a process of their own at
the lowest priority (`--load-nice`, 19): on a small machine they must not take the
CPU the server needs. Mail must not suffer: move commands are processed by another
process at normal priority (`process_message`, as the daemon's processor does) once
alone and once while the board pages are loaded, and both rates are printed with their
ratio, beside the niceness of every process.

Usage: .venv/bin/python benchmarks/web.py [--games 10000] [--users 2000]
       [--moves-per-game 20] [--clients 100] [--requests 3000] [--seconds 60]
       [--messages 200] [--db PATH] [--web-nice N] [--load-nice 19] [--kinds K,...]
Targets (issue 25): pages served beside a static page at a stated ratio; moves by mail
slowed by less than a quarter (at least 0.75 of alone).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlmodel import select

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import process  # benchmarks/process.py, beside this script: its set-up

from pbm.app import register
from pbm.clock import FrozenClock
from pbm.config import Config
from pbm.intake import process_message
from pbm.store.engine import make_engine, session_for
from pbm.store.models import Game, GamePlayer
from pbm.store.schema import init_db

ROOT = Path(__file__).resolve().parents[1]
READY_SECONDS = 60


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def active_boards(engine) -> list[tuple[str, str, int]]:  # type: ignore[no-untyped-def]
    """(game, board, user index of the player to move) of every active board."""
    with session_for(engine) as session:
        rows = session.exec(
            select(Game.game, Game.board, GamePlayer.user_id)
            .join(GamePlayer, GamePlayer.game_id == Game.id)
            .where(Game.status == "active", GamePlayer.position == Game.to_move)
        ).all()
    return [(game, board, user_id - 1) for game, board, user_id in rows]


def moves_worker(db: Path, count: int, seed: int) -> None:
    """Process `count` move commands on the database and print their rate (JSON)."""
    config = Config(
        data_dir=db.parent, database_url=f"sqlite:///{db}", server_address="pbm@example.org"
    )
    engine = make_engine(config.database_url, create=False)
    rng = random.Random(seed)
    messages = process.move_messages(engine, active_boards(engine), rng, count)
    clock = FrozenClock(process.START + timedelta(days=2))
    statuses: dict[str, int] = {}
    began = time.perf_counter()
    for raw in messages:
        raw = raw.replace(b"<bench.", f"<web{seed}.".encode())  # a new Message-ID each run
        status = process_message(engine, raw, via="pipe", clock=clock, config=config)
        statuses[status] = statuses.get(status, 0) + 1
    elapsed = time.perf_counter() - began
    result = {"rate": len(messages) / elapsed, "seconds": elapsed, "statuses": statuses}
    print(json.dumps({**result, "nice": os.nice(0)}))


def start_moves(db: Path, count: int, seed: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--moves-worker",
            "--db",
            str(db),
            "--messages",
            str(count),
            "--seed",
            str(seed),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )


def moves_rate(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, _ = proc.communicate(timeout=900)
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


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
        "--web-nice", type=int, default=None, help="[web] nice for pbm web (default: pbm's)"
    )
    parser.add_argument("--load-nice", type=int, default=19, help="the clients' niceness")
    parser.add_argument("--kinds", default="", help="only these kinds (comma-separated)")
    parser.add_argument("--moves-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--load-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--base", default="", help=argparse.SUPPRESS)
    parser.add_argument("--kind", default="", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.moves_worker:
        moves_worker(args.db, args.messages, args.seed)
        return
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
    engine.dispose()
    print(
        f"built {args.games} active boards, {args.games * args.moves_per_game} moves, "
        f"{args.users} players in {time.perf_counter() - began:.1f} s"
    )
    port = free_port()
    config = Path(tmp.name) / "pbm.toml"
    nice_line = "" if args.web_nice is None else f"nice = {args.web_nice}"
    config.write_text(
        f"""
[server]
data_dir = "{path.parent}"
[store]
database_url = "sqlite:///{path}"
[web]
listen = "127.0.0.1:{port}"
metrics_listen = ""
burst = 1000000000
requests_per_second = 1000000000.0
{nice_line}
""",
        encoding="utf-8",
    )
    log_path = path.parent / "web.log"
    log = log_path.open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "pbm", "--config", str(config), "web", "--log-level", "WARNING"],
        stdout=log,
        stderr=log,
        cwd=ROOT,
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
        alone = moves_rate(start_moves(path, args.messages, 1))
        print(
            f"{args.clients} clients, at most {args.requests} requests or "
            f"{args.seconds:g} s per kind (pbm web on SQLite, loopback)"
        )
        static_rate = 0.0
        meanwhile: dict[str, Any] = {}
        load_nice = None
        for kind in kinds:
            clients = start_load(args, path, base, kind)
            worker = None
            if kind == "board page":
                time.sleep(1.0)  # the clients under way before mail starts
                worker = start_moves(path, args.messages, 2)
            found = load_result(clients)
            if worker is not None:
                meanwhile = moves_rate(worker)
                if meanwhile["seconds"] > found["elapsed"] - 1.0:
                    print("  (the moves outlasted the page load: raise --requests/--seconds)")
            load_nice = found["nice"]
            done, latencies = found["done"], found["latencies"]
            rate = done / found["elapsed"]
            static_rate = static_rate or rate
            print(
                f"  {kind:<12} {done:>6} requests {rate:>8.0f}/s  median "
                f"{statistics.median(latencies) * 1000:>7.1f} ms  p99 {p99(latencies) * 1000:>7.1f}"
                f" ms  {rate / static_rate:5.2f} of static  statuses {found['codes']}"
            )
        print(
            f"niceness: pbm web {os.getpriority(os.PRIO_PROCESS, server.pid)}, "
            f"clients {load_nice}, moves worker {alone['nice']}"
        )
        if meanwhile:
            # alone once before and once after the load, against the machine's drift
            after = moves_rate(start_moves(path, args.messages, 3))
            alone_rate = (alone["rate"] + after["rate"]) / 2
            print(
                f"moves by mail: {alone_rate:.0f}/s alone ({alone['rate']:.0f} before, "
                f"{after['rate']:.0f} after), {meanwhile['rate']:.0f}/s while board pages "
                f"load ({meanwhile['rate'] / alone_rate:.2f} of alone)"
            )
    except BaseException:
        print(log_path.read_text(errors="replace")[-3000:], file=sys.stderr)
        raise
    finally:
        server.terminate()
        server.wait(30)
        log.close()


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()
