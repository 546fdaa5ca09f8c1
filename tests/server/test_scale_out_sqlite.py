"""SQLite keeps one daemon per database file (docs/scale-out.md): a second `pbm serve`
on the same file refuses to start and names the first; once the first stops, it may."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from pbm.cli import app
from pbm.config import Config, load_config
from pbm.daemon import Daemon
from pbm.errors import StoreUnavailable
from pbm.store import claims
from pbm.store.engine import session_for
from tests.server.conftest import runner

pytestmark = pytest.mark.sqlite


def stop(daemon: Daemon) -> None:
    daemon.engine.dispose()
    assert daemon.database_file is not None
    daemon.database_file.close()


def test_a_second_daemon_on_one_sqlite_file_refuses_to_start(config: Config) -> None:
    first = Daemon(config)
    first.prepare_store()
    second = Daemon(config)
    try:
        with pytest.raises(StoreUnavailable, match="in use by another pbm serve") as refused:
            second.prepare_store()
        assert f"pid {os.getpid()}" in str(refused.value)
        assert refused.value.kind == "busy"
        first.heartbeat()
        with session_for(first.engine) as session:
            [row] = claims.daemons(session, first.clock.now())
        assert (row.id, row.pid, row.state) == (first.daemon_id, os.getpid(), "running")
    finally:
        stop(first)
    second.prepare_store()  # the first one is gone: the file is free
    try:
        assert second.daemon_id > first.daemon_id
    finally:
        stop(second)


def test_mail_status_lists_the_daemons_and_the_work_they_hold(cfg: Path) -> None:
    daemon = Daemon(load_config(cfg))
    daemon.prepare_store()
    try:
        daemon.heartbeat()
        result = runner.invoke(app, ["mail", "status", "--json"])
        assert result.exit_code == 3, result.output  # no status file: not running here
        [listed] = json.loads(result.output)["daemons"]
        assert (listed["id"], listed["pid"], listed["state"]) == (
            daemon.daemon_id,
            os.getpid(),
            "running",
        )
        assert (listed["holds_messages"], listed["holds_mails"]) == (0, 0)
        text = runner.invoke(app, ["mail", "status"]).output
        assert f"#{daemon.daemon_id} " in text and ": running, last seen" in text
    finally:
        stop(daemon)


def test_a_starting_daemon_takes_its_killed_predecessors_claims_and_keeps_the_order(
    config: Config,
) -> None:
    """A daemon killed after claiming leaves its claims behind; the next one on the file
    takes them at its start, with no lease to wait out, and processes a sender's and a
    board's mail in the order accepted: a later message waits while an earlier one of
    the same sender, or naming the same board, is unprocessed."""
    killed = Daemon(config)
    killed.prepare_store()
    mail = [
        ("alice@example.org", "quarto move 101 alice pw a1", "<a1@x>"),
        ("carol@example.org", "quarto resign 101 carol pw", "<c1@x>"),  # board 101 again
        ("alice@example.org", "help", "<a2@x>"),  # alice again
        ("bob@example.org", "help", "<b1@x>"),  # neither
    ]
    ids = [
        killed.inbox.store_now(
            f"From: {who}\r\nSubject: {subject}\r\nMessage-ID: {mid}\r\n\r\n\r\n".encode(), "smtp"
        )[0]
        for who, subject, mid in mail
    ]
    assert killed.inbox.pending_ids(10) == [ids[0], ids[3]]  # the others wait for the first
    stop(killed)  # as by SIGKILL: no sign-off, the claims stay in the file
    restarted = Daemon(config)
    restarted.prepare_store()
    try:
        assert restarted.inbox.pending_ids(10) == [ids[0], ids[3]]  # at once, no lease
        with session_for(restarted.engine) as session:
            session.connection().exec_driver_sql(
                f"UPDATE inbound_messages SET status = 'done' WHERE id = {ids[0]}"
            )
            session.commit()
        assert restarted.inbox.pending_ids(10) == ids[1:]  # its own claim on ids[3] too
    finally:
        stop(restarted)


def test_a_senders_mail_is_ordered_by_his_mailbox_under_the_operators_rules(
    config: Config,
) -> None:
    """With `[mail] tag_separators = "+-"`, alice-games@ and alice@ are one mailbox (as
    consent and budgets key it): her second message waits for her first, whichever
    spelling each came from; with the default rules they are two senders."""
    for separators, waits in (("+-", True), ("+", False)):
        daemon = Daemon(dataclasses.replace(config, tag_separators=separators))
        daemon.prepare_store()
        try:
            ids = [
                daemon.inbox.store_now(
                    f"From: {who}\r\nSubject: help\r\nMessage-ID: <{separators}{n}@x>\r\n"
                    "\r\n\r\n".encode(),
                    "smtp",
                )[0]
                for n, who in enumerate(["alice-games@example.org", "Alice@example.org"])
            ]
            assert daemon.inbox.pending_ids(10) == (ids[:1] if waits else ids), separators
            with session_for(daemon.engine) as session:
                session.connection().exec_driver_sql(
                    f"UPDATE inbound_messages SET status = 'done' WHERE id IN {tuple(ids)}"
                )
                session.commit()
        finally:
            stop(daemon)
