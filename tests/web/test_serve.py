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
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import TypeVar

import httpx
import pytest

from tests.mail.conftest import free_ports

T = TypeVar("T")
WAIT_SECONDS = 30


def waited(get: Callable[[], T | None], what: str) -> T:
    """What `get` returns once it is not None, within WAIT_SECONDS."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        found = get()
        if found is not None:
            return found
        time.sleep(0.1)
    raise AssertionError(f"no {what} within {WAIT_SECONDS} s")


@dataclass(frozen=True)
class Serving:
    base: str  # the pages
    metrics: str
    smtp: int
    outbox: Path  # the daemon's Maildir
    log: Path
    daemon: subprocess.Popen[bytes]

    def web_children(self) -> list[int]:
        """The pids of the pages' processes the daemon started, in order."""
        text = self.log.read_text(errors="replace")
        return [int(pid) for pid in re.findall(r"event=web_child pid=(\d+)", text)]

    def page_up(self) -> bool | None:
        assert self.daemon.poll() is None, self.log.read_text()
        try:
            return httpx.get(f"{self.base}/robots.txt", timeout=1).status_code == 200 or None
        except httpx.HTTPError:
            return None


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[Serving]:
    smtp, web, metrics = free_ports(3)
    base = f"http://127.0.0.1:{web}"
    config = tmp_path / "pbm.toml"
    config.write_text(
        f"""
[server]
address = "pbm@example.org"
data_dir = "{tmp_path / "var"}"

[security]
password_cost = 4

[mail.listen]
smtp = "127.0.0.1:{smtp}"

[web]
listen = "127.0.0.1:{web}"
base_url = "{base}"
metrics_listen = "127.0.0.1:{metrics}"
""",
        encoding="utf-8",
    )
    log_path = tmp_path / "serve.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "pbm", "--config", str(config), "serve"],
        stdout=log,
        stderr=log,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    running = Serving(
        base, f"http://127.0.0.1:{metrics}", smtp, tmp_path / "var" / "outbox", log_path, proc
    )
    try:
        waited(running.page_up, "web page")
        yield running
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(60) == 0, log_path.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        log.close()


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie no init reaped yet does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def mails_to(outbox: Path, address: str) -> list[str]:
    """The text of every mail to `address` in the Maildir, oldest first."""
    if not (outbox / "new").is_dir():
        return []  # the first mail makes it
    found = []
    for path in sorted((outbox / "new").iterdir(), key=lambda p: p.stat().st_mtime_ns):
        mail = message_from_bytes(path.read_bytes(), policy=policy.default)
        assert isinstance(mail, EmailMessage)
        if address in str(mail["To"]):
            body = mail.get_body(("plain",))
            assert body is not None
            found.append(str(body.get_content()))
    return found


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
    request = waited(lambda: (mails_to(outbox, "carol") or [None])[-1], "confirmation request")
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
