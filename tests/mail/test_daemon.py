"""`pbm serve` as a process: clean shutdown, `pbm mail status`, `pbm mail send`, pipe intake."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from pbm.cli import app
from pbm.store.models import InboundMessage, OutboxMail

from .conftest import PbmServer, Postbox, wait_until

pytestmark = [pytest.mark.mailstack, pytest.mark.slow]


def test_sigterm_finishes_the_message_in_hand_and_loses_nothing(pbm_server: PbmServer) -> None:
    count = 20
    # All 20 come from bob's address: lift his reply budget (docs/security.md).
    with pbm_server.config_path.open("a", encoding="utf-8") as config:
        config.write("[limits]\nreplies_per_address_hour = 100\n")
    pbm_server.start()
    for n in range(count):
        pbm_server.stack.send("bob", "pbm@example.test", f"signup t{n:02d} secret")
    assert wait_until(lambda: len(pbm_server.rows(OutboxMail)) >= 1)
    assert pbm_server.stop(signal.SIGTERM) == 0
    assert "event=stopped" in pbm_server.log()
    assert pbm_server.status()["state"] == "stopped"
    # nothing half-done: every stored message is either untouched or done
    assert {r.status for r in pbm_server.rows(InboundMessage)} <= {"new", "done"}
    pbm_server.start()
    assert wait_until(
        lambda: [r.status for r in pbm_server.rows(InboundMessage)] == ["done"] * count, 60
    ), pbm_server.log()
    subjects = sorted(r.subject for r in pbm_server.rows(OutboxMail))
    assert subjects == [f"Welcome to the PBeM Server, t{n:02d}" for n in range(count)]


def test_mail_status_and_mail_send(pbm_server: PbmServer) -> None:
    runner = CliRunner()
    config = str(pbm_server.config_path)
    result = runner.invoke(app, ["--config", config, "mail", "status"])
    assert result.exit_code == 3 and "not running" in result.output

    pbm_server.start()
    sent = runner.invoke(
        app,
        ["--config", config, "mail", "send", "--from", "carol@example.test", "signup carol pw"],
    )
    assert sent.exit_code == 0, sent.output
    assert f"127.0.0.1:{pbm_server.smtp_port}" in sent.output
    box = Postbox(pbm_server.stack, "carol")
    assert box.wait_for(lambda m: str(m["Subject"]) == "Welcome to the PBeM Server, carol")
    assert wait_until(lambda: pbm_server.status()["counters"]["sent"] == 1, 10)

    result = runner.invoke(app, ["--config", config, "mail", "status"])
    assert result.exit_code == 0, result.output
    assert "pbm serve: running" in result.output
    assert "imap intake: 127.0.0.1 connected" in result.output
    assert "inbound messages: done 1" in result.output
    assert "outbox messages: sent 1" in result.output

    # the health line (every 2 s in this configuration, every minute by default)
    # (a line written between the mail's arrival and its sending shows it half done)
    def health_lines() -> list[str]:
        return [
            line
            for line in pbm_server.log().splitlines()
            if "event=health received=1 " in line and "processed=1 failed=0 sent=1" in line
        ]

    assert wait_until(lambda: bool(health_lines()), 10), pbm_server.log()
    assert "imap=connected" in health_lines()[0]

    pbm_server.stop()
    result = runner.invoke(app, ["--config", config, "mail", "status"])
    assert result.exit_code == 3 and "not running" in result.output


def pipe(server: PbmServer, raw: bytes, config=None) -> subprocess.CompletedProcess[bytes]:
    """What an MTA's pipe delivery runs: `pbm mail process` with the message on stdin."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pbm",
            "--config",
            str(config or server.config_path),
            "mail",
            "process",
        ],
        input=raw,
        capture_output=True,
        timeout=60,
    )


def test_pipe_intake_reaches_the_same_pipeline(pbm_server: PbmServer) -> None:
    pbm_server.start()
    raw = (
        b"Return-Path: <alice@example.test>\r\nDelivered-To: pbm@example.test\r\n"
        b"From: alice@example.test\r\nTo: pbm@example.test\r\nSubject: signup alice pw\r\n"
        b"Message-ID: <pipe.1@example.test>\r\n\r\n\r\n"
    )
    result = pipe(pbm_server, raw)
    assert result.returncode == 0, result.stderr.decode()
    # the daemon sends what the pipe process queued
    box = Postbox(pbm_server.stack, "alice")
    assert box.wait_for(lambda m: str(m["Subject"]) == "Welcome to the PBeM Server, alice")
    # the same message piped again runs once
    assert pipe(pbm_server, raw).returncode == 0
    assert [r.via for r in pbm_server.rows(InboundMessage)] == ["pipe"]
    assert len(pbm_server.rows(OutboxMail)) == 1


def test_pipe_exits_75_when_the_store_is_unavailable(pbm_server: PbmServer) -> None:
    broken = pbm_server.workdir / "broken.toml"
    not_a_file = pbm_server.workdir / "a-directory"
    not_a_file.mkdir()
    broken.write_text(
        f'[server]\naddress = "pbm@example.test"\ndata_dir = "{pbm_server.workdir}"\n'
        f'[store]\ndatabase_url = "sqlite:///{not_a_file}"\n',
        encoding="utf-8",
    )
    raw = b"From: alice@example.test\r\nSubject: help\r\nMessage-ID: <p75@x>\r\n\r\n\r\n"
    result = pipe(pbm_server, raw, config=broken)
    assert result.returncode == 75, result.stderr.decode()
