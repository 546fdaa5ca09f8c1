"""Crash soak: SIGKILL `pbm serve` at random moments under a stream of moves, restart it,
and check that no move was lost or applied twice and that replies were not repeated much.

    .venv/bin/python benchmarks/soak.py [--kills 30] [--boards 20] [--seconds 600]
                                        [--seed N] [--stack] [--game quadrature]
                                        [--postgres [--daemons 3]] [--ahead 2] [--strict]

Everything lives in a fresh temporary directory: a configuration file, the SQLite
database, the daemon's log of each run (`run-NN.log`) and, by default, the Maildir
outbox. Players and boards are created through pbm's services before the daemon starts.
`--postgres` runs `--daemons` (3) daemons on one database of a private PostgreSQL
cluster (tests/pg_cluster.py), each with its own listener and Maildir; the players
spread their mail over them (the next one when one is down), and each kill hits one
daemon chosen at random.

Mail in and out:
- default: players submit over SMTP to pbm's own listener on 127.0.0.1; pbm writes its
  replies into the Maildir outbox. No root needed. A move counts as accepted when pbm
  answered 250; a refused or dropped connection (pbm killed) makes the driver send the
  same mail again, with the same Message-ID, once pbm answers again (as an MTA would).
- `--stack` (root, Debian): the real Postfix and Dovecot on loopback (.ci/mailstack.sh).
  Players submit to Postfix, which delivers to pbm's LMTP listener and keeps the mail
  while pbm is down; pbm sends its replies through Postfix into a Dovecot mailbox. A move
  counts as accepted when Postfix answered 250.

The driver runs one closed loop per board (`--boards` at once, interleaved): it keeps its
own copy of the position, mails a random legal move for the player to move as
`GAME move BOARD USERID PASSWORD MOVE#N` (the `#N` makes a repeated delivery harmless and
detectable), and sends the board's next move once the database shows the move `--ahead`
before it applied: with 2 (the default) the next move, the other player's, goes out
right after this one's 250, before pbm processed it, so that mail processed out of
order after a kill is refused ("not your move") and counted. A finished game makes its
loop go on with the next board of its pool.

Meanwhile `pbm serve` is killed with SIGKILL after a uniformly random 0.2-2 s of uptime,
restarted and waited for (its listener answers), `--kills` times; then the loops stop,
the daemon drains its queues and is stopped with SIGTERM. The database is then read
(read-only): the stored moves of each board against the moves accepted for it, and the
stored position against a replay of the stored moves. Each delivered reply is assigned
to the daemon run that sent it (the Maildir, or the players' Dovecot mailbox once
Postfix has delivered what the dead run handed it, is listed after each kill), so a
reply delivered again after a kill counts as a duplicate of that kill.

Besides, from the stored messages: how many were processed before a message of the
same loop (the same players, the same boards) accepted earlier ("out of order"), the
longest wait from acceptance to processing (kills in a row add up here), and the
longest wait after a restart: from the moment the killed daemon answered again to the
processing of a message accepted before.

Exits 1 when a move was lost or applied twice, a position differs from its replay, or
the run did not complete (fewer kills than asked, a loop stalled); with `--strict` also
when a kill caused more duplicate replies than mails can be in flight (one through the
Maildir, one per relay connection with --stack), a message was processed out of order,
or one waited longer than STRICT_WAIT_SECONDS after a restart. Traffic goes to
127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import email.parser
import email.policy
import imaplib
import itertools
import json
import os
import random
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path
from typing import Any

import aiosmtplib

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.this_tree import ROOT, child_environment
from pbm.app import initialize, register
from pbm.clock import SystemClock
from pbm.config import load_config
from pbm.games import get_game
from pbm.games.base import State
from pbm.outgoing import queue_replies
from pbm.services.accounts.consent import confirm
from pbm.services.accounts.users import create_user
from pbm.services.context import Context
from pbm.services.play.boards import replay
from pbm.services.play.challenges import NewBoard, create_game
from pbm.store.engine import make_engine, session_for
from pbm.store.schema import init_db

MAILSTACK = ROOT / ".ci" / "mailstack.sh"
HOST = "127.0.0.1"
DOMAIN = "example.test"
PASSWORD = "secret"
PLAYERS_BOX = "player"  # --stack: every player is player+USERID@example.test
RELAY_CONNECTIONS = 4  # --stack: pbm's connections to Postfix, each with a mail in flight
KILL_AFTER = (0.2, 2.0)  # seconds of uptime before each SIGKILL, uniformly random
RESEND_PAUSE = 0.1  # seconds between tries while pbm does not answer
POLL_SECONDS = 0.05  # how often the driver reads the move counts
STALL_SECONDS = 60.0  # an accepted move not applied within this long stalls its loop
READY_SECONDS = 60.0  # a restarted daemon must answer within this long
DRAIN_SECONDS = 60.0  # after the traffic: queues empty within this long
# --strict: a message accepted before a kill is processed within this long after the
# daemon is up again (a dead daemon's claims are taken at once, not after the 30 s lease;
# the rest is the backlog of the kill, processed in the order accepted).
STRICT_WAIT_SECONDS = 20.0
# Every restart empties the daemon's cache of verified passwords, so each player's first
# move after a kill pays a full scrypt; a cheaper hash keeps restarts short (the cost
# changes nothing the soak checks).
PASSWORD_COST = 10


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind((HOST, 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class Reader:
    """A read-only look at the database the daemons write: the SQLite file (opened
    read-only) or a PostgreSQL database (autocommit: every query sees the latest
    commits). Queries are written with `?` placeholders."""

    def __init__(self, target: Path | str) -> None:
        self.postgres = isinstance(target, str) and target.startswith("postgresql")
        self.conn: Any
        if self.postgres:
            import psycopg  # only with --postgres

            url = str(target).replace("postgresql+psycopg://", "postgresql://", 1)
            self.conn = psycopg.connect(url, autocommit=True)
        else:
            self.conn = sqlite3.connect(
                f"file:{target}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
            )

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        return self.conn.execute(sql.replace("?", "%s") if self.postgres else sql, params)

    def close(self) -> None:
        self.conn.close()


# A database that is busy or briefly away (a writer killed under us): read again later.
READ_ERRORS: tuple[type[Exception], ...] = (sqlite3.OperationalError,)


def instant(value: object) -> datetime:
    """A stored timestamp (naive UTC): SQLite gives its text, PostgreSQL a datetime."""
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


# --- the real mail stack (--stack) ----------------------------------------------------


@dataclass
class Stack:
    """Postfix and Dovecot from .ci/mailstack.sh, in their own directory and ports."""

    ms: Path
    smtp: int
    imap: int
    lmtp: int
    pbm_lmtp: int  # Postfix delivers pbm-lmtp@example.test here (pbm's LMTP listener)

    @property
    def env(self) -> dict[str, str]:
        return dict(
            os.environ,
            MS=str(self.ms),
            SMTP_PORT=str(self.smtp),
            IMAP_PORT=str(self.imap),
            LMTP_PORT=str(self.lmtp),
            PBM_LMTP_PORT=str(self.pbm_lmtp),
            DOMAINS=DOMAIN,
            USERS=f"pbm {PLAYERS_BOX}",
        )

    def run(self, *args: str) -> None:
        subprocess.run(["bash", str(MAILSTACK), *args], env=self.env, check=True, timeout=300)

    def queued_for_players(self) -> int:
        """Mails in Postfix's queue still to be delivered to a player."""
        out = subprocess.run(
            ["postqueue", "-c", str(self.ms / "postfix" / "etc"), "-j"],
            capture_output=True,
            timeout=30,
            check=False,
        ).stdout.decode()
        n = 0
        for line in out.splitlines():
            with contextlib.suppress(ValueError):
                item = json.loads(line)
                rcpts = [r.get("address", "") for r in item.get("recipients", [])]
                n += any(r.startswith(f"{PLAYERS_BOX}+") for r in rcpts)
        return n

    def mailbox(self) -> list[tuple[int, str]]:
        """(UID, Message-ID) of every mail in the players' mailbox, by UID."""
        client = imaplib.IMAP4(HOST, self.imap, timeout=30)
        try:
            client.login(PLAYERS_BOX, PASSWORD)
            client.select("INBOX", readonly=True)
            _, data = client.uid("fetch", "1:*", "(UID BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])")
            found = []
            for item in data:
                if not isinstance(item, tuple):
                    continue
                uid = int(item[0].split(b"UID ", 1)[1].split()[0])
                found.append((uid, message_id_of(item[1])))
            return sorted(found)
        finally:
            with contextlib.suppress(OSError, imaplib.IMAP4.error):
                client.logout()


def message_id_of(head: bytes) -> str:
    parsed = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(head)
    return " ".join(str(parsed.get("Message-ID", "")).split())


# --- where the replies land, and which daemon run sent each ----------------------------


class Deliveries:
    """The replies delivered so far, each assigned to the daemon run during (or right
    after) which it arrived: `close_run` is called after each kill, once the dead run's
    mail can no longer be on its way."""

    def __init__(
        self, maildir: Path | None, stack: Stack | None, more: tuple[Path, ...] = ()
    ) -> None:
        # the Maildir outboxes: one per daemon (`more`: the other daemons' with --postgres)
        self.maildirs = [*([maildir] if maildir is not None else []), *more]
        self.stack = stack
        self.run_of: dict[str, int] = {}  # Maildir file name or IMAP UID -> run
        self.mids: dict[str, str] = {}  # the same key -> Message-ID

    def close_run(self, run: int) -> None:
        if self.stack is not None:
            deadline = time.monotonic() + 30
            while self.stack.queued_for_players() and time.monotonic() < deadline:
                time.sleep(0.1)
            for uid, mid in self.stack.mailbox():
                self.run_of.setdefault(str(uid), run)
                self.mids.setdefault(str(uid), mid)
            return
        for maildir in self.maildirs:
            for sub in ("new", "cur"):  # tmp/ holds only what a killed writer left half done
                folder = maildir / sub
                if not folder.is_dir():
                    continue
                for path in folder.iterdir():
                    key = str(path)
                    if key in self.run_of:
                        continue
                    self.run_of[key] = run
                    with path.open("rb") as fh:
                        self.mids[key] = message_id_of(fh.read(16384))

    def copies(self) -> dict[str, list[int]]:
        """Message-ID -> the runs that delivered a copy of it, in order."""
        out: dict[str, list[int]] = {}
        for key, run in self.run_of.items():
            out.setdefault(self.mids[key], []).append(run)
        return {mid: sorted(runs) for mid, runs in out.items()}


# --- pbm serve --------------------------------------------------------------------------


class Server:
    """`pbm serve` as a child process; each run logs to its own file."""

    def __init__(self, workdir: Path, config_path: Path, port: int) -> None:
        self.workdir = workdir
        self.config_path = config_path
        self.port = port  # the listener that must answer before a run counts as up
        self.proc: asyncio.subprocess.Process | None = None
        self.run = -1
        self.log_path = workdir / "run-00.log"

    async def start(self) -> None:
        self.run += 1
        self.log_path = self.workdir / f"run-{self.run:02d}.log"
        with self.log_path.open("ab") as log:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "pbm",
                "--config",
                str(self.config_path),
                "serve",
                "--log-level",
                "INFO",
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd=self.workdir,
                env=child_environment(),
            )
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            if self.proc.returncode is not None:
                raise RuntimeError(f"pbm serve exited with {self.proc.returncode}")
            if await self._answers():
                return
            await asyncio.sleep(0.05)
        raise RuntimeError(f"pbm serve did not answer on port {self.port}")

    async def _answers(self) -> bool:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, self.port), 1)
        except (OSError, TimeoutError):
            return False
        try:
            line = await asyncio.wait_for(reader.readline(), 2)
            writer.write(b"QUIT\r\n")
            await writer.drain()
            return line.startswith(b"220")
        except (OSError, TimeoutError):
            return False
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def kill(self) -> None:
        assert self.proc is not None
        if self.proc.returncode is not None:
            raise RuntimeError(f"pbm serve exited by itself with {self.proc.returncode}")
        self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()
        self.proc = None

    async def terminate(self) -> int | None:
        """SIGTERM; returns the exit code (None: it had to be killed after 60 s)."""
        if self.proc is None:
            return None
        if self.proc.returncode is not None:
            return self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return await asyncio.wait_for(self.proc.wait(), 60)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
            return None
        finally:
            self.proc = None


# --- the players ------------------------------------------------------------------------


@dataclass
class BoardRef:
    game_id: int
    number: str
    options: dict[str, str]


@dataclass
class Loop:
    """One stream of moves: two players and their pool of boards, played one after another."""

    index: int
    userids: tuple[str, str]
    addresses: tuple[str, str]
    pool: list[BoardRef]
    current: int = 0
    # per game id: the canonical texts of the moves pbm accepted (250), and their Message-IDs
    accepted: dict[int, list[str]] = field(default_factory=dict)
    message_ids: dict[int, list[str]] = field(default_factory=dict)
    states: dict[int, State] = field(default_factory=dict)  # the driver's copy of each board
    unacknowledged: dict[int, str] = field(default_factory=dict)  # sent, never a 250
    order: list[str] = field(default_factory=list)  # Message-IDs in the order accepted
    stalled: str | None = None


@dataclass
class Tally:
    tries: int = 0  # SMTP transactions begun
    resent: int = 0  # mails that needed more than one try
    dropped: int = 0  # tries whose open connection failed under them (pbm killed)
    temporary: int = 0  # 4xx answers
    refused: int = 0  # 5xx answers: the driver stops that loop
    accepted: int = 0


class Driver:
    def __init__(
        self,
        args: argparse.Namespace,
        rng: random.Random,
        db_path: Path | str,
        smtp_ports: list[int],
        to_address: str,
    ) -> None:
        self.args = args
        self.rules = get_game(args.game)
        self.rng = rng
        self.db_path = db_path  # the SQLite file, or the PostgreSQL URL
        # the listeners mail is submitted to: the next one while one does not answer
        self.smtp_ports = smtp_ports
        self.to_address = to_address
        self.tally = Tally()
        self.stop_traffic = asyncio.Event()
        self.deadline = float("inf")  # no move is sent after this (monotonic)
        self.hard_deadline = float("inf")  # nothing is waited for after this
        self.applied: dict[int, int] = {}  # game id -> stored move count
        self.changed = asyncio.Condition()
        self.moves_left = args.max_moves if args.max_moves is not None else 10**12

    async def poll(self, until: asyncio.Event) -> None:
        """Read every board's move count, read-only, every POLL_SECONDS."""
        db = Reader(self.db_path)
        try:
            while not until.is_set():
                try:
                    rows = await asyncio.to_thread(
                        lambda: db.execute("SELECT id, move_count FROM games").fetchall()
                    )
                except READ_ERRORS:
                    rows = []  # locked by a writer dying under us: read again next time
                if rows:
                    async with self.changed:
                        self.applied = {int(i): int(n) for i, n in rows}
                        self.changed.notify_all()
                await asyncio.sleep(POLL_SECONDS)
        finally:
            db.close()

    async def play(self, loop: Loop) -> None:
        smtp: aiosmtplib.SMTP | None = None
        try:
            while not self.stop_traffic.is_set() and loop.current < len(loop.pool):
                board = loop.pool[loop.current]
                if board.game_id not in loop.states:
                    loop.states[board.game_id] = replay(self.rules, board.options, [])
                state = loop.states[board.game_id]
                seat = self.rules.to_move(state)
                if seat is None:
                    loop.current += 1
                    continue
                if self.moves_left <= 0:
                    break
                self.moves_left -= 1
                player = list(self.rules.player_seats(state)).index(seat)
                move = self.rng.choice(list(self.rules.legal_moves(state)))
                text = self.rules.format_move(state, move)
                number = len(loop.accepted.get(board.game_id, [])) + 1
                msg = self.compose(loop, board, player, f"{text}#{number}")
                smtp, outcome = await self.deliver(smtp, msg)
                if outcome != "accepted":
                    loop.unacknowledged[board.game_id] = text
                    if outcome == "refused":
                        loop.stalled = f"move {number} of board {board.number} refused"
                    break
                self.tally.accepted += 1
                loop.accepted.setdefault(board.game_id, []).append(text)
                loop.states[board.game_id] = self.rules.apply(state, move)
                loop.message_ids.setdefault(board.game_id, []).append(str(msg["Message-ID"]))
                loop.order.append(str(msg["Message-ID"]))
                # the next move goes out before this one is applied (--ahead 2), but not
                # before the one before it; the last move of a board waits for itself
                waited = number if self.rules.to_move(loop.states[board.game_id]) is None else 0
                waited = max(waited, number - self.args.ahead + 1)
                if waited and not await self.wait_applied(board.game_id, waited):
                    loop.stalled = (
                        f"move {waited} of board {board.number} "
                        f"not applied within {STALL_SECONDS:.0f} s"
                    )
                    break
        finally:
            if smtp is not None:
                with contextlib.suppress(aiosmtplib.SMTPException, OSError, TimeoutError):
                    await smtp.quit()

    def compose(self, loop: Loop, board: BoardRef, player: int, move: str) -> EmailMessage:
        msg = EmailMessage()
        msg["From"] = loop.addresses[player]
        msg["To"] = self.to_address
        userid = loop.userids[player]
        msg["Subject"] = f"{self.rules.name} move {board.number} {userid} {PASSWORD} {move}"
        msg["Date"] = formatdate()
        msg["Message-ID"] = make_msgid("soak", domain=DOMAIN)
        msg.set_content("")
        return msg

    async def deliver(
        self, smtp: aiosmtplib.SMTP | None, msg: EmailMessage
    ) -> tuple[aiosmtplib.SMTP | None, str]:
        """Send `msg` until the server answers 250 ("accepted"), refuses it for good
        ("refused") or the deadline passes ("timeout"); a refused or dropped connection
        or a 4xx answer means the same mail again, as an MTA would send it."""
        tries = 0
        while time.monotonic() < self.deadline:
            tries += 1
            self.tally.tries += 1
            self.tally.resent += tries == 2
            connected = False
            try:
                if smtp is None or not smtp.is_connected:
                    port = self.smtp_ports[(self.rng.randrange(len(self.smtp_ports)))]
                    smtp = aiosmtplib.SMTP(hostname=HOST, port=port, timeout=10)
                    await smtp.connect(start_tls=False)
                connected = True
                await smtp.send_message(msg)
                return smtp, "accepted"
            except aiosmtplib.SMTPResponseException as exc:
                if 500 <= exc.code < 600:
                    self.tally.refused += 1
                    progress(f"refused {msg['Message-ID']}: {exc.code} {exc.message}")
                    return smtp, "refused"
                self.tally.temporary += 1
            except aiosmtplib.SMTPRecipientsRefused as exc:
                codes = [r.code for r in exc.recipients]
                if all(500 <= c < 600 for c in codes):
                    self.tally.refused += 1
                    return smtp, "refused"
                self.tally.temporary += 1
            except (aiosmtplib.SMTPException, OSError, TimeoutError):
                self.tally.dropped += connected
                if smtp is not None:
                    smtp.close()
                smtp = None
            await asyncio.sleep(RESEND_PAUSE)
        return smtp, "timeout"

    async def wait_applied(self, game_id: int, number: int) -> bool:
        deadline = min(time.monotonic() + STALL_SECONDS, self.hard_deadline)
        async with self.changed:
            while self.applied.get(game_id, 0) < number:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.changed.wait(), left)
        return True


# --- setting up ---------------------------------------------------------------------------


def write_config(
    path: Path,
    data: Path,
    listen_port: int,
    stack: Stack | None,
    maildir: Path,
    database_url: str | None = None,
) -> None:
    """A daemon's configuration; `database_url` None: SQLite in `data`."""
    database_url = database_url or f"sqlite:///{data / 'pbm.sqlite3'}"
    if stack is None:
        mail = f"""
[mail]
outbox_maildir = "{maildir}"
health_seconds = 5

[mail.listen]
smtp = "{HOST}:{listen_port}"
"""
    else:
        # Every player's mail goes to one Dovecot mailbox by its +tag: to pbm each
        # tagged address is a player's own mailbox (no tag separators).
        mail = f"""
[mail]
health_seconds = 5
tag_separators = ""

[mail.listen]
smtp = ""
lmtp = "{HOST}:{stack.pbm_lmtp}"

[mail.relay]
host = "{HOST}"
port = {stack.smtp}
starttls = false
rate = 0
connections = {RELAY_CONNECTIONS}
retry_base_seconds = 1
retry_max_seconds = 5
"""
    path.write_text(
        f"""# written by benchmarks/soak.py
[server]
address = "pbm@{DOMAIN}"
data_dir = "{data}"

[store]
database_url = "{database_url}"

[security]
password_cost = {PASSWORD_COST}
{mail}""",
        encoding="utf-8",
    )


def create_players_and_boards(config_path: Path, args: argparse.Namespace) -> list[Loop]:
    """Two players per loop and `--pool` boards for each pair, as `pbm user add` and
    `pbm game new` would make them (the board mails are queued too)."""
    config = load_config(config_path)
    initialize(config)
    rules = get_game(args.game)
    engine = make_engine(config.database_url)
    init_db(engine)
    loops: list[Loop] = []
    try:
        with session_for(engine) as session:
            ctx = Context(session=session, clock=SystemClock(), config=config, sender="")
            for i in range(args.boards):
                userids = (f"s{i:03d}a", f"s{i:03d}b")
                # --stack: one Dovecot mailbox holds every player's mail (plus-addressing)
                box = f"{PLAYERS_BOX}+" if args.stack else ""
                addresses = (f"{box}{userids[0]}@{DOMAIN}", f"{box}{userids[1]}@{DOMAIN}")
                for userid, address in zip(userids, addresses, strict=True):
                    # Made and vouched for by the operator (`pbm user add --confirmed`).
                    _user, rows = create_user(ctx, userid, PASSWORD, [address])
                    for row in rows:
                        confirm(ctx, row)
                pool = []
                for _ in range(args.pool):
                    board = create_game(ctx, NewBoard(rules, list(userids)))
                    pool.append(BoardRef(board.id, board.row.board, dict(board.row.options)))
                loops.append(Loop(i, userids, addresses, pool))
            queue_replies(ctx, None, ctx.replies, inbound_id=None)
            session.commit()
    finally:
        engine.dispose()
    return loops


# --- the run ------------------------------------------------------------------------------


@dataclass
class RunLog:
    kills: int = 0
    kill_uptimes: list[float] = field(default_factory=list)
    restart_seconds: list[float] = field(default_factory=list)
    # when each restarted daemon answered again (naive UTC, as the database stores times)
    restarted_at: list[datetime] = field(default_factory=list)
    drained: bool = False
    term_code: int | None = None
    errors: list[str] = field(default_factory=list)


async def drive(
    args: argparse.Namespace,
    rng: random.Random,
    servers: list[Server],
    driver: Driver,
    loops: list[Loop],
    deliveries: Deliveries,
    db_path: Path | str,
    started: float,
) -> RunLog:
    log = RunLog()
    # the traffic stops early enough for the queues to drain within --seconds
    driver.hard_deadline = started + args.seconds
    driver.deadline = driver.hard_deadline - min(DRAIN_SECONDS, args.seconds / 4)
    polling_done = asyncio.Event()
    poller = asyncio.create_task(driver.poll(polling_done))
    players: list[asyncio.Task[None]] = []
    server = servers[0]
    try:
        for server in servers:
            await server.start()
            progress(f"pbm serve up (run 0, log {server.log_path})")
        players = [asyncio.create_task(driver.play(loop)) for loop in loops]
        for k in range(1, args.kills + 1):
            uptime = rng.uniform(*KILL_AFTER)
            if time.monotonic() + uptime >= driver.deadline:
                log.errors.append(f"--seconds ran out after {log.kills} kills")
                break
            await asyncio.sleep(uptime)
            server = rng.choice(servers)
            await server.kill()
            # the replies delivered so far: before kill k (the duplicates' reference)
            await asyncio.to_thread(deliveries.close_run, log.kills)
            log.kills += 1
            log.kill_uptimes.append(uptime)
            t0 = time.monotonic()
            await server.start()
            log.restart_seconds.append(time.monotonic() - t0)
            log.restarted_at.append(datetime.now(UTC).replace(tzinfo=None))
            progress(
                f"kill {k}/{args.kills} ({server.workdir.name}) after {uptime:.2f} s; up "
                f"again in {log.restart_seconds[-1]:.2f} s; {driver.tally.accepted} accepted"
            )
        # one more stretch of traffic after the last restart, then let the loops finish
        # the move in hand and the daemons drain their queues
        await asyncio.sleep(
            min(rng.uniform(*KILL_AFTER), max(0, driver.deadline - time.monotonic()))
        )
    except RuntimeError as exc:
        tail = server.log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-3:]
        log.errors.append(f"{exc} (log: {server.log_path}: {' | '.join(tail)})")
        # no daemon to wait for: the loops give up their move in hand at once
        driver.deadline = driver.hard_deadline = time.monotonic()
        async with driver.changed:
            driver.changed.notify_all()
    driver.stop_traffic.set()
    if players:
        left = max(1.0, driver.hard_deadline - time.monotonic())
        done, pending = await asyncio.wait(players, timeout=left)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        for task in done:
            if task.exception() is not None:
                log.errors.append(f"driver loop failed: {task.exception()!r}")
    polling_done.set()
    await poller
    if all(s.proc is not None and s.proc.returncode is None for s in servers):
        left = min(DRAIN_SECONDS, max(1.0, driver.hard_deadline - time.monotonic()))
        log.drained = await asyncio.to_thread(wait_drained, db_path, left)
    for server in servers:
        code = await server.terminate()
        if code != 0:
            log.errors.append(f"pbm serve ({server.workdir.name}) exited with {code} on SIGTERM")
        log.term_code = code if log.term_code in (None, 0) else log.term_code
    await asyncio.to_thread(deliveries.close_run, log.kills)
    return log


def wait_drained(db_path: Path | str, timeout: float) -> bool:
    """Whether every stored message was handled and every reply sent within `timeout`."""
    deadline = time.monotonic() + timeout
    db = Reader(db_path)
    try:
        while True:
            with contextlib.suppress(*READ_ERRORS):
                (new,) = db.execute(
                    "SELECT count(*) FROM inbound_messages WHERE status = 'new'"
                ).fetchone()
                (queued,) = db.execute(
                    "SELECT count(*) FROM outbox WHERE status = 'queued'"
                ).fetchone()
                if new == 0 and queued == 0:
                    return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
    finally:
        db.close()


# --- checking -------------------------------------------------------------------------------


@dataclass
class Verdict:
    accepted: int = 0
    applied: int = 0
    lost: int = 0
    twice: int = 0
    applied_unacknowledged: int = 0
    differ: int = 0
    boards_played: int = 0
    games_finished: int = 0
    delivered: int = 0
    unique_delivered: int = 0
    outbox_rows: int = 0
    outbox_undelivered: int = 0
    duplicates: int = 0
    same_run_duplicates: int = 0
    duplicates_by_kill: list[int] = field(default_factory=list)
    out_of_order: int = 0  # processed before a message of its loop accepted earlier
    longest_wait: float = 0.0  # seconds from acceptance (stored) to processing
    # seconds from a restart to the processing of a message accepted before it: what a
    # dead daemon's claims cost (a lease would show here), whatever the kill rate
    longest_wait_after_restart: float = 0.0
    details: list[str] = field(default_factory=list)


def verify(
    db_path: Path | str,
    rules_name: str,
    loops: list[Loop],
    deliveries: Deliveries,
    kills: int,
    restarts: list[datetime] | None = None,
):
    rules = get_game(rules_name)
    v = Verdict()
    db = Reader(db_path)
    try:
        for loop in loops:
            check_order(db, loop, v, sorted(restarts or []))
        games = {
            int(r[0]): r
            for r in db.execute(
                "SELECT id, board, options, position, move_count, status FROM games"
            )
        }
        for loop in loops:
            for board in loop.pool:
                gid = board.game_id
                _, number, options, position, move_count, status = games[gid]
                rows = db.execute(
                    "SELECT number, text FROM moves WHERE game_id = ? ORDER BY number, id", (gid,)
                ).fetchall()
                stored = [str(t) for _, t in rows]
                numbers = [int(n) for n, _ in rows]
                accepted = loop.accepted.get(gid, [])
                v.accepted += len(accepted)
                v.applied += len(stored)
                v.boards_played += bool(stored)
                v.games_finished += status == "finished"
                same = 0
                while same < min(len(stored), len(accepted)) and stored[same] == accepted[same]:
                    same += 1
                lost = len(accepted) - same
                extra = len(stored) - same
                if extra == 1 and lost == 0 and loop.unacknowledged.get(gid) == stored[-1]:
                    # sent when the time ran out, stored, but the 250 never came back
                    v.applied_unacknowledged += 1
                    extra = 0
                repeated_numbers = len(numbers) - len(set(numbers))
                v.lost += lost
                v.twice += max(extra, repeated_numbers)
                if lost or extra or repeated_numbers or move_count != len(stored):
                    v.details.append(
                        f"board {number}: accepted {len(accepted)}, stored {len(stored)} "
                        f"(move_count {move_count}), first difference at move {same + 1}"
                    )
                    for mid in loop.message_ids.get(gid, [])[same:]:
                        row = db.execute(
                            "SELECT status, error FROM inbound_messages WHERE message_id = ?",
                            (mid,),
                        ).fetchone()
                        shown = "never stored" if row is None else f"{row[0]} {row[1] or ''}"
                        v.details.append(f"  {mid}: {shown.strip()[:200]}")
                try:
                    replayed = rules.dump(replay(rules, json.loads(options), stored))
                except Exception as exc:  # a stored move the rules refuse is a difference too
                    replayed = f"replay failed: {exc}"
                if replayed != position:
                    v.differ += 1
                    v.details.append(f"board {number}: stored position differs from a replay")
        outbox_mids = [str(r[0]) for r in db.execute("SELECT message_id FROM outbox")]
    finally:
        db.close()
    copies = deliveries.copies()
    v.outbox_rows = len(outbox_mids)
    v.outbox_undelivered = sum(1 for m in outbox_mids if m not in copies)
    v.delivered = sum(len(runs) for runs in copies.values())
    v.unique_delivered = len(copies)
    v.duplicates_by_kill = [0] * (kills + 1)  # [k]: copies caused by kill k (1-based)
    for runs in copies.values():
        for before, run in itertools.pairwise(runs):
            v.duplicates += 1
            if run == before:
                v.same_run_duplicates += 1
            else:
                # the run that delivered it first ended with kill `before + 1` before the
                # outbox recorded it as sent
                v.duplicates_by_kill[before + 1] += 1
    return v


def check_order(db: Reader, loop: Loop, v: Verdict, restarts: list[datetime]) -> None:
    """Count the loop's messages processed before one it had accepted earlier (its two
    players, its boards: each waits for the one before), and the longest waits: from
    acceptance to processing, and from the last restart (`restarts`, sorted) before its
    processing to it, for a message accepted before that restart."""
    latest: datetime | None = None
    for mid in loop.order:
        row = db.execute(
            "SELECT received_at, processed_at FROM inbound_messages WHERE message_id = ?", (mid,)
        ).fetchone()
        if row is None or row[1] is None:
            continue  # never stored or never processed: counted as lost
        received, processed = instant(row[0]), instant(row[1])
        v.longest_wait = max(v.longest_wait, (processed - received).total_seconds())
        last = bisect_right(restarts, processed) - 1
        if last >= 0 and received < restarts[last]:
            waited = (processed - restarts[last]).total_seconds()
            v.longest_wait_after_restart = max(v.longest_wait_after_restart, waited)
        if latest is not None and processed < latest:
            v.out_of_order += 1
            v.details.append(f"  {mid}: processed before a message of its loop accepted earlier")
        latest = processed if latest is None else max(latest, processed)


# --- the report -------------------------------------------------------------------------------


def report(
    args: argparse.Namespace,
    argv: list[str],
    elapsed: float,
    driver: Driver,
    loops: list[Loop],
    run: RunLog,
    v: Verdict,
) -> dict[str, Any]:
    per_kill = v.duplicates_by_kill[1 : run.kills + 1]
    worst = max(per_kill, default=0)
    in_flight = RELAY_CONNECTIONS if args.stack else 1  # mails a kill may send again
    stalled = [loop.stalled for loop in loops if loop.stalled]
    mode = "Postfix -> LMTP in, relay out to Dovecot" if args.stack else "SMTP listener, Maildir"
    if args.postgres:
        mode += f"; PostgreSQL, {args.daemons} daemons"
    restart = sorted(run.restart_seconds)
    rows: list[tuple[str, object, str]] = [
        ("SIGKILLs of pbm serve (then restarted)", run.kills, f"{args.kills}"),
        ("SMTP tries (with those refused while down)", driver.tally.tries, ""),
        ("  connections lost during a transaction", driver.tally.dropped, ""),
        ("  temporary failures answered (4xx)", driver.tally.temporary, ""),
        ("  refused for good (5xx)", driver.tally.refused, "0"),
        ("moves sent again (same Message-ID)", driver.tally.resent, ""),
        ("moves accepted (250)", v.accepted, ""),
        ("moves applied (stored)", v.applied, "= accepted"),
        ("moves lost", v.lost, "0"),
        ("moves applied twice", v.twice, "0"),
        ("messages processed out of order", v.out_of_order, "0"),
        ("longest wait, accepted to processed", f"{v.longest_wait:.2f} s", ""),
        (
            "longest wait after a restart, to processed",
            f"{v.longest_wait_after_restart:.2f} s",
            f"<= {STRICT_WAIT_SECONDS:.0f} s",
        ),
        ("moves stored without a 250 (time ran out)", v.applied_unacknowledged, ""),
        ("positions that differ from a replay", v.differ, "0"),
        ("boards played / games finished", f"{v.boards_played} / {v.games_finished}", ""),
        ("outgoing mails queued (outbox rows)", v.outbox_rows, ""),
        ("  never delivered", v.outbox_undelivered, "0"),
        ("outgoing mails delivered", v.delivered, ""),
        ("duplicate deliveries (same Message-ID)", v.duplicates, ""),
        ("  without a kill between the copies", v.same_run_duplicates, "0"),
        ("duplicate deliveries per kill, max", worst, f"<= {in_flight}"),
        ("duplicate deliveries per kill, mean", f"{(sum(per_kill) / max(1, run.kills)):.2f}", ""),
        (
            f"kills with more than {in_flight} duplicates",
            sum(1 for n in per_kill if n > in_flight),
            "0",
        ),
        (
            "restart until the listener answers, median / max",
            f"{restart[len(restart) // 2]:.2f} / {restart[-1]:.2f} s" if restart else "-",
            "",
        ),
    ]
    print(f"pbm crash soak: {args.boards} boards of {args.game} (--ahead {args.ahead}), {mode}")
    print(f"command: {shlex.join(argv)}")
    print(f"elapsed: {elapsed:.1f} s (of --seconds {args.seconds:g})")
    print()
    width = max(len(r[0]) for r in rows)
    print(f"{'':{width}}  {'value':>12}  target")
    for name, value, target in rows:
        print(f"{name:{width}}  {value!s:>12}  {target}")
    histogram = Counter(per_kill)
    print()
    print(
        "duplicates per kill: "
        + (", ".join(f"{n} dup x{c} kills" for n, c in sorted(histogram.items())) or "-")
    )
    problems = list(run.errors)
    if v.lost or v.twice or v.differ or driver.tally.refused:
        problems.append("moves lost, applied twice, refused, or positions differ")
    if stalled:
        problems.append(f"{len(stalled)} loops stalled: " + "; ".join(stalled[:5]))
    if run.kills < args.kills:
        problems.append(f"only {run.kills} of {args.kills} kills")
    if not run.drained:
        problems.append("the queues did not drain before SIGTERM")
    if v.outbox_undelivered:
        problems.append(f"{v.outbox_undelivered} queued mails never delivered")
    if args.strict and (worst > in_flight or v.same_run_duplicates):
        problems.append(f"duplicate deliveries above {in_flight} per kill")
    if args.strict and v.out_of_order:
        problems.append(f"{v.out_of_order} messages processed out of order")
    if args.strict and v.longest_wait_after_restart > STRICT_WAIT_SECONDS:
        waited = v.longest_wait_after_restart
        problems.append(f"a message waited {waited:.1f} s after a restart")
    if run.errors:
        print("the run was cut short: moves accepted but never applied count as lost")
    for line in v.details[:40]:
        print(line)
    print()
    verdict = "PASS" if not problems else "FAIL: " + "; ".join(problems)
    if not problems and (worst > in_flight or v.same_run_duplicates):
        verdict += f" (but up to {worst} duplicate replies per kill; --strict fails on that)"
    print("result: " + verdict)
    return {
        "argv": argv,
        "elapsed": elapsed,
        "kills": run.kills,
        "kill_uptimes": run.kill_uptimes,
        "restart_seconds": run.restart_seconds,
        "tries": driver.tally.tries,
        "resent": driver.tally.resent,
        "dropped": driver.tally.dropped,
        "refused": driver.tally.refused,
        "accepted": v.accepted,
        "applied": v.applied,
        "lost": v.lost,
        "twice": v.twice,
        "applied_unacknowledged": v.applied_unacknowledged,
        "differ": v.differ,
        "delivered": v.delivered,
        "outbox_rows": v.outbox_rows,
        "outbox_undelivered": v.outbox_undelivered,
        "duplicates": v.duplicates,
        "same_run_duplicates": v.same_run_duplicates,
        "out_of_order": v.out_of_order,
        "longest_wait": v.longest_wait,
        "longest_wait_after_restart": v.longest_wait_after_restart,
        "duplicates_by_kill": per_kill,
        "max_duplicates_per_kill": worst,
        "stalled": stalled,
        "problems": problems,
        "passed": not problems,
    }


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=30, help="SIGKILLs of pbm serve")
    parser.add_argument("--boards", type=int, default=20, help="boards played at once")
    parser.add_argument("--seconds", type=float, default=600, help="bound on the whole run")
    parser.add_argument("--seed", type=int, default=None, help="moves and kill moments")
    parser.add_argument("--stack", action="store_true", help="real Postfix + Dovecot (root)")
    parser.add_argument("--game", default="quadrature", help="the game played on every board")
    parser.add_argument("--pool", type=int, default=6, help="boards per loop, played in turn")
    parser.add_argument("--max-moves", type=int, default=None, help="stop sending after this")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="fail above 1 duplicate per kill, on mail out of order, on a long wait",
    )
    parser.add_argument(
        "--ahead", type=int, default=2, help="moves of a board sent before the first applied"
    )
    parser.add_argument(
        "--postgres", action="store_true", help="daemons on a private PostgreSQL cluster"
    )
    parser.add_argument("--daemons", type=int, default=None, help="with --postgres (3)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(10**6)
    if args.kills < 0 or args.boards < 1 or args.pool < 1 or args.seconds <= 0:
        parser.error("--kills >= 0, --boards >= 1, --pool >= 1 and --seconds > 0")
    if args.ahead < 1:
        parser.error("--ahead >= 1")
    if args.daemons is None:
        args.daemons = 3 if args.postgres else 1
    if args.daemons != 1 and not args.postgres:
        parser.error("several daemons need --postgres (SQLite takes one daemon per file)")
    if args.postgres and args.stack:
        parser.error("--postgres runs with pbm's own listeners, not with --stack")
    return args


def start_postgres() -> tuple[Any, str]:
    """A private PostgreSQL cluster (tests/pg_cluster.py) and a database in it."""
    from tests import pg_cluster  # only with --postgres: the tests' helper

    cluster = pg_cluster.start_cluster()
    return cluster, pg_cluster.create_database(cluster, "soak")


def main(argv: list[str] | None = None) -> int:
    started = time.monotonic()
    raw = sys.argv[1:] if argv is None else argv
    args = parse_args(raw)
    shown = [sys.executable, "benchmarks/soak.py", *raw]
    if "--seed" not in raw:
        shown += ["--seed", str(args.seed)]
    rng = random.Random(args.seed)
    # not a 0700 mkdtemp under a private tmp: Postfix's and Dovecot's users must traverse it
    workdir = Path(tempfile.mkdtemp(prefix="pbm-soak-", dir="/tmp"))
    stack: Stack | None = None
    cluster: Any = None
    ok = False
    try:
        db_target: Path | str = workdir / "var" / "pbm.sqlite3"
        url: str | None = None
        if args.postgres:
            progress("starting a private PostgreSQL cluster")
            cluster, url = start_postgres()
            db_target = url
        if args.stack:
            ms = workdir / "mailstack"
            ms.mkdir()
            workdir.chmod(0o755)
            stack = Stack(ms, *free_ports(4))
            progress(f"starting Postfix and Dovecot in {ms}")
            stack.run("start")
        # one directory per daemon (data, Maildir, logs); the first is `workdir` itself
        homes = [workdir] + [workdir / f"d{n}" for n in range(1, args.daemons)]
        ports = free_ports(len(homes))
        for home, port in zip(homes, ports, strict=True):
            (home / "var").mkdir(parents=True)
            maildir = home / "var" / "outbox"
            write_config(home / "pbm.toml", home / "var", port, stack, maildir, url)
        loops = create_players_and_boards(workdir / "pbm.toml", args)
        progress(f"{2 * args.boards} players, {args.boards * args.pool} boards in {workdir}")
        if stack is not None:
            driver = Driver(args, rng, db_target, [stack.smtp], f"pbm-lmtp@{DOMAIN}")
            servers = [Server(workdir, workdir / "pbm.toml", stack.pbm_lmtp)]
        else:
            driver = Driver(args, rng, db_target, ports, f"pbm@{DOMAIN}")
            servers = [
                Server(home, home / "pbm.toml", port)
                for home, port in zip(homes, ports, strict=True)
            ]
        maildirs = [home / "var" / "outbox" for home in homes]
        deliveries = Deliveries(None if stack else maildirs[0], stack, tuple(maildirs[1:]))
        run = asyncio.run(drive(args, rng, servers, driver, loops, deliveries, db_target, started))
        verdict = verify(db_target, args.game, loops, deliveries, run.kills, run.restarted_at)
        figures = report(args, shown, time.monotonic() - started, driver, loops, run, verdict)
        if args.json is not None:
            args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
        ok = bool(figures["passed"])
        if not ok:
            print(f"daemon logs: {workdir}/**/run-*.log (kept)")
        return 0 if ok else 1
    finally:
        if stack is not None:
            with contextlib.suppress(subprocess.SubprocessError):
                stack.run("stop")
        if cluster is not None:
            cluster.stop()
        if ok and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            progress(f"kept {workdir}")


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    sys.exit(main())
