"""The text of old mail forgotten ([privacy] mail_text_days, docs/privacy.md): past the
days, a processed message's source and a sent reply's text are blanked and their rows
kept; what is still to do keeps its text, a mail delivered again is still not run
twice, the games are whole, and an erasure still finds the forgotten replies."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from sqlmodel import col, select

from pbm.app import PERIODIC_JOBS
from pbm.privacy_jobs import run_mail_text
from pbm.services.accounts.erasure import erase_user
from pbm.services.accounts.users import find_user
from pbm.services.context import Context
from pbm.services.mailing import retention
from pbm.services.mailing.outbox import mark_sent
from pbm.store.engine import session_for
from pbm.store.models import (
    InboundKey,
    InboundMessage,
    MessageStatus,
    OutboxMail,
    OutboxStatus,
)
from tests.server.conftest import START, Server, board_row, legal_texts

DAYS = timedelta(days=1)
MOVE_ID = "<move-1@players.example>"
START_DAY = f"{START:%Y-%m-%d}"


def _send_everything(server: Server) -> None:
    """Every queued reply marked sent, as the daemon's sender does once Postfix took it."""
    with session_for(server.engine) as session:
        queued = select(OutboxMail.id).where(OutboxMail.status == OutboxStatus.QUEUED)
        mark_sent(session, [i for i in session.exec(queued) if i is not None], server.clock.now())
        session.commit()


def _texts(server: Server) -> tuple[list[bytes], list[tuple[str, bytes, str | None]]]:
    with session_for(server.engine) as session:
        messages = select(InboundMessage).order_by(col(InboundMessage.id))
        inbound = [m.raw for m in session.exec(messages)]
        outbox = [
            (m.body, m.raw, m.html)
            for m in session.exec(select(OutboxMail).order_by(col(OutboxMail.id)))
        ]
    return inbound, outbox


def _a_game(server: Server) -> tuple[str, str]:
    alice, bob = server.signup("alice"), server.signup("bob")
    assert server.send(alice, "quarto challenge alice bob") == "done"
    move = legal_texts(server, "quarto")[0]
    command = f"quarto move 101 alice secret {move}"
    assert server.send(alice, command, message_id=MOVE_ID) == "done"
    server.new_mail()
    return alice, bob


def test_old_text_is_forgotten_and_the_rows_stay(server: Server) -> None:
    alice, bob = _a_game(server)
    _send_everything(server)
    kept_rows = _texts(server)
    server.clock.advance(89 * DAYS)
    assert run_mail_text(server.engine, server.clock, server.config) == {"mail_texts_forgotten": 0}
    assert _texts(server) == kept_rows  # 89 days: nothing yet

    # Work still to do when the days run out keeps its text: a reply not sent yet, and
    # a message whose processing failed (for `pbm mail retry`).
    server.send(bob, "quarto show 101")
    with session_for(server.engine) as session:
        failed = InboundMessage(
            message_id="<failed@players.example>",
            received_at=server.clock.now(),
            via="cli",
            raw=b"From: bob@players.example\r\n\r\nquarto move 101 bob secret x\r\n",
            status=MessageStatus.FAILED,
            processed_at=server.clock.now(),
        )
        session.add(failed)
        session.commit()
    server.clock.advance(2 * DAYS)
    done = run_mail_text(server.engine, server.clock, server.config)
    inbound, outbox = _texts(server)
    old_inbound, old_outbox = len(kept_rows[0]), len(kept_rows[1])
    assert done == {"mail_texts_forgotten": old_inbound + old_outbox}
    assert inbound[:old_inbound] == [b""] * old_inbound
    assert outbox[:old_outbox] == [("", b"", None)] * old_outbox
    # The show processed 2 days ago, its queued answer, and the failed message keep theirs.
    assert all(inbound[old_inbound:]) and len(inbound) == old_inbound + 2
    assert [raw != b"" and body != "" for body, raw, _ in outbox[old_outbox:]] == [True]
    with session_for(server.engine) as session:
        keys = session.exec(select(InboundKey.inbound_id)).all()
        rows = session.exec(select(InboundMessage.id).order_by(col(InboundMessage.id))).all()
        assert set(keys) <= set(rows[old_inbound:])  # the forgotten ones' order keys went
        assert len(session.exec(select(OutboxMail)).all()) == old_outbox + 1  # rows stay

    # A forgotten move mailed again (same Message-ID) is known: not played twice.
    before = board_row(server, "quarto").move_count
    server.new_mail()
    server.send(alice, "quarto move 101 alice secret c3 TLRH", message_id=MOVE_ID)
    assert board_row(server, "quarto").move_count == before
    assert server.new_mail() == []
    # The game's record comes from its own rows: every move, as played.
    assert server.send(bob, "quarto record 101") == "done"
    [record] = server.new_mail()
    assert f"1 alice {START_DAY}" in record.body and "\nEnd" in record.body


def test_none_is_forgotten_with_no_days(server: Server) -> None:
    _a_game(server)
    _send_everything(server)
    server.config = replace(server.config, mail_text_days=0)
    kept = _texts(server)
    server.clock.advance(3650 * DAYS)
    assert run_mail_text(server.engine, server.clock, server.config) == {"mail_texts_forgotten": 0}
    assert _texts(server) == kept


def test_a_long_backlog_is_forgotten_in_batches(server: Server) -> None:
    alice = server.signup("alice")
    for _ in range(7):
        server.send(alice, "help quarto")
    _send_everything(server)
    server.clock.advance(91 * DAYS)
    batch, retention.BATCH = retention.BATCH, 2
    try:
        forgotten = run_mail_text(server.engine, server.clock, server.config)
    finally:
        retention.BATCH = batch
    inbound, outbox = _texts(server)
    assert forgotten == {"mail_texts_forgotten": len(inbound) + len(outbox)}
    assert set(inbound) == {b""} and {raw for _, raw, _ in outbox} == {b""}


def test_an_erasure_finds_the_replies_whose_text_was_forgotten(server: Server) -> None:
    alice, _ = _a_game(server)
    _send_everything(server)
    server.clock.advance(91 * DAYS)
    run_mail_text(server.engine, server.clock, server.config)
    with session_for(server.engine) as session:
        to_alice = [m for m in session.exec(select(OutboxMail)) if alice in m.recipients]
        assert to_alice and all(m.raw == b"" for m in to_alice)
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        user = find_user(ctx, "alice")
        assert user is not None
        erase_user(ctx, user)
        session.commit()
        left = [m.recipients for m in session.exec(select(OutboxMail))]
    assert left and not [r for r in left if alice in r]


def test_the_daemon_and_cron_run_it_every_hour() -> None:
    [job] = [j for j in PERIODIC_JOBS if j.run is run_mail_text]
    assert job.every_seconds == 3600
