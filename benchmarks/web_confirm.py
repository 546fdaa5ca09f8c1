"""How promptly the mail a web POST causes goes out from `pbm serve` (issue 25), on
loopback.

`pbm serve` runs its pages in a child process at a lower priority (pbm.runners.web):
a POST commits its mail there, and the daemon's sender, woken through a pipe, sends
it. This starts `pbm serve` (SQLite, the Maildir outbox, the pages), signs up
`--people` players by SMTP, and for each, once its confirmation request is in the
Maildir, POSTs the confirmation link and times how long the answer takes to appear in
the Maildir after the POST was answered. Prints the median and the largest delay.
Bounded by `--people` and `--seconds`.

Usage: .venv/bin/python benchmarks/web_confirm.py [--people 20] [--seconds 120]
"""

from __future__ import annotations

import argparse
import re
import signal
import smtplib
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from email.message import EmailMessage
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
POLL_SECONDS = 0.005


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [int(s.getsockname()[1]) for s in socks]
    for s in socks:
        s.close()
    return ports


def mails_to(outbox: Path, address: str) -> list[Path]:
    new = outbox / "new"
    if not new.is_dir():
        return []
    found = [p for p in new.iterdir() if address.encode() in p.read_bytes()[:4000]]
    return sorted(found, key=lambda p: p.stat().st_mtime_ns)


def until(deadline: float, check) -> object:  # type: ignore[no-untyped-def]
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(POLL_SECONDS)
    raise SystemExit("timed out: raise --seconds")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--people", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=120.0)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="pbm-web-confirm-"))
    smtp, web = free_ports(2)
    base = f"http://127.0.0.1:{web}"
    config = tmp / "pbm.toml"
    config.write_text(
        f"""
[server]
address = "pbm@example.org"
data_dir = "{tmp / "var"}"
[security]
password_cost = 4
[mail.listen]
smtp = "127.0.0.1:{smtp}"
[web]
listen = "127.0.0.1:{web}"
base_url = "{base}"
metrics_listen = ""
""",
        encoding="utf-8",
    )
    log = (tmp / "serve.log").open("wb")
    daemon = subprocess.Popen(
        [sys.executable, "-m", "pbm", "--config", str(config), "serve"],
        stdout=log,
        stderr=log,
        stdin=subprocess.DEVNULL,
        cwd=tmp,
    )
    outbox = tmp / "var" / "outbox"
    deadline = time.monotonic() + args.seconds
    delays = []
    try:

        def up() -> bool:
            try:
                return httpx.get(f"{base}/robots.txt", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        until(deadline, up)
        for n in range(args.people):
            address = f"p{n}@players.example"
            msg = EmailMessage()
            msg["From"], msg["To"], msg["Subject"] = address, "pbm@example.org", f"signup p{n} pw"
            msg.set_content("\n")
            with smtplib.SMTP("127.0.0.1", smtp, timeout=10) as client:
                client.send_message(msg)
            [request] = until(deadline, lambda a=address: mails_to(outbox, a))  # type: ignore[misc]
            link = re.search(rf"{re.escape(base)}(/confirm/\w+)", request.read_text())
            assert link, request.read_text()
            answer = httpx.post(base + link.group(1), timeout=10)
            assert answer.status_code == 200, answer.text
            posted = time.monotonic()
            until(deadline, lambda a=address: len(mails_to(outbox, a)) > 1)
            delays.append(time.monotonic() - posted)
        print(
            f"{len(delays)} confirmations by POST to pbm serve's pages (their child process "
            f"at pbm's default [web] nice): the answer in the Maildir "
            f"{statistics.median(delays) * 1000:.0f} ms "
            f"(median), {max(delays) * 1000:.0f} ms (largest) after the POST was answered"
        )
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(60)
        log.close()


if __name__ == "__main__":
    main()
