"""The HTML parts made in a worker process beside the daemon (pbm.html_parts): the same
mails as made in the daemon's own process, no mail waiting for a worker that starts,
dies or hangs, and the store's unavailability raised as in the daemon. These run on
PostgreSQL too (PBM_TEST_POSTGRES=1): the worker then reads through its own
connection."""

from __future__ import annotations

import errno
import logging
import multiprocessing
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import replace
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlmodel import col, select

from pbm.errors import StoreUnavailable
from pbm.html_parts import InProcess, PictureWorker, Unfinished
from pbm.services.mailing.outbox import recipients_of
from pbm.store.engine import session_for
from pbm.store.models import OutboxMail
from tests.server.conftest import Server, legal_texts

START_SECONDS = 120.0  # a fresh interpreter importing pbm, on a loaded test machine


def queued(server: Server) -> list[Unfinished]:
    """Every queued mail as the sender claims it: its bytes, HTML order and recipients."""
    with session_for(server.engine) as session:
        rows = session.exec(select(OutboxMail).order_by(col(OutboxMail.id))).all()
        return [Unfinished(r.raw, r.html, tuple(recipients_of(r))) for r in rows]


def a_move_queued(server: Server) -> list[Unfinished]:
    """alice and bob play a Quarto board; the board mails of alice's first move (one
    picture, for both) as the sender claims them."""
    alice = server.signup("alice")
    server.signup("bob")
    assert server.send(alice, "quarto challenge alice bob") == "done"
    before = len(queued(server))
    move = legal_texts(server, "quarto")[0]
    assert server.send(alice, f"quarto move 101 alice secret {move}") == "done"
    mails = queued(server)[before:]
    assert len(mails) == 2 and all(m.order for m in mails)
    return mails


def shown(raw: bytes) -> tuple[str, list[bytes]]:
    """A mail's text part and its pictures (the Content-IDs differ from mail to mail)."""
    msg = message_from_bytes(raw, policy=policy.default)
    assert isinstance(msg, EmailMessage) and not msg.defects
    text = msg.get_body(("plain",))
    assert text is not None
    pictures = [p.get_content() for p in msg.walk() if p.get_content_type() == "image/png"]
    return str(text.get_content()), [bytes(p) for p in pictures]


@pytest.fixture
def worker(server: Server) -> Iterator[PictureWorker]:
    made = PictureWorker(server.config, InProcess(server.engine), restart_seconds=0)
    yield made
    made.close()


def test_the_worker_makes_the_mails_the_daemon_would(server: Server, worker: PictureWorker) -> None:
    mails = a_move_queued(server)
    here = InProcess(server.engine).finish(mails)
    assert worker.wait_ready(START_SECONDS)
    there = worker.finish(mails)
    assert worker.answered == 1
    assert [shown(m) for m in there] == [shown(m) for m in here]
    text, pictures = shown(there[0])
    assert len(pictures) == 1 and pictures[0].startswith(b"\x89PNG")
    assert "Quarto" in text
    # A claim with nothing to draw makes no round trip.
    plain = [replace(m, order=None) for m in mails]
    assert worker.finish(plain) == [m.raw for m in plain]
    assert worker.answered == 1


def test_no_mail_waits_for_a_worker_that_starts(server: Server, worker: PictureWorker) -> None:
    mails = a_move_queued(server)
    began = time.monotonic()
    made = worker.finish(mails)  # starts the worker, and makes these here meanwhile
    assert time.monotonic() - began < START_SECONDS
    assert worker.started == 1 and worker.answered == 0 and worker.pid is not None
    assert [len(shown(m)[1]) for m in made] == [1, 1]
    assert worker.wait_ready(START_SECONDS)
    worker.finish(mails)
    assert worker.answered == 1 and worker.started == 1


@pytest.mark.parametrize("fault", [signal.SIGKILL, signal.SIGSTOP])
def test_a_worker_that_dies_or_hangs_is_replaced_and_no_mail_waits_for_it(
    server: Server, caplog: pytest.LogCaptureFixture, fault: signal.Signals
) -> None:
    mails = a_move_queued(server)
    worker = PictureWorker(
        server.config, InProcess(server.engine), answer_seconds=2, restart_seconds=0
    )
    try:
        assert worker.wait_ready(START_SECONDS)
        first = worker.pid
        assert first is not None
        os.kill(first, fault)
        with caplog.at_level(logging.WARNING, logger="pbm.daemon"):
            made = worker.finish(mails)  # made here: the worker is dead, or silent
        assert [len(shown(m)[1]) for m in made] == [1, 1]
        assert worker.answered == 0
        assert "event=pictures_worker_lost" in caplog.text
        with pytest.raises(ProcessLookupError):  # the hung worker was killed, not left
            for _ in range(100):
                os.kill(first, 0)
                time.sleep(0.05)
        # A new worker is started (restart_seconds=0 here: by the next claim at the
        # latest), and answers once ready.
        worker.finish(mails)
        assert worker.started == 2 and worker.pid not in (first, None)
        assert worker.wait_ready(START_SECONDS)
        assert [shown(m) for m in worker.finish(mails)] == [shown(m) for m in made]
        assert worker.answered == 1
    finally:
        worker.close()


def test_a_worker_that_cannot_live_is_not_started_for_every_claim(server: Server) -> None:
    mails = a_move_queued(server)
    worker = PictureWorker(server.config, InProcess(server.engine), restart_seconds=3600)
    try:
        worker.finish(mails)
        first = worker.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        for _ in range(3):
            assert [len(shown(m)[1]) for m in worker.finish(mails)] == [1, 1]
        assert worker.started == 1 and worker.pid is None
    finally:
        worker.close()


@pytest.mark.sqlite  # a database file that only the worker cannot open
def test_a_worker_that_cannot_be_started_leaves_the_drawing_here(
    server: Server, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    mails = a_move_queued(server)
    tries: list[int] = []

    def no_process(_process: object) -> None:
        tries.append(1)
        raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")

    monkeypatch.setattr(multiprocessing.get_context("spawn").Process, "start", no_process)
    worker = PictureWorker(server.config, InProcess(server.engine), restart_seconds=3600)
    with caplog.at_level(logging.WARNING, logger="pbm.daemon"):
        for _ in range(3):
            assert [len(shown(m)[1]) for m in worker.finish(mails)] == [1, 1]
    assert "event=pictures_worker_not_started" in caplog.text
    assert tries == [1] and worker.started == 0 and worker.pid is None  # tried once


def test_the_store_unavailable_to_the_worker_is_raised_as_in_the_daemon(
    server: Server, tmp_path: Path
) -> None:
    mails = a_move_queued(server)
    gone = tmp_path / "elsewhere" / "pbm.sqlite3"
    worker = PictureWorker(
        replace(server.config, database_url=f"sqlite:///{gone}"), InProcess(server.engine)
    )
    try:
        assert worker.wait_ready(START_SECONDS)
        with pytest.raises(StoreUnavailable):
            worker.finish(mails)
        assert worker.answered == 1  # an answer, not a lost worker
    finally:
        worker.close()


def test_closing_a_starting_worker_ends_it_at_once(server: Server) -> None:
    mails = a_move_queued(server)
    worker = PictureWorker(server.config, InProcess(server.engine))
    worker.finish(mails)
    started = worker.pid
    assert started is not None
    began = time.monotonic()
    worker.close()
    assert time.monotonic() - began < 5  # killed, not waited for
    with pytest.raises(ProcessLookupError):
        os.kill(started, 0)
