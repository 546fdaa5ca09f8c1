"""The web runner inside `pbm serve` (issue 25): a real daemon with `[web] listen`
serves the pages over HTTP on loopback from a child process at a lower priority, its
/metrics on their own port, and the confirmation link of a mail it sent (written to its
Maildir outbox) confirms the address with a POST, whose answer the daemon's sender then
mails at once. The child is restarted when it dies, and stops with the daemon, even
with one killed outright."""

from __future__ import annotations

import os
import re
import signal
import smtplib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import httpx
import pytest

from tests.mail.conftest import free_ports
from tests.web.serving import Serving, alive, mails_to, serving_daemon, waited


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[Serving]:
    with serving_daemon(tmp_path) as running:
        yield running


def test_the_daemon_serves_pages_metrics_and_a_confirmation_link(serving: Serving) -> None:
    base, metrics, smtp, outbox = serving.base, serving.metrics, serving.smtp, serving.outbox
    front = httpx.get(f"{base}/", timeout=5)
    assert front.status_code == 200 and "How to play" in front.text
    assert "default-src 'none'" in front.headers["content-security-policy"]
    assert httpx.get(f"{base}/metrics", timeout=5).status_code == 404  # not on the pages
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = (
        "carol@players.example",
        "pbm@example.org",
        "signup carol secret",
    )
    msg.set_content("\n")
    with smtplib.SMTP("127.0.0.1", smtp, timeout=10) as client:
        client.send_message(msg)
    request = waited(
        lambda: next(reversed(mails_to(outbox, "carol")), None), "confirmation request"
    )
    body = request
    path = re.search(rf"{re.escape(base)}(/confirm/\w+)", body)
    assert path, body
    shown = httpx.get(base + path.group(1), timeout=5)
    assert shown.status_code == 200 and "Confirm my address" in shown.text
    done = httpx.post(base + path.group(1), timeout=10)
    assert done.status_code == 200 and "confirmed for carol" in done.text
    answer = waited(lambda: mails_to(outbox, "carol")[1:] or None, "confirmation answer")
    assert "is confirmed for carol" in answer[-1]
    text = httpx.get(f"{metrics}/metrics", timeout=10).text
    assert "pbm_daemons_alive 1.0" in text
    assert 'pbm_messages_received_total{via="smtp"} 1.0' in text
    assert httpx.get(f"{metrics}/healthz", timeout=5).text == "ok\n"
    # one line for the pages' start (event=web_started), not uvicorn's per server, twice
    log = serving.log.read_text()
    assert log.count("event=web_started") == 1 and "logger=uvicorn" not in log, log


def test_the_pages_run_in_a_child_at_a_lower_priority_restarted_when_it_dies(
    serving: Serving,
) -> None:
    (child,) = serving.web_children()
    assert child != serving.daemon.pid and alive(child)
    daemon_nice = os.getpriority(os.PRIO_PROCESS, serving.daemon.pid)
    assert daemon_nice == os.getpriority(os.PRIO_PROCESS, 0)  # mail keeps its priority
    assert os.getpriority(os.PRIO_PROCESS, child) == min(daemon_nice + 10, 19)  # [web] nice
    os.kill(child, signal.SIGKILL)
    again = waited(lambda: serving.web_children()[1:] or None, "a new pages process")
    assert again[0] != child and not alive(child)
    waited(serving.page_up, "web page after the restart")
    assert "event=web_died" in serving.log.read_text()
    serving.daemon.send_signal(signal.SIGTERM)
    assert serving.daemon.wait(60) == 0
    assert not alive(again[0])  # stopped with the daemon


def test_the_pages_stop_when_the_daemon_is_killed(serving: Serving) -> None:
    (child,) = serving.web_children()
    serving.daemon.kill()
    serving.daemon.wait(10)
    waited(lambda: None if alive(child) else True, "the pages' process to end")
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{serving.base}/robots.txt", timeout=2)


def test_a_web_port_in_use_turns_the_pages_off_once_and_mail_goes_on(tmp_path: Path) -> None:
    # The child logged web_started, then died on the taken port and was restarted in a loop.
    smtp, metrics = free_ports(2)
    config = tmp_path / "pbm.toml"
    config.write_text(
        f'[server]\naddress = "pbm@example.org"\ndata_dir = "{tmp_path / "var"}"\n'
        f'[mail.listen]\nsmtp = "127.0.0.1:{smtp}"\n'
        f'[web]\nmetrics_listen = "127.0.0.1:{metrics}"\n',
        encoding="utf-8",
    )
    log_path = tmp_path / "serve.log"
    with socket.socket() as taken, log_path.open("wb") as log:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        serve = ["serve", "--web", f"127.0.0.1:{port}"]
        daemon = subprocess.Popen(
            [sys.executable, "-m", "pbm", "--config", str(config), *serve],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
        )
        try:
            waited(lambda: "event=web_off" in log_path.read_text() or None, "web_off")
            msg = EmailMessage()
            msg["From"], msg["To"], msg["Subject"] = "dan@x.example", "pbm@example.org", "help"
            msg.set_content("\n")
            with smtplib.SMTP("127.0.0.1", smtp, timeout=10) as client:
                client.send_message(msg)
            waited(lambda: mails_to(tmp_path / "var" / "outbox", "dan") or None, "an answer")
            time.sleep(2)  # the first restart came after 1 s
            assert daemon.poll() is None
            text = log_path.read_text()
            assert text.count("event=web_child ") == 1
            assert "event=web_started" not in text and "event=web_died" not in text
            assert (
                f'event=web_cannot_listen error="[web] listen 127.0.0.1:{port}: cannot listen'
                ' there: Address already in use"'
            ) in text
            daemon.send_signal(signal.SIGTERM)
            assert daemon.wait(60) == 0
        finally:
            if daemon.poll() is None:
                daemon.kill()
                daemon.wait(10)
