"""Two real `pbm serve` processes on one PostgreSQL taking their mail from ONE shared
IMAP mailbox on the real Dovecot (docs/scale-out.md): a message fetched by both is
stored once and processed once.

Quarto moves are mailed through Postfix into the server's mailbox. In the first round
both daemons are paused (SIGSTOP) while the mail arrives and woken together (SIGCONT),
so that both find the same unseen messages, fetch them and store them side by side; in
the second round the mail arrives while both run and race on each arrival. Each
daemon writes its replies to its own Maildir.

Every wait is bounded by time (and so by a count of polls); the counts are module
constants."""

from __future__ import annotations

import json
import re
import signal
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from pbm.config import Config
from pbm.store import claims
from pbm.store.engine import make_engine, session_for
from pbm.store.models import InboundMessage, OutboxMail
from tests.mail.conftest import PASSWORD as IMAP_PASSWORD
from tests.mail.conftest import MailStack, mailstack, stack  # noqa: F401 (fixtures)
from tests.pg.test_scale_out_daemons import (
    PASSWORD,
    START_SECONDS,
    Daemon,
    address,
    behind,
    check_boards,
    mover,
    pair,
    plan,
    set_up_boards,
    unfinished,
    wait_for,
)

pytestmark = [pytest.mark.mailstack, pytest.mark.slow]

BOARDS = 30  # one move per board and round: the moves of a round are independent
ROUNDS = 2  # the first with both daemons woken together, the second while they run
DAEMONS = 2
MAILBOX = "pbm"  # the Dovecot user whose INBOX both daemons fetch
SERVER = "pbm@example.test"  # its address, which the players mail
MESSAGE_ID = re.compile(r"<imap(\d+)\.(\d+)@players\.example>")  # board index, ply
ARRIVE_SECONDS = 30.0  # for Postfix to deliver a round into the mailbox
ROUND_SECONDS = 30.0  # for the daemons to apply a round and send every reply


class ImapDaemon(Daemon):
    """A `pbm serve` whose only intake is IMAP on the shared mailbox (no listener); its
    replies go to its own Maildir."""

    def __init__(self, root: Path, name: str, url: str, stack: MailStack) -> None:  # noqa: F811
        super().__init__(root, name, url)
        self.config.write_text(
            f'[server]\naddress = "{SERVER}"\ndata_dir = "{self.dir / "var"}"\n'
            f'[store]\ndatabase_url = "{url}"\n'
            "[security]\npassword_cost = 4\n"
            "[limits]\nreplies_per_address_hour = 100000\n"
            "[mail]\nhealth_seconds = 600\n"
            '[mail.listen]\nsmtp = ""\n'
            f'[mail.imap]\nhost = "{stack.host}"\nport = {stack.imap_port}\n'
            f'user = "{MAILBOX}"\npassword = "{IMAP_PASSWORD}"\nssl = false\n'
            "poll_seconds = 5\nreconnect_min_seconds = 0.2\nreconnect_max_seconds = 2\n",
            encoding="utf-8",
        )

    def status(self) -> dict[str, Any]:
        try:
            found = json.loads((self.dir / "var" / "daemon-status.json").read_text())
        except (OSError, ValueError):
            return {}
        return found if isinstance(found, dict) else {}

    def connected(self) -> bool:
        """Running, and logged in to the mailbox (waiting for mail in IDLE)."""
        return self.running() and bool((self.status().get("imap") or {}).get("connected"))

    def signal(self, sig: signal.Signals) -> None:
        assert self.proc is not None and self.proc.poll() is None, self.log()
        self.proc.send_signal(sig)


def mail_round(stack: MailStack, moves: list[list[str]], ply: int) -> list[str]:  # noqa: F811
    """Every board's `ply`-th move, mailed through Postfix to the shared mailbox;
    returns the Message-IDs."""
    sent = []
    for i, texts in enumerate(moves):
        who = mover(i, ply)
        subject = f"quarto move {101 + i} {who} {PASSWORD} {texts[ply]}#{ply + 1}"
        message_id = f"<imap{i}.{ply}@players.example>"  # read back by MESSAGE_ID
        sent.append(stack.send(address(who), SERVER, subject, "\n", message_id=message_id))
    return sent


def settle(engine: Engine, ply: int) -> bool:
    """Every board has its `ply`+1 moves, every message is done, every mail sent."""
    return behind(engine, ply + 1) == 0 and unfinished(engine) == (0, 0)


def test_two_daemons_on_one_imap_mailbox_store_and_process_each_message_once(
    config: Config,
    stack: MailStack,  # noqa: F811
    tmp_path: Path,
) -> None:
    url = config.database_url
    engine = make_engine(url)
    daemons = [ImapDaemon(tmp_path, f"d{k}", url, stack) for k in range(DAEMONS)]
    try:
        players = Config(
            data_dir=tmp_path,
            database_url=url,
            server_address=SERVER,
            password_cost=4,
            replies_per_address_hour=100000,
        )
        set_up_boards(engine, players, BOARDS)
        moves = plan(BOARDS, ROUNDS)
        for daemon in daemons:
            daemon.spawn()
        for daemon in daemons:
            assert wait_for(daemon.connected, START_SECONDS), daemon.log()

        # Round 1: both paused while the mail arrives, then woken together: each finds
        # every message unseen and fetches it before the other has filed it away.
        for daemon in daemons:
            daemon.signal(signal.SIGSTOP)
        try:
            sent = mail_round(stack, moves, 0)
            arrived = stack.wait_count(MAILBOX, BOARDS, timeout=ARRIVE_SECONDS)
        finally:
            for daemon in daemons:
                daemon.signal(signal.SIGCONT)
        assert arrived == BOARDS
        assert wait_for(lambda: settle(engine, 0), ROUND_SECONDS, 0.1), unfinished(engine)

        # Round 2: the mail arrives while both wait in IDLE, and both wake for it.
        sent += mail_round(stack, moves, 1)
        assert wait_for(lambda: settle(engine, 1), ROUND_SECONDS + ARRIVE_SECONDS, 0.1), (
            behind(engine, 2),
            unfinished(engine),
        )
        assert wait_for(lambda: stack.count(MAILBOX) == 0, ARRIVE_SECONDS)
    finally:
        for daemon in daemons:
            daemon.stop()
        engine.dispose()

    engine = make_engine(url)
    try:
        check_boards(engine, config, moves)
        check_messages(engine, sent)
        check_replies(engine, daemons)
        check_daemons(engine, daemons, len(sent))
    finally:
        engine.dispose()
    assert stack.count(MAILBOX, "Processed") >= len(sent)


def check_messages(engine: Engine, sent: list[str]) -> None:
    """Each mailed message stored once, processed (done), and answered once: one board
    mail to each of the board's two players."""
    with session_for(engine) as session:
        inbound = list(session.exec(select(InboundMessage).where(InboundMessage.via == "imap")))
        outbox = list(session.exec(select(OutboxMail)))
    assert sorted(m.message_id for m in inbound) == sorted(sent)  # once each, nothing else
    assert {m.status for m in inbound} == {"done"}
    readers: dict[int | None, Counter[str]] = {}
    for mail in outbox:
        readers.setdefault(mail.inbound_id, Counter()).update(json.loads(mail.recipients))
    for m in inbound:
        found = MESSAGE_ID.fullmatch(m.message_id)
        assert found is not None, m.message_id
        players = pair(int(found.group(1)))
        assert readers.get(m.id) == Counter({address(p): 1 for p in players}), (
            m.message_id,
            readers.get(m.id),
        )


def check_replies(engine: Engine, daemons: list[ImapDaemon]) -> None:
    """Every queued mail (the set-up's too) sent, and delivered once by one daemon."""
    with session_for(engine) as session:
        outbox = list(session.exec(select(OutboxMail)))
        unsent = session.exec(select(OutboxMail).where(col(OutboxMail.status) != "sent"))
        assert list(unsent) == []
    copies = Counter(mid for daemon in daemons for mid in daemon.delivered())
    assert set(copies) == {m.message_id for m in outbox}
    assert set(copies.values()) == {1}, copies.most_common(3)


def check_daemons(engine: Engine, daemons: list[ImapDaemon], messages: int) -> None:
    """The daemons' own count: every message stored by one of them (`received`); every
    other fetch of it, by the other daemon, found it stored (`duplicates`), and some
    did; both stopped, holding nothing."""
    statuses = [daemon.status() for daemon in daemons]
    assert [s.get("state") for s in statuses] == ["stopped"] * DAEMONS
    received = sum(s["counters"]["received"] for s in statuses)
    duplicates = sum(s["counters"]["duplicates"] for s in statuses)
    fetched = sum(s["imap"]["stored"] for s in statuses)
    assert received == messages, statuses
    assert fetched == received + duplicates, statuses
    # the first round lines both daemons up on the same unseen messages
    assert duplicates > 0, statuses
    # a lost race to file a message away is no failure of the connection
    assert all(s["counters"]["store_errors"] == 0 for s in statuses), statuses
    assert [s["imap"]["reconnects"] for s in statuses] == [0] * DAEMONS, statuses
    with session_for(engine) as session:
        known = claims.daemons(session, datetime.now(UTC))
    assert [d.state for d in known] == ["stopped"] * DAEMONS, known
    assert all(d.messages == d.mails == 0 for d in known)
    print(
        f"{messages} messages, {DAEMONS} daemons on one mailbox: {fetched} fetched, "
        f"{duplicates} by both; received per daemon "
        f"{[s['counters']['received'] for s in statuses]}"
    )
