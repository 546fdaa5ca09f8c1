"""Three real `pbm serve` processes on one PostgreSQL (docs/scale-out.md), each with its
own LMTP listener on 127.0.0.1 and its own Maildir outbox.

Moves on many Quarto boards are delivered round-robin over the three listeners; every
move reaches the daemons three times at once (its mail twice, at two daemons, as when
Postfix delivers a message again, and a second mail with the same move, as when a
player sends it twice) so that one board's messages are processed side by side by
different daemons; one daemon is SIGKILLed in the middle and started again. A periodic
job, a reminder and a forfeit that fall due while two daemons run happen once.

Every loop is bounded by a count and by time; the counts are module constants."""

from __future__ import annotations

import contextlib
import email.parser
import json
import random
import signal
import smtplib
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.policy import compat32
from pathlib import Path

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from pbm.clock import SystemClock
from pbm.config import Config
from pbm.games import quarto
from pbm.intake import process_message
from pbm.jobs import JOB_SECONDS, due_time
from pbm.services.context import Context
from pbm.services.play.boards import board_from_row
from pbm.services.play.moves import replay_check
from pbm.store import claims, queries
from pbm.store.engine import make_engine, session_for
from pbm.store.models import BoardRow, InboundMessage, OutboxMail
from pbm.store.models_correspondence import JobMark

MOVES = 600  # applied in all, over BOARDS boards (MOVES // BOARDS rounds)
BOARDS = 100
PLAYERS = 20  # each plays BOARDS * 2 // PLAYERS boards
DAEMONS = 3
KILLS = 1  # SIGKILLs (of the second daemon, in the middle round)
ROUND_SECONDS = 100.0  # a round, a SIGKILL and a restart included
START_SECONDS = 30.0  # for a daemon to start, or to stop after SIGTERM
SETTLE_SECONDS = 60.0  # for the last replies to be sent
DELIVERY_TRIES = 40  # a delivery tries the next daemon after a refusal, this often
SERVER = "pbm@example.org"
PASSWORD = "pw"
RULES = quarto.GAME  # the rules module itself: benchmarks/scale_out.py imports this


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(predicate: Callable[[], bool], seconds: float, step: float = 0.1) -> bool:
    """Poll `predicate` until it holds, at most `seconds` (and so many polls)."""
    deadline = time.monotonic() + seconds
    for _ in range(int(seconds / step) + 1):
        if predicate():
            return True
        if time.monotonic() > deadline:
            break
        time.sleep(step)
    return predicate()


class Daemon:
    """`python -m pbm --config FILE serve` with its own data directory, LMTP port and
    Maildir outbox, on the shared database."""

    def __init__(self, root: Path, name: str, url: str, log_level: str = "INFO") -> None:
        self.name = name
        self.log_level = log_level
        self.dir = root / name
        self.dir.mkdir()
        self.port = free_port()
        self.config = self.dir / "pbm.toml"
        self.config.write_text(
            f'[server]\naddress = "{SERVER}"\ndata_dir = "{self.dir / "var"}"\n'
            f'[store]\ndatabase_url = "{url}"\n'
            "[security]\npassword_cost = 4\n"
            "[limits]\nreplies_per_address_hour = 100000\n"
            "[mail]\nhealth_seconds = 600\n"
            f'[mail.listen]\nsmtp = ""\nlmtp = "127.0.0.1:{self.port}"\n',
            encoding="utf-8",
        )
        self.log_path = self.dir / "serve.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def spawn(self) -> None:
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "pbm",
                    "--config",
                    str(self.config),
                    "serve",
                    "--log-level",
                    self.log_level,
                ],
                cwd=self.dir,
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
            )

    def running(self) -> bool:
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return False
        try:
            status = json.loads((self.dir / "var" / "daemon-status.json").read_text())
        except (OSError, ValueError):
            return False
        return bool(status.get("pid") == proc.pid and status.get("state") == "running")

    def start(self) -> None:
        self.spawn()
        assert wait_for(self.running, START_SECONDS), self.log()

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(START_SECONDS)
        self.proc = None

    def stop(self) -> None:
        """SIGTERM and wait (SIGKILL only when it does not stop in time)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            assert proc.wait(START_SECONDS) == 0, self.log()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(START_SECONDS)

    def log(self) -> str:
        return self.whole_log()[-4000:]

    def whole_log(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def delivered(self) -> list[str]:
        """The Message-IDs of the mails in the daemon's Maildir outbox."""
        new = self.dir / "var" / "outbox" / "new"
        if not new.is_dir():  # made by the first mail it sends: the other daemon sent all
            return []
        parser = email.parser.BytesHeaderParser(policy=compat32)
        return [
            str(parser.parsebytes(path.read_bytes(), headersonly=True)["Message-ID"])
            for path in sorted(new.iterdir())
        ]


def deliver(daemons: list[Daemon], first: int, sender: str, raw: bytes) -> None:
    """LMTP to `daemons[first]`; on a refusal or a dropped connection the next daemon, as
    Postfix moves to the next address (bounded by DELIVERY_TRIES)."""
    for attempt in range(DELIVERY_TRIES):
        daemon = daemons[(first + attempt) % len(daemons)]
        try:
            with smtplib.LMTP("127.0.0.1", daemon.port, timeout=30) as lmtp:
                lmtp.sendmail(sender, [SERVER], raw)
            return
        except (OSError, smtplib.SMTPException):
            time.sleep(0.05)
    raise AssertionError(f"no daemon took the message from {sender}")


def message(sender: str, subject: str, message_id: str, to: str = SERVER) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Message-ID"] = message_id
    msg.set_content("\n")
    return msg.as_bytes()


def config_for(url: str, data: Path) -> Config:
    return Config(
        data_dir=data,
        database_url=url,
        server_address=SERVER,
        password_cost=4,
        replies_per_address_hour=100000,
    )


def address(userid: str) -> str:
    return f"{userid}@players.example"


def pair(i: int) -> tuple[str, str]:
    """The players of board 101 + i (the first moves first)."""
    return f"p{i % PLAYERS}", f"p{(i + 1 + i // PLAYERS) % PLAYERS}"


def set_up_boards(engine: Engine, config: Config, boards: int) -> None:
    """PLAYERS accounts and `boards` Quarto boards, through the mail commands."""
    clock = SystemClock()
    ids = iter(range(1_000_000))

    def send(userid: str, subject: str, to: str = SERVER) -> None:
        raw = message(address(userid), subject, f"<setup.{next(ids)}@players.example>", to)
        assert process_message(engine, raw, via="cli", clock=clock, config=config) == "done"

    for n in range(PLAYERS):
        send(f"p{n}", f"signup p{n} {PASSWORD}")
        # Confirmed as a player confirms: a reply to the welcome, to its Reply-To.
        with session_for(engine) as session:
            welcome = session.exec(select(OutboxMail).order_by(col(OutboxMail.id).desc())).first()
        assert welcome is not None
        send(
            f"p{n}",
            "Re: welcome",
            str(email.parser.BytesParser().parsebytes(welcome.raw)["Reply-To"]),
        )
    for i in range(boards):
        a, b = pair(i)
        send(a, f"quarto challenge {a} {b}")


def plan(boards: int, rounds: int) -> list[list[str]]:
    """Per board, its moves (legal, seeded), none that ends the game."""
    rng = random.Random(16)
    moves: list[list[str]] = []
    for _ in range(boards):
        state = RULES.new_state()
        texts = []
        for _ply in range(rounds):
            legal = list(RULES.legal_moves(state))
            going_on = [m for m in legal if RULES.outcome(RULES.apply(state, m)) is None]
            move = rng.choice(going_on or legal)
            texts.append(RULES.format_move(state, move))
            state = RULES.apply(state, move)
        moves.append(texts)
    return moves


def mover(i: int, ply: int) -> str:
    """Who plays the `ply`-th move (0-based) of board 101 + i: Quarto alternates."""
    return pair(i)[ply % 2]


def behind(engine: Engine, count: int) -> int:
    """Boards with fewer than `count` moves."""
    with session_for(engine) as session:
        query = select(func.count()).where(BoardRow.game == RULES.name, BoardRow.move_count < count)
        return int(session.exec(query).one())


def unfinished(engine: Engine) -> tuple[int, int]:
    """(inbound messages not done, outbox mails not sent)."""
    with session_for(engine) as session:
        inbound = session.exec(select(func.count()).where(InboundMessage.status != "done")).one()
        outbox = session.exec(select(func.count()).where(OutboxMail.status != "sent")).one()
    return int(inbound), int(outbox)


@contextlib.contextmanager
def daemons_on(url: str, root: Path, n: int, log_level: str = "INFO") -> Iterator[list[Daemon]]:
    """`n` daemons started (side by side) and stopped with SIGTERM at the end."""
    running = [Daemon(root, f"d{k}", url, log_level) for k in range(n)]
    try:
        for daemon in running:
            daemon.spawn()
        for daemon in running:
            assert wait_for(daemon.running, START_SECONDS), daemon.log()
        yield running
    finally:
        for daemon in running:
            daemon.stop()


def test_three_daemons_apply_each_move_once_through_a_sigkill(
    config: Config, tmp_path: Path
) -> None:
    url = config.database_url
    rounds = MOVES // BOARDS
    engine = make_engine(url)
    try:
        set_up_boards(engine, config_for(url, tmp_path), BOARDS)
        moves = plan(BOARDS, rounds)
        with daemons_on(url, tmp_path, DAEMONS) as daemons:
            began = time.monotonic()
            for ply in range(rounds):
                play_round(engine, daemons, moves, ply, kill=ply == rounds // 2)
            settled = wait_for(lambda: unfinished(engine) == (0, 0), SETTLE_SECONDS, 0.2)
            assert settled, unfinished(engine)
            took = time.monotonic() - began
        check_boards(engine, config, moves)
        check_mail(engine, daemons, moves)
        print(f"{MOVES} moves, {len(daemons)} daemons, one SIGKILL: {took:.1f} s")
    finally:
        engine.dispose()


def play_round(
    engine: Engine, daemons: list[Daemon], moves: list[list[str]], ply: int, kill: bool
) -> None:
    """Every board's `ply`-th move, delivered three times at once, by three lanes that
    go over the boards in the same order, each to another daemon: the mail, the same
    mail again, and a second mail with the same move. `kill`: halfway through, the
    second daemon is SIGKILLed and started again."""
    n = len(daemons)
    halfway = threading.Event()
    failures: list[BaseException] = []

    def lane(copy: int) -> None:
        try:
            for i, texts in enumerate(moves):
                who = mover(i, ply)
                subject = f"quarto move {101 + i} {who} {PASSWORD} {texts[ply]}#{ply + 1}"
                again = ".again" if copy == 2 else ""
                raw = message(address(who), subject, f"<m{i}.{ply}{again}@players.example>")
                deliver(daemons, (i + ply + copy) % n, address(who), raw)
                if i == len(moves) // 2:
                    halfway.set()
        except BaseException as exc:  # reported by the round
            failures.append(exc)
            halfway.set()

    lanes = [threading.Thread(target=lane, args=(copy,)) for copy in range(3)]
    for thread in lanes:
        thread.start()
    if kill:
        assert halfway.wait(ROUND_SECONDS)
        daemons[1].kill()  # in the middle of taking and processing mail
        time.sleep(0.5)
        daemons[1].start()
    for thread in lanes:
        thread.join(ROUND_SECONDS)
        assert not thread.is_alive()
    assert failures == []
    assert wait_for(lambda: behind(engine, ply + 1) == 0, ROUND_SECONDS, 0.05), (
        ply,
        behind(engine, ply + 1),
    )


def check_boards(engine: Engine, config: Config, moves: list[list[str]]) -> None:
    """Every board's move list is what was sent, once each, and its position is a
    replay of that list."""
    with session_for(engine) as session:
        ctx = Context(session=session, clock=SystemClock(), config=config, sender="")
        for i, sent in enumerate(moves):
            row = queries.game_by_board(session, RULES.name, str(101 + i))
            assert row is not None
            texts = [m.text for m in queries.moves_of(session, row.saved_id)]
            assert texts == sent, (101 + i, texts, sent)
            assert row.move_count == len(sent)
            assert replay_check(board_from_row(ctx, row), texts)
        session.rollback()


def check_mail(engine: Engine, daemons: list[Daemon], moves: list[list[str]]) -> None:
    """Every message processed once (done), every one answered, every reply delivered
    once but at most KILLS mails twice; the killed daemon shown gone, its work taken."""
    sent = sum(len(m) for m in moves)
    with session_for(engine) as session:
        inbound = list(session.exec(select(InboundMessage)))
        outbox = list(session.exec(select(OutboxMail)))
        known = claims.daemons(session, datetime.now(UTC))
    assert {m.status for m in inbound} == {"done"}
    move_mails = [m for m in inbound if m.message_id.startswith("<m")]
    assert len(move_mails) == 2 * sent  # the mail delivered twice is stored once
    answered = {m.inbound_id for m in outbox}
    assert all(m.id in answered for m in move_mails)
    assert {m.status for m in outbox} == {"sent"}
    copies = Counter(mid for daemon in daemons for mid in daemon.delivered())
    assert set(copies) == {m.message_id for m in outbox}
    extra = sum(n - 1 for n in copies.values())
    assert extra <= KILLS, copies.most_common(3)
    states = Counter(d.state for d in known)
    assert states == {"stopped": DAEMONS, "gone": KILLS}, known
    assert all(d.messages == d.mails == 0 for d in known)


# --- periodic jobs with two daemons ------------------------------------------------------


def test_a_reminder_a_forfeit_and_the_periodic_job_happen_once_with_two_daemons(
    config: Config, tmp_path: Path
) -> None:
    url = config.database_url
    engine = make_engine(url)
    try:
        set_up_boards(engine, config_for(url, tmp_path), 2)
        now = datetime.now(UTC)
        with session_for(engine) as session:
            for board, idle in (("101", timedelta(days=10)), ("102", timedelta(days=30))):
                row = queries.game_by_board(session, RULES.name, board)
                assert row is not None
                row.last_move_at = now - idle  # 101: a reminder due, 102: a forfeit
                session.add(row)
            session.commit()
        first_due = due_time(now, JOB_SECONDS)
        # at DEBUG: a run that did nothing (one in a due time after the first) logs there
        with daemons_on(url, tmp_path, 2, log_level="DEBUG") as daemons:
            assert wait_for(lambda: job_marks(engine) > 0 and unfinished(engine) == (0, 0), 30)
            time.sleep(2)  # the second daemon's first try at the job is over too
            last_due = due_time(datetime.now(UTC), JOB_SECONDS)
        logs = [d.whole_log() for d in daemons]
        runs = sum(text.count("event=job_ran job=correspondence") for text in logs)
        # the run that found them due says what it did, at INFO; a run that did nothing
        # (the privacy job's: nothing due) logs at DEBUG only
        said = "level=info logger=pbm.daemon event=job_ran job=correspondence forfeits=1 nags=1\n"
        assert sum(text.count(said) for text in logs) == 1, logs
        quiet = [line for text in logs for line in text.splitlines() if "job=privacy" in line]
        assert quiet and all(" level=debug " in line for line in quiet), quiet
        # once per due time; a run crossing a due time (every JOB_SECONDS) may see two
        assert runs == (1 if last_due == first_due else 2), [d.log() for d in daemons]
        with session_for(engine) as session:
            nags = session.exec(select(JobMark).where(JobMark.kind == "nag"))
            assert len(list(nags)) == 1
            forfeited = queries.game_by_board(session, RULES.name, "102")
            reminded = queries.game_by_board(session, RULES.name, "101")
            assert forfeited is not None and forfeited.status != "active"
            assert reminded is not None and reminded.status == "active"
            from_jobs = list(
                session.exec(select(OutboxMail).where(col(OutboxMail.inbound_id).is_(None)))
            )
        nag_mails = [m for m in from_jobs if m.subject.startswith("Nag:")]
        assert len(nag_mails) == 1 and json.loads(nag_mails[0].recipients) == [address("p0")]
        ends = [m for m in from_jobs if m not in nag_mails]
        assert ends, "the forfeit mailed nobody"
        # each reader of board 102 mailed once about its end
        readers = Counter(r for m in ends for r in json.loads(m.recipients))
        assert set(readers.values()) == {1}, readers
        copies = Counter(mid for daemon in daemons for mid in daemon.delivered())
        assert {m.message_id for m in from_jobs} <= set(copies)
        assert set(copies.values()) == {1}
    finally:
        engine.dispose()


def job_marks(engine: Engine) -> int:
    with session_for(engine) as session:
        query = select(func.count()).where(JobMark.kind == "periodic")
        return int(session.exec(query).one())
