"""A real `pbm serve` with its pages on loopback (SQLite, the Maildir outbox, SMTP
intake): `serving_daemon` starts one in a directory and stops it after; the web tests
and benchmarks/web_confirm.py use it."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import TypeVar

import httpx

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


@contextmanager
def serving_daemon(tmp_path: Path) -> Iterator[Serving]:
    """`pbm serve` with `[web] listen` and metrics in `tmp_path`, once its pages answer;
    stopped by SIGTERM after (it must exit 0), unless the caller ended it."""
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
