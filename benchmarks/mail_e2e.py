"""End-to-end mail throughput and latency of `pbm serve` against the real Postfix + Dovecot.

    .venv/bin/python benchmarks/mail_e2e.py [--boards 40] [--seconds 30] [--game quadrature]
                                            [--format html|text] [--no-picture-worker]

Starts the stack (.ci/mailstack.sh, in a temp dir, free ports), then:

1. pbm: `pbm serve` (IMAP IDLE intake, SMTP relay outbox). `--boards` boards run side by
   side, each a closed loop: the player to move mails the move over SMTP, pbm takes it
   over IMAP, processes it and mails both players; the next move goes out when both
   replies are in the players' mailbox. Latency is send -> the second reply delivered.
   `--format text` has every player ask for text alone first (`set ... format text`),
   so the same run without the HTML part and its pictures shows what they cost.
2. echo: the same loop against a bare echo server over the same servers (IMAP IDLE,
   read, send one reply over one SMTP connection, move to Processed; no processing).

The echo loop runs before pbm and again after it, and the ratio is pbm's rate against
the mean of the two: other load on the machine drifts during a run, and the bare loop,
which keeps both cores busy, feels it most.

Prints moves per second, median and 99th percentile latency for each run, and the ratio;
for each, the CPU its server used over the window (share of a core, per message; pbm's
picture worker process included and also shown alone), how
busy the whole machine was (both cores), and the machine's CPU per message split into
the server, this script's clients, and the rest (Postfix, Dovecot, the kernel): on a
small machine the loop is bound by the sum, so the split says what a faster server
could still win. For pbm also where a move waited inside it (stored -> processed ->
last reply handed to Postfix), from its database.
Player mail lands in one real mailbox through plus-addressing (bob+p07@example.test), so
one IMAP connection watches every reply; it polls every 25 ms rather than using IDLE,
whose 0.5 s notification delay in Dovecot would blur the measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import email
import email.policy
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path

import aioimaplib
import aiosmtplib

# This tree: its pbm, benchmarks.this_tree and tests.confirmed, shared with the tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.this_tree import ROOT, child_environment

SCRIPT = ROOT / ".ci" / "mailstack.sh"
DOMAIN = "example.test"
PASSWORD = "secret"
WARM_MESSAGES = 3
PLAYERS_BOX = "bob"  # pbm's players: bob+pNN@example.test
ECHO_CLIENTS_BOX = "carol"  # the echo loop's clients: carol+eNN@example.test


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


@dataclass
class Stack:
    ms: Path
    smtp: int
    imap: int
    lmtp: int

    @property
    def env(self) -> dict[str, str]:
        return dict(
            os.environ,
            MS=str(self.ms),
            SMTP_PORT=str(self.smtp),
            IMAP_PORT=str(self.imap),
            LMTP_PORT=str(self.lmtp),
            USERS=f"pbm echo {PLAYERS_BOX} {ECHO_CLIENTS_BOX}",
        )

    def run(self, *args: str) -> None:
        subprocess.run(["bash", str(SCRIPT), *args], env=self.env, check=True)


def message(sender: str, to: str, subject: str, body: str = "", **headers: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, to, subject
    msg["Date"] = formatdate()
    msg["Message-ID"] = make_msgid(domain=DOMAIN)
    for name, value in headers.items():
        msg[name.replace("_", "-")] = value
    msg.set_content(body)
    return msg


class Watcher:
    """Polls one IMAP mailbox; records when each reply (by In-Reply-To) arrived, and for whom."""

    def __init__(self, stack: Stack, user: str) -> None:
        self.stack = stack
        self.user = user
        self.arrivals: dict[str, list[tuple[float, str, str]]] = {}
        # (board number, recipient) -> arrival times of mails about that board
        self.boards: dict[tuple[str, str], list[float]] = {}
        self.last_uid = 0
        self.changed = asyncio.Event()
        self.stop = asyncio.Event()
        self.ready = asyncio.Event()  # set once the mail already there is skipped

    async def run(self) -> None:
        client = aioimaplib.IMAP4("127.0.0.1", self.stack.imap, timeout=30)
        await client.wait_hello_from_server()
        await client.login(self.user, PASSWORD)
        await client.select("INBOX")
        # replies from an earlier run of the same loop are not this run's
        found = await client.uid_search("ALL", charset=None)
        self.last_uid = max((int(u) for u in found.lines[0].split()), default=0)
        self.ready.set()
        fields = "(UID BODY.PEEK[HEADER.FIELDS (IN-REPLY-TO TO SUBJECT)])"
        while not self.stop.is_set():
            found = await client.uid_search(f"UID {self.last_uid + 1}:*", charset=None)
            uids = [int(u) for u in found.lines[0].split() if int(u) > self.last_uid]
            if uids:
                fetched = await client.uid("fetch", f"{min(uids)}:{max(uids)}", fields)
                now = time.monotonic()
                for i, item in enumerate(fetched.lines):
                    if not isinstance(item, bytearray):
                        continue
                    uid = int(re.search(rb"UID (\d+)", bytes(fetched.lines[i - 1])).group(1))
                    self.last_uid = max(self.last_uid, uid)
                    head = email.message_from_bytes(bytes(item), policy=email.policy.default)
                    key = str(head.get("In-Reply-To", "")).strip()
                    to, subject = str(head.get("To", "")), str(head.get("Subject", ""))
                    self.arrivals.setdefault(key, []).append((now, to, subject))
                    board = re.search(r"Board (\d+)", subject)
                    if board:
                        self.boards.setdefault((board.group(1), to), []).append(now)
                self.changed.set()
            else:
                await asyncio.sleep(0.025)
        await client.logout()


@dataclass
class Loop:
    """One closed loop: a board (pbm) or a client (echo)."""

    key: str
    recipients: tuple[str, ...] = ()
    sent: int = 0
    waiting_for: str | None = None
    sent_at: float = 0.0
    latencies: list[float] = field(default_factory=list)
    done_at: list[float] = field(default_factory=list)
    finished: bool = False


async def measure(
    loops: list[Loop],
    watcher: Watcher,
    arrived_at,
    next_message,
    seconds: float,
    warmup: float,
    smtp_port: int,
    server_pid: int,
) -> dict[str, float]:
    """Run every loop; a message is done when `arrived_at(loop)` gives the time its last
    reply arrived. The measured window of `seconds` opens once every loop has done
    WARM_MESSAGES (first logins, caches, each player's first password check) or after
    `warmup` seconds, whichever comes first. Over the window, the CPU the server
    (`server_pid`) and the whole machine used."""
    smtp = aiosmtplib.SMTP(hostname="127.0.0.1", port=smtp_port, start_tls=False, timeout=30)
    await smtp.connect()
    started = time.monotonic()
    window_start: float | None = None
    deadline = float("inf")

    async def fire(loop: Loop) -> None:
        msg = next_message(loop)
        if msg is None:
            loop.finished = True
            return
        loop.waiting_for = str(msg["Message-ID"])
        loop.sent += 1
        loop.sent_at = time.monotonic()
        await smtp.send_message(msg)

    for loop in loops:
        await fire(loop)
    while time.monotonic() < deadline:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(watcher.changed.wait(), 0.5)
        watcher.changed.clear()
        for loop in loops:
            if loop.finished or loop.waiting_for is None:
                continue
            arrived = arrived_at(loop)
            if arrived is not None:
                loop.latencies.append(arrived - loop.sent_at)
                loop.done_at.append(arrived)
                loop.waiting_for = None
                if time.monotonic() < deadline:
                    await fire(loop)
        if window_start is None:
            warm = all(len(loop.done_at) >= WARM_MESSAGES or loop.finished for loop in loops)
            if warm or time.monotonic() - started >= warmup:
                window_start = time.monotonic()
                deadline = window_start + seconds
                cpu_start = cpu_seconds(server_pid), machine_busy(), own_cpu_seconds()
                wall_start = time.time()
    cpu_end = cpu_seconds(server_pid), machine_busy(), own_cpu_seconds()
    wall_end = time.time()
    await smtp.quit()
    assert window_start is not None
    kept = [
        latency
        for loop in loops
        for arrived, latency in zip(loop.done_at, loop.latencies, strict=True)
        if window_start <= arrived <= deadline
    ]
    lat = sorted(kept)
    busy = (cpu_end[1][0] - cpu_start[1][0]) / (cpu_end[1][1] - cpu_start[1][1])
    return {
        "completed": len(kept),
        "seconds": seconds,
        "warmup": window_start - started,
        "per_second": len(kept) / seconds,
        "median": statistics.median(lat) if lat else float("nan"),
        "p99": lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else float("nan"),
        "server_cpu": (sum(cpu_end[0]) - sum(cpu_start[0])) / seconds,
        "server_children_cpu": (cpu_end[0][1] - cpu_start[0][1]) / seconds,
        "machine_busy": busy,
        "machine_cpu": busy * (os.cpu_count() or 1),  # cores
        "client_cpu": (cpu_end[2] - cpu_start[2]) / seconds,
        "window_start": wall_start,
        "window_end": wall_end,
    }


def _stat(pid: int | str) -> list[str]:
    """The fields of /proc/PID/stat after the command's name (state, ppid, ...)."""
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()


def cpu_seconds(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of process `pid` with its threads, and of its child
    processes (pbm's picture worker, pbm.html_parts), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    own = children = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = _stat(entry.name)
        except OSError:  # gone meanwhile
            continue
        used = (int(fields[11]) + int(fields[12])) / tick
        if int(entry.name) == pid:
            own += used
        elif int(fields[1]) == pid:
            children += used
    return own, children


def own_cpu_seconds() -> float:
    """User and system CPU seconds of this process (the players' and the watcher's
    clients), its children left out."""
    times = os.times()
    return times.user + times.system


def machine_busy() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs since boot (/proc/stat): idle and iowait are
    not busy."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    return sum(values) - values[3] - values[4], sum(values)


# --- pbm ------------------------------------------------------------------------------


def start_pbm(stack: Stack, workdir: Path, picture_worker: bool) -> subprocess.Popen[bytes]:
    (listen,) = free_ports(1)
    config = workdir / "pbm.toml"
    config.write_text(
        f"""
[server]
address = "pbm@{DOMAIN}"
data_dir = "{workdir / "var"}"

[mail.imap]
host = "127.0.0.1"
port = {stack.imap}
user = "pbm"
password = "{PASSWORD}"
ssl = false

[mail.relay]
host = "127.0.0.1"
port = {stack.smtp}
starttls = false
rate = 0

[mail.listen]
smtp = "127.0.0.1:{listen}"

# Every player's address is a +tag of one mailbox: here each tag is a mailbox of its
# own (budgets, confirmations), and no budget holds the benchmark back.
[mail]
tag_separators = ""
picture_worker = {"true" if picture_worker else "false"}

[limits]
replies_per_address_hour = 1000000
player_replies_per_hour = 1000000
""",
        encoding="utf-8",
    )
    log = (workdir / "pbm-serve.log").open("ab")
    level = os.environ.get("PBM_BENCH_LOG", "WARNING")
    proc = subprocess.Popen(
        [
            sys.executable,
            # PBM_BENCH_PROFILE=FILE: profile the daemon (cProfile) into FILE
            *(
                ["-m", "cProfile", "-o", profile]
                if (profile := os.environ.get("PBM_BENCH_PROFILE"))
                else []
            ),
            "-m",
            "pbm",
            "--config",
            str(config),
            "serve",
            "--log-level",
            level,
        ],
        stdout=log,
        stderr=log,
        cwd=workdir,
        env=child_environment(),
    )
    status = workdir / "var" / "daemon-status.json"
    for _ in range(300):
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(status.read_text())
            if data.get("pid") == proc.pid and (data.get("imap") or {}).get("connected"):
                return proc
        time.sleep(0.1)
    raise SystemExit("pbm serve did not come up; see " + str(workdir / "pbm-serve.log"))


def confirm_players(config_path: Path) -> None:
    """Every player's address confirmed, as the operator's `pbm user confirm` does: the
    benchmark measures moves, not the confirmation round trip."""
    from pbm.config import load_config
    from pbm.store.engine import make_engine
    from tests.confirmed import confirm_every_address

    config = load_config(config_path)
    engine = make_engine(config.database_url)
    try:
        confirm_every_address(engine, config)
    finally:
        engine.dispose()


async def pbm_run(
    stack: Stack, args: argparse.Namespace, config: Path, server_pid: int
) -> dict[str, float]:
    from pbm.app import register
    from pbm.games import GAMES

    register()  # the games, commands and game-end handlers (pbm.app)
    game = GAMES[args.game]
    rng = random.Random(args.seed)
    watcher = Watcher(stack, PLAYERS_BOX)
    watch = asyncio.create_task(watcher.run())
    await asyncio.wait_for(watcher.ready.wait(), 30)
    smtp = aiosmtplib.SMTP(hostname="127.0.0.1", port=stack.smtp, start_tls=False, timeout=30)
    await smtp.connect()
    players = [f"{PLAYERS_BOX}+p{i:03d}@{DOMAIN}" for i in range(2 * args.boards)]
    names = [f"p{i:03d}" for i in range(2 * args.boards)]

    async def each_player(command: str, what: str) -> None:
        """`command` (with NAME for the userid) from every player, answered."""
        sent = []
        for addr, name in zip(players, names, strict=True):
            msg = message(addr, f"pbm@{DOMAIN}", command.replace("NAME", name))
            sent.append(str(msg["Message-ID"]))
            await smtp.send_message(msg)
        # Each hashes a password at the shipped cost: seconds apiece on a busy machine.
        await wait_for(lambda: all(watcher.arrivals.get(m) for m in sent), 600, what)

    await each_player(f"signup NAME {PASSWORD}", "signups")
    confirm_players(config)
    if args.format == "text":
        await each_player(f"set NAME {PASSWORD} format text", "format text")
    challenges = {}
    for b in range(args.boards):
        first, second = names[2 * b], names[2 * b + 1]
        msg = message(players[2 * b], f"pbm@{DOMAIN}", f"{game.name} challenge {first} {second}")
        challenges[b] = str(msg["Message-ID"])
        await smtp.send_message(msg)
    await smtp.quit()
    await wait_for(lambda: all(watcher.arrivals.get(m) for m in challenges.values()), 120, "boards")
    boards: dict[str, tuple[int, object]] = {}
    loops = []
    for b, mid in challenges.items():
        subject = watcher.arrivals[mid][0][2]
        number = re.search(r"Board (\d+)", subject).group(1)
        boards[str(b)] = (b, game.new_state())
        loops.append(Loop(key=f"{b}:{number}", recipients=(players[2 * b], players[2 * b + 1])))

    def arrived_at(loop: Loop) -> float | None:
        # the challenge mail, then one mail per move, to each of the two players
        number = loop.key.split(":")[1]
        times = [watcher.boards.get((number, who), []) for who in loop.recipients]
        if all(len(t) > loop.sent for t in times):
            return max(t[loop.sent] for t in times)
        return None

    def next_move(loop: Loop) -> EmailMessage | None:
        b, number = loop.key.split(":")
        _, state = boards[b]
        if game.outcome(state) is not None:
            return None
        seat = game.to_move(state)
        move = rng.choice(list(game.legal_moves(state)))
        text = game.format_move(state, move)
        boards[b] = (int(b), game.apply(state, move))
        name = names[2 * int(b) + seat]
        subject = f"{game.name} move {number} {name} {PASSWORD} {text}"
        return message(players[2 * int(b) + seat], f"pbm@{DOMAIN}", subject)

    result = await measure(
        loops, watcher, arrived_at, next_move, args.seconds, args.warmup, stack.smtp, server_pid
    )
    watcher.stop.set()
    await watch
    return result


async def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)


# --- echo -----------------------------------------------------------------------------


async def echo_server(imap_port: int, smtp_port: int) -> None:
    """The bare loop: pbm's own IMAP intake (IDLE, fetch, file away) whose "store" answers
    each message at once over one reused SMTP connection; no database, no processing."""
    from pbm.mail.imap_in import ImapIntake
    from pbm.mail.settings import ImapSettings

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    smtp = aiosmtplib.SMTP(hostname="127.0.0.1", port=smtp_port, start_tls=False, timeout=30)
    await smtp.connect()

    async def answer(raw: bytes) -> None:
        msg = email.message_from_bytes(raw, policy=email.policy.default)
        reply = message(
            f"echo@{DOMAIN}",
            str(msg["From"]),
            "Re: " + str(msg["Subject"]),
            msg.get_content(),
            In_Reply_To=str(msg["Message-ID"]),
        )
        await smtp.send_message(reply)

    settings = ImapSettings(
        host="127.0.0.1", port=imap_port, user="echo", password=PASSWORD, ssl=False
    )
    await ImapIntake(settings, answer, stop=stop).run()
    with contextlib.suppress(aiosmtplib.SMTPException):  # Postfix may have hung up first
        await smtp.quit()


async def echo_run(stack: Stack, args: argparse.Namespace, server_pid: int) -> dict[str, float]:
    watcher = Watcher(stack, ECHO_CLIENTS_BOX)
    watch = asyncio.create_task(watcher.run())
    await asyncio.wait_for(watcher.ready.wait(), 30)
    loops = [Loop(key=f"e{i:03d}") for i in range(args.boards)]
    counter = iter(range(10**9))

    def next_ping(loop: Loop) -> EmailMessage:
        sender = f"{ECHO_CLIENTS_BOX}+{loop.key}@{DOMAIN}"
        return message(sender, f"echo@{DOMAIN}", f"ping {next(counter)}", "a2-b3\n")

    def arrived_at(loop: Loop) -> float | None:
        got = watcher.arrivals.get(loop.waiting_for or "", [])
        return got[0][0] if got else None

    result = await measure(
        loops, watcher, arrived_at, next_ping, args.seconds, args.warmup, stack.smtp, server_pid
    )
    watcher.stop.set()
    await watch
    return result


# --- main -----------------------------------------------------------------------------


def run_echo(stack: Stack, args: argparse.Namespace) -> dict[str, float]:
    echo = subprocess.Popen(
        [sys.executable, __file__, "--echo-server", str(stack.imap), str(stack.smtp)]
    )
    time.sleep(1.0)
    try:
        return asyncio.run(echo_run(stack, args, echo.pid))
    finally:
        echo.send_signal(signal.SIGTERM)
        echo.wait(30)


def report(name: str, r: dict[str, float]) -> None:
    def per_message(cores: float) -> float:
        return cores / max(r["per_second"], 1e-9) * 1000

    rest = r["machine_cpu"] - r["server_cpu"] - r["client_cpu"]
    print(
        f"{name:5} {r['per_second']:7.1f} msg/s  ({r['completed']} in {r['seconds']:.1f} s"
        f" after {r['warmup']:.1f} s warm-up)"
        f"  median {r['median']:.3f} s  p99 {r['p99']:.3f} s\n"
        f"      server {r['server_cpu']:.0%} of a core"
        f" (its worker processes {r['server_children_cpu']:.0%}),"
        f" machine {r['machine_busy']:.0%} busy\n"
        f"      CPU a message: server {per_message(r['server_cpu']):.1f} ms,"
        f" clients {per_message(r['client_cpu']):.1f} ms,"
        f" Postfix, Dovecot and the rest {per_message(rest):.1f} ms;"
        f" all {per_message(r['machine_cpu']):.1f} ms",
        flush=True,
    )


def stage_waits(config_path: Path, start: float, end: float) -> str:
    """Where a move waited inside pbm, for the moves stored in the measured window:
    from stored to processed (the processor's queue and its work), and from processed
    to its last reply handed to Postfix (the sender's queue and SMTP); medians."""
    from sqlalchemy import func
    from sqlmodel import Session, col, select

    from pbm.clock import as_utc
    from pbm.config import load_config
    from pbm.store.engine import make_engine
    from pbm.store.models import InboundMessage, OutboxMail

    config = load_config(config_path)
    engine = make_engine(config.database_url)
    query = (
        select(
            InboundMessage.received_at, InboundMessage.processed_at, func.max(OutboxMail.sent_at)
        )
        .join(OutboxMail, col(OutboxMail.inbound_id) == col(InboundMessage.id))
        .where(
            col(InboundMessage.received_at).between(
                datetime.fromtimestamp(start, UTC), datetime.fromtimestamp(end, UTC)
            ),
            col(InboundMessage.processed_at).is_not(None),
            col(OutboxMail.sent_at).is_not(None),
        )
        .group_by(col(InboundMessage.id))
    )
    try:
        with Session(engine) as session:
            moves = [tuple(as_utc(t).timestamp() for t in row) for row in session.exec(query)]
    finally:
        engine.dispose()
    if not moves:
        return "      inside pbm: no move of the window found in the database"
    processing = statistics.median(p - r for r, p, _ in moves) * 1000
    sending = statistics.median(s - p for _, p, s in moves) * 1000
    return (
        f"      inside pbm (medians of {len(moves)} moves): stored -> processed"
        f" {processing:.0f} ms, processed -> last reply sent {sending:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", type=int, default=40, help="concurrent loops")
    parser.add_argument("--seconds", type=float, default=30.0, help="measured window")
    parser.add_argument("--warmup", type=float, default=60.0, help="longest warm-up, seconds")
    parser.add_argument("--game", default="quadrature")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--format", choices=("html", "text"), default="html", help="the players' mail format"
    )
    parser.add_argument(
        "--no-picture-worker",
        action="store_true",
        help="pbm draws its pictures in its own process ([mail] picture_worker = false)",
    )
    parser.add_argument("--echo-server", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server:
        asyncio.run(echo_server(*args.echo_server))
        return
    ms = Path(tempfile.mkdtemp(prefix="pbm-bench-mail-", dir="/tmp"))
    work = Path(tempfile.mkdtemp(prefix="pbm-bench-serve-", dir="/tmp"))
    stack = Stack(ms, *free_ports(3))
    stack.run("start")
    pbm = None
    try:
        print(
            f"stack up (smtp {stack.smtp}, imap {stack.imap}); {args.boards} loops,"
            f" players' mail format {args.format},"
            f" picture worker {'off' if args.no_picture_worker else 'on'}",
            flush=True,
        )
        # The echo loop runs before and after pbm and pbm is held to their mean: the
        # machine's other load drifts over a run, and the bare loop feels it most.
        echo_before = run_echo(stack, args)
        pbm = start_pbm(stack, work, not args.no_picture_worker)
        pbm_result = asyncio.run(pbm_run(stack, args, work / "pbm.toml", pbm.pid))
        pbm.send_signal(signal.SIGTERM)
        pbm.wait(60)
        pbm = None
        echo_after = run_echo(stack, args)
        report("echo", echo_before)
        report("pbm", pbm_result)
        print(
            stage_waits(
                work / "pbm.toml",
                pbm_result["window_start"],
                pbm_result["window_end"],
            ),
            flush=True,
        )
        report("echo", echo_after)
        echo_rate = (echo_before["per_second"] + echo_after["per_second"]) / 2
        ratio = pbm_result["per_second"] / max(echo_rate, 1e-9)
        print(
            f"pbm/echo throughput ratio {ratio:.2f}  (against the two echo runs' mean,"
            f" {echo_rate:.1f} msg/s; pbm mails 2 replies per move, echo 1)",
            flush=True,
        )
    finally:
        if pbm is not None:
            pbm.kill()
        stack.run("stop")
        if not os.environ.get("PBM_BENCH_KEEP"):
            shutil.rmtree(ms, ignore_errors=True)
        if os.environ.get("PBM_BENCH_KEEP"):
            print(f"kept {work} {ms}", flush=True)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
