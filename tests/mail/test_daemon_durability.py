"""The daemon's intake and outbox when things break: 451 (never 250, never 5xx) while the
store cannot take a message, the database file deleted under a running `pbm serve`, a
locked store under IMAP, and an outbox that marks each mail sent right after its own
SMTP transaction, so that SIGKILLs resend at most the mails in flight (one per connection,
one per address).

All failures are real: SQLite's write lock held by another connection, the database
file unlinked, the daemon killed with SIGKILL."""

from __future__ import annotations

import asyncio
import email
import json
import logging
import os
import random
import shutil
import signal
import smtplib
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import aiosmtplib
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session

from pbm.clock import SystemClock
from pbm.config import Config, load_config
from pbm.games import get_game
from pbm.intake import process_message
from pbm.mail.compose import compose
from pbm.mail.lmtp_in import start_listener
from pbm.mail.settings import Endpoint
from pbm.mail.smtp_out import OutboxSender, OutgoingMail, SendOutcome
from pbm.mailstore import DbInbox
from pbm.store.engine import make_engine, session_for
from pbm.store.schema import init_db
from tests.confirmed import confirm_every_address
from tests.outbox_rows import queue_mail

from .conftest import free_ports, wait_until

ROOT = Path(__file__).resolve().parents[2]


def message(n: int, sender: str = "alice@example.org") -> bytes:
    return (
        f"From: {sender}\r\nTo: pbm@example.org\r\nSubject: help\r\n"
        f"Message-ID: <durable.{n}@example.org>\r\n\r\nhello\r\n"
    ).encode()


@contextmanager
def write_lock(path: Path) -> Iterator[None]:
    """Another process's writer: SQLite's write lock, held until the block ends."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def inbound_ids(path: Path) -> list[str]:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        return [r[0] for r in conn.execute("SELECT message_id FROM inbound_messages")]


# --- the listener under a locked store: 451, then 250 ----------------------------------


def test_the_listener_answers_451_while_the_store_is_locked(tmp_path: Path) -> None:
    path = tmp_path / "pbm.sqlite3"
    engine = make_engine(f"sqlite:///{path}", busy_timeout=0.1)  # a held lock fails fast
    init_db(engine)
    inbox = DbInbox(engine, SystemClock(), Config(data_dir=tmp_path))
    (port,) = free_ports(1)

    async def scenario() -> list[int]:
        async def store(raw: bytes) -> object:
            return await inbox.store(raw, "smtp")

        server = await start_listener(
            Endpoint("127.0.0.1", port), store, lmtp=False, max_bytes=100_000
        )
        codes = []
        try:
            for n, locked in enumerate((True, True, False)):
                client = aiosmtplib.SMTP(hostname="127.0.0.1", port=port, timeout=10)
                await client.connect()
                try:
                    with write_lock(path) if locked else _nothing():
                        await client.sendmail("alice@example.org", ["pbm@x"], message(n))
                    codes.append(250)
                except aiosmtplib.SMTPDataError as exc:
                    codes.append(exc.code)
                    assert exc.message.startswith("4.3.0")
                finally:
                    await client.quit()
        finally:
            server.close()
            await server.wait_closed()
        return codes

    assert asyncio.run(scenario()) == [451, 451, 250]
    assert inbound_ids(path) == ["<durable.2@example.org>"]
    engine.dispose()


@contextmanager
def _nothing() -> Iterator[None]:
    yield


# --- the database file deleted under a running `pbm serve` -----------------------------


class Serve:
    """`python -m pbm serve` on the embedded defaults (SMTP intake, Maildir outbox)."""

    def __init__(self, workdir: Path, extra: str = "") -> None:
        self.workdir = workdir
        (self.port,) = free_ports(1)
        self.config = workdir / "pbm.toml"
        self.config.write_text(
            f'[server]\naddress = "pbm@example.org"\ndata_dir = "{workdir / "var"}"\n'
            f'[mail]\nhealth_seconds = 600\n[mail.listen]\nsmtp = "127.0.0.1:{self.port}"\n'
            f"{extra}",
            encoding="utf-8",
        )
        self.database = workdir / "var" / "pbm.sqlite3"
        self.log_path = workdir / "serve.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "pbm", "--config", str(self.config), "serve"],
                cwd=self.workdir,
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
            )
        assert wait_until(
            lambda: (
                self.status().get("pid") == self.proc.pid  # type: ignore[union-attr]
                and self.status().get("state") == "running"
            ),
            30,
        ), self.log()

    def status(self) -> dict:
        try:
            return json.loads((self.workdir / "var" / "daemon-status.json").read_text())
        except (OSError, ValueError):
            return {}

    def stop(self, sig: int = signal.SIGTERM) -> int | None:
        if self.proc is None:
            return None
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(60)
        finally:
            self.proc = None

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def send(self, raw: bytes) -> int:
        """The SMTP answer to DATA: 250, or the code of the refusal."""
        with smtplib.SMTP("127.0.0.1", self.port, timeout=30) as smtp:
            try:
                smtp.sendmail("alice@example.org", ["pbm@example.org"], raw)
            except smtplib.SMTPDataError as exc:
                return exc.smtp_code
        return 250

    def replies(self) -> list[str]:
        new = self.workdir / "var" / "outbox" / "new"
        found = []
        for path in sorted(new.glob("*")) if new.exists() else []:
            found.append(str(email.message_from_bytes(path.read_bytes())["In-Reply-To"]))
        return found


@pytest.fixture
def serve() -> Iterator[Serve]:
    workdir = Path(tempfile.mkdtemp(prefix="pbm-durable-", dir="/tmp"))
    running = Serve(workdir)
    try:
        yield running
    finally:
        if running.proc is not None:
            running.proc.kill()
            running.proc.wait(30)
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.mark.slow
def test_a_database_deleted_under_the_daemon_gets_451_until_it_is_back(serve: Serve) -> None:
    serve.start()
    assert serve.send(message(1)) == 250
    assert wait_until(lambda: serve.replies() == ["<durable.1@example.org>"], 20), serve.log()
    saved = serve.workdir / "backup.sqlite3"
    done = subprocess.run(
        [sys.executable, "-m", "pbm", "--config", str(serve.config), "db", "backup", str(saved)],
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr.decode()

    serve.database.unlink()
    assert [serve.send(message(n)) for n in range(2, 8)] == [451] * 6
    assert not serve.database.exists()  # never created afresh
    errors = [line for line in serve.log().splitlines() if "level=error" in line]
    assert len(errors) == 1 and "event=database_file_missing" in errors[0], serve.log()
    assert wait_until(lambda: serve.status().get("store_problem") == "missing", 5)
    status = subprocess.run(
        [sys.executable, "-m", "pbm", "--config", str(serve.config), "mail", "status"],
        capture_output=True,
    )
    assert status.returncode == 0
    assert "store: the database file is missing; mail waits" in status.stdout.decode()
    assert not serve.database.exists()  # looking made nothing

    os.replace(saved, serve.database)  # the backup is back
    assert serve.send(message(8)) == 250
    assert wait_until(lambda: len(serve.replies()) == 2, 20), serve.log()
    assert serve.replies()[1] == "<durable.8@example.org>"
    assert inbound_ids(serve.database) == ["<durable.1@example.org>", "<durable.8@example.org>"]
    assert serve.stop() == 0
    assert len([line for line in serve.log().splitlines() if "level=error" in line]) == 1
    # Lost while stopped: a restart makes no new empty database, it names `pbm db init`.
    serve.database.unlink()
    restarted = subprocess.run(
        [sys.executable, "-m", "pbm", "--config", str(serve.config), "serve"],
        capture_output=True,
        timeout=120,
    )
    assert restarted.returncode == 69
    assert "does not exist: create it with `pbm db init`" in restarted.stderr.decode()
    assert not serve.database.exists()


# --- the outbox: each mail marked sent right after its own SMTP transaction -------------


class Sink:
    """An SMTP server that records every Message-ID it accepts, slowly (so that a kill
    lands between mails)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.received: list[str] = []
        self.at_once = self.most_at_once = 0  # DATA commands being answered
        self._lock = threading.Lock()
        (self.port,) = free_ports(1)
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port)

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        mid = str(email.message_from_bytes(raw)["Message-ID"])
        with self._lock:
            self.at_once += 1
            self.most_at_once = max(self.most_at_once, self.at_once)
        await asyncio.sleep(self.delay)
        with self._lock:
            self.at_once -= 1
            self.received.append(mid)
        return "250 2.0.0 OK"

    def count(self) -> int:
        with self._lock:
            return len(self.received)

    def holds(self, n: int) -> bool:
        """Whether at least `n` mails have arrived."""
        return self.count() >= n


def queue(database: Path, count: int, addresses: Sequence[str] = ("bob@example.org",)) -> list[str]:
    engine = make_engine(f"sqlite:///{database}")
    init_db(engine)
    now = datetime.now(UTC)
    ids = [f"<out.{n}@example.org>" for n in range(count)]
    with session_for(engine) as session:
        for n, mid in enumerate(ids):
            to = addresses[n % len(addresses)]
            raw = compose(
                sender="pbm@example.org",
                to=[to],
                subject="Board 101",
                body="your move\n",
                message_id=mid,
                date=now,
            )
            queue_mail(
                session,
                now=now,
                envelope_from="pbm@example.org",
                recipients=[to],
                subject="Board 101",
                body="your move\n",
                raw=raw,
                message_id=mid,
            )
        session.commit()
    engine.dispose()
    return ids


@pytest.mark.slow
@pytest.mark.parametrize(
    ("addresses", "connections"),
    [
        # one address: its mails go one at a time whatever the connections (4 here)
        (("bob@example.org",), 4),
        # three addresses on three connections: up to three mails in flight
        (("bob@example.org", "carol@example.org", "dave@example.org"), 3),
    ],
)
def test_sigkills_of_the_sender_resend_at_most_the_mails_in_flight(
    addresses: tuple[str, ...], connections: int
) -> None:
    sink = Sink(delay=0.03)
    sink.controller.start()
    workdir = Path(tempfile.mkdtemp(prefix="pbm-outbox-", dir="/tmp"))
    relay = (
        f'[mail.relay]\nhost = "127.0.0.1"\nport = {sink.port}\nstarttls = false\n'
        f"rate = 0\nretry_base_seconds = 1\nconnections = {connections}\n"
    )
    in_flight = min(len(addresses), connections)
    daemon = Serve(workdir, relay)
    try:
        ids = queue(daemon.database, 60, addresses)
        kills = 0
        most_at_once = []  # by the first daemon (a killed one's sessions outlive it)
        for _ in range(3):
            before = sink.count()
            daemon.start()
            assert wait_until(partial(sink.holds, before + 8), 30), daemon.log()
            most_at_once.append(sink.most_at_once)
            assert daemon.stop(signal.SIGKILL) == -signal.SIGKILL
            kills += 1
        daemon.start()
        assert wait_until(lambda: set(sink.received) == set(ids), 60), daemon.log()
        assert wait_until(lambda: _unsent(daemon.database) == 0, 10)
        assert daemon.stop() == 0
        duplicates = len(sink.received) - len(set(sink.received))
        assert duplicates <= in_flight * kills, sorted(sink.received)
        assert most_at_once[0] == in_flight
    finally:
        if daemon.proc is not None:
            daemon.proc.kill()
            daemon.proc.wait(30)
        sink.controller.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _unsent(database: Path) -> int:
    with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as conn:
        return conn.execute("SELECT count(*) FROM outbox WHERE status != 'sent'").fetchone()[0]


class Journal:
    """A transport and a queue that write what happens, in order, to one list; with
    more than one lane a send takes a few turns of the event loop, so lanes overlap."""

    def __init__(self, mails: Sequence[OutgoingMail], lanes: int = 1) -> None:
        self.mails = list(mails)
        self.events: list[str] = []
        self.lanes = lanes

    async def due(self, limit: int, held: frozenset[int] = frozenset()) -> list[OutgoingMail]:
        due, self.mails = self.mails[:limit], self.mails[limit:]
        return due

    async def record(self, outcomes: Sequence[SendOutcome]) -> None:
        self.events.extend(f"record {o.mail_id} {o.kind}" for o in outcomes)

    async def send(self, mail: OutgoingMail) -> dict[str, str]:
        self.events.append(f"send {mail.id}")
        if self.lanes > 1:
            for _ in range(3):
                await asyncio.sleep(0)
            self.events.append(f"sent {mail.id}")
        return {}

    async def close(self) -> None:
        pass


def test_each_mail_is_recorded_before_the_next_one_goes_out() -> None:
    mails = [OutgoingMail(n, "pbm@x", ("bob@x",), b"raw", 0) for n in (1, 2, 3)]
    journal = Journal(mails)
    sender = OutboxSender(journal, journal, batch=2)
    assert asyncio.run(sender.drain()) == 3
    assert journal.events == [
        "send 1",
        "record 1 sent",
        "send 2",
        "record 2 sent",
        "send 3",
        "record 3 sent",
    ]


def test_lanes_overlap_but_mails_to_one_address_go_in_queue_order() -> None:
    """Three lanes: mails to different addresses are in flight at once; a mail to an
    address waits until the earlier mail to it was sent and recorded, also behind a
    mail to two addresses that waits itself; no mail goes twice or is left."""
    to = {1: ("alice@x",), 2: ("bob@x",), 3: ("alice@x",), 4: ("carol@x", "bob@x")}
    to |= {5: ("bob@x",), 6: ("dave@x",), 7: ("erin@x",)}
    mails = [OutgoingMail(n, "pbm@x", to[n], b"raw", 0) for n in sorted(to)]
    journal = Journal(mails, lanes=3)
    assert asyncio.run(OutboxSender(journal, journal, batch=7).drain()) == 7
    events = journal.events
    at = events.index
    assert sorted(e for e in events if e.startswith("send ")) == [f"send {n}" for n in to]
    assert at("send 2") < at("sent 1")  # alice's and bob's first mails at once
    assert at("send 3") > at("record 1 sent")  # alice's second after her first
    assert at("send 4") > at("record 2 sent")  # bob's first before carol-and-bob's
    assert at("send 5") > at("record 4 sent")  # bob's third waits behind that one
    assert at("send 6") < at("send 5")  # dave's mail did not wait for bob's
    in_flight = most = 0
    for event in events:
        in_flight += event.startswith("send ") - event.startswith("record ")
        most = max(most, in_flight)
    assert most == 3


class SlowFirst(Journal):
    """A relay that holds the first mail until every other mail was recorded."""

    def __init__(self, mails: Sequence[OutgoingMail], lanes: int) -> None:
        super().__init__(mails, lanes)
        self.others_done = asyncio.Event()
        self.others = len(mails) - 1

    async def send(self, mail: OutgoingMail) -> dict[str, str]:
        if mail.id == 1:
            await self.others_done.wait()
        return await super().send(mail)

    async def record(self, outcomes: Sequence[SendOutcome]) -> None:
        await super().record(outcomes)
        if sum(e.startswith("record") for e in self.events) == self.others:
            self.others_done.set()


def test_a_slow_mail_holds_back_no_other_lane() -> None:
    """While one connection waits for a slow answer, the others go on through the next
    claims, not only the mails claimed with the slow one."""
    mails = [OutgoingMail(n, "pbm@x", (f"p{n}@x",), b"raw", 0) for n in range(1, 8)]
    journal = SlowFirst(mails, lanes=2)

    async def scenario() -> int:
        return await asyncio.wait_for(OutboxSender(journal, journal, batch=2).drain(), 5)

    assert asyncio.run(scenario()) == 7
    assert journal.events[-2:] == ["sent 1", "record 1 sent"]


# --- IMAP under a locked store: the message stays unseen -------------------------------


@pytest.mark.mailstack
def test_imap_leaves_the_message_unseen_while_the_store_is_locked(
    stack, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from pbm.mail.imap_in import ImapIntake

    from .test_imap_in import run_until, settings

    path = tmp_path / "pbm.sqlite3"
    engine = make_engine(f"sqlite:///{path}", busy_timeout=0.1)  # a held lock fails fast
    init_db(engine)
    inbox = DbInbox(engine, SystemClock(), Config(data_dir=tmp_path))
    stack.send("carol", "pbm@example.test", "signup carol pw")
    assert stack.wait_count("pbm", 1) == 1

    async def store(raw: bytes) -> object:
        return await inbox.store(raw, "imap")

    async def store_many(raws: list[bytes]) -> object:
        return await inbox.store_many(raws, "imap")

    async def scenario(done: object) -> ImapIntake:
        stop = asyncio.Event()
        intake = ImapIntake(settings(stack), store, stop=stop, store_many=store_many)
        await run_until(intake, stop, done)  # type: ignore[arg-type]
        return intake

    caplog.set_level(logging.WARNING)
    with write_lock(path):
        locked = asyncio.run(scenario(lambda: "imap_store_failed" in caplog.text))
    assert "database is locked" in (locked.state.last_error or "")
    assert locked.state.stored == 0 and inbound_ids(path) == []
    assert stack.count("pbm", "INBOX") == 1  # still there, still unseen
    client = stack.imap("pbm")
    try:
        client.select("INBOX", readonly=True)
        assert client.search(None, "UNSEEN")[1][0].split() != []
    finally:
        client.logout()

    released = asyncio.run(scenario(lambda: bool(inbound_ids(path))))
    assert released.state.stored == 1 and len(inbound_ids(path)) == 1
    assert stack.count("pbm", "INBOX") == 0
    engine.dispose()


def test_a_daemon_that_cannot_use_its_database_says_so_in_one_line(serve: Serve) -> None:
    serve.database.parent.mkdir(parents=True)
    serve.database.write_bytes(b"not a database " * 500)
    cli = subprocess.run(
        [sys.executable, "-m", "pbm", "--config", str(serve.config), "serve"],
        capture_output=True,
        timeout=60,
    )
    assert cli.returncode == 69
    assert cli.stderr.decode() == (
        "error: the database cannot be used (unavailable): file is not a database\n"
    )


# --- SIGKILLs under a stream of two-step sequences: each applied in order ---------------

SEQUENCE_BOARDS = 60  # at most; half move-then-resign, half submit-then-confirm
SEQUENCE_KILLS = 3
SEQUENCE_PAUSE = 0.1  # seconds between two sequences, so that the stream spans the kills
QUARTO = get_game("quarto")


def first_move() -> str:
    state = QUARTO.new_state()
    return QUARTO.format_move(state, next(iter(QUARTO.legal_moves(state))))


def seq_mail(sender: str, subject: str, message_id: str) -> bytes:
    return (
        f"From: {sender}\r\nTo: pbm@example.org\r\nSubject: {subject}\r\n"
        f"Message-ID: {message_id}\r\n\r\n\r\n"
    ).encode()


def set_up_sequence_boards(serve: Serve) -> None:
    """Two players per board and their Quarto board, through the mail commands, before
    the daemon starts (their addresses confirmed as the operator's `pbm user confirm`
    does, so the challenges are accepted)."""
    config = load_config(serve.config)
    engine = make_engine(config.database_url)
    init_db(engine)
    clock = SystemClock()
    try:
        for i in range(SEQUENCE_BOARDS):
            a, b = f"s{i}a", f"s{i}b"
            for n, subject in enumerate((f"signup {a} pw", f"signup {b} pw")):
                raw = seq_mail(f"{(a, b)[n]}@example.org", subject, f"<up.{i}.{n}@x.org>")
                assert process_message(engine, raw, via="cli", clock=clock, config=config) == "done"
        confirm_every_address(engine, config)
        for i in range(SEQUENCE_BOARDS):
            a, b = f"s{i}a", f"s{i}b"
            raw = seq_mail(f"{a}@example.org", f"quarto challenge {a} {b}", f"<ch.{i}@x.org>")
            assert process_message(engine, raw, via="cli", clock=clock, config=config) == "done"
    finally:
        engine.dispose()


def send_until_accepted(serve: Serve, raw: bytes, seconds: float = 30) -> None:
    """As an MTA: the same mail again while the daemon is down or answers 4xx."""
    assert wait_until(lambda: _accepted(serve, raw), seconds)


def _accepted(serve: Serve, raw: bytes) -> bool:
    try:
        return serve.send(raw) == 250
    except (OSError, smtplib.SMTPException):
        return False


@pytest.mark.slow
def test_sigkills_under_two_step_sequences_apply_every_sequence_in_order(
    tmp_path: Path,
) -> None:
    serve = Serve(tmp_path, "[security]\npassword_cost = 4\n")
    set_up_sequence_boards(serve)
    move = first_move()
    serve.start()
    sent, killed = threading.Event(), threading.Event()
    failures: list[BaseException] = []
    used: list[int] = []

    def players() -> None:
        """Each board's two mails back to back: the second right after the 250 of the
        first, with no wait for it to be processed; until the kills are over."""
        try:
            for i in range(SEQUENCE_BOARDS):
                if killed.is_set():
                    break
                used.append(i)
                time.sleep(SEQUENCE_PAUSE)
                a, board = f"s{i}a", str(101 + i)
                if i % 2:
                    steps = [
                        f"quarto submit {board} {a} pw {move}",
                        f"quarto confirm {board} {a} pw",
                    ]
                else:
                    steps = [f"quarto move {board} {a} pw {move}", f"quarto resign {board} {a} pw"]
                for n, subject in enumerate(steps):
                    send_until_accepted(
                        serve, seq_mail(f"{a}@example.org", subject, f"<q.{i}.{n}@x.org>")
                    )
        except BaseException as exc:  # reported below
            failures.append(exc)
        finally:
            sent.set()

    thread = threading.Thread(target=players)
    thread.start()
    rng = random.Random(21)
    kills = 0
    try:
        while kills < SEQUENCE_KILLS and not sent.is_set():
            time.sleep(rng.uniform(0.3, 1.0))
            assert serve.stop(signal.SIGKILL) == -signal.SIGKILL
            kills += 1
            serve.start()
        time.sleep(0.5)  # a few sequences more after the last start
        killed.set()
        thread.join(60)
        assert not thread.is_alive() and failures == []
        assert kills == SEQUENCE_KILLS, "the mail was all sent before the kills"
        assert wait_until(lambda: _waiting(serve.database) == 0, 20), serve.log()
    finally:
        serve.stop()
    with closing(sqlite3.connect(f"file:{serve.database}?mode=ro", uri=True)) as db:
        statuses = dict(db.execute("SELECT status, count(*) FROM inbound_messages GROUP BY 1"))
        assert statuses == {"done": 3 * SEQUENCE_BOARDS + 2 * len(used)}
        for i in used:
            game_id, status, count = db.execute(
                "SELECT id, status, move_count FROM games WHERE board = ?", (str(101 + i),)
            ).fetchone()
            moves = [
                t for (t,) in db.execute("SELECT text FROM moves WHERE game_id = ?", (game_id,))
            ]
            assert moves == [move] and count == 1, (101 + i, moves)
            # move then resign: the game ended by the resignation after the move (a
            # resignation first would have left no move); submit then confirm: the
            # submitted move played, nothing left submitted
            assert (status == "active") == bool(i % 2), (101 + i, status)
            submitted = db.execute(
                "SELECT submitted_move FROM game_players WHERE game_id = ?", (game_id,)
            )
            assert [s for (s,) in submitted if s is not None] == []


def _waiting(database: Path) -> int:
    with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
        return int(
            db.execute("SELECT count(*) FROM inbound_messages WHERE status = 'new'").fetchone()[0]
        )
