"""How promptly the mail a web POST causes goes out from `pbm serve` (issue 25), on
loopback.

`pbm serve` runs its pages in a child process at a lower priority (pbm.runners.web):
a POST commits its mail there, and the daemon's sender, woken through a pipe, sends
it. This starts `pbm serve` (SQLite, the Maildir outbox, the pages: tests/web/
serving.py), signs up `--people` players by SMTP, and for each, once its confirmation
request is in the Maildir, POSTs the confirmation link and times how long the answer
takes to appear in the Maildir after the POST was answered. Prints the median and the
largest delay. Bounded by `--people` and `--seconds`.

Usage: .venv/bin/python benchmarks/web_confirm.py [--people 20] [--seconds 120]
"""

from __future__ import annotations

import argparse
import re
import smtplib
import statistics
import sys
import tempfile
import time
from email.message import EmailMessage
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.web.serving import mails_to, serving_daemon, waited

POLL_SECONDS = 0.002


def mails(outbox: Path) -> int:
    """How many mails the daemon has written (cheap enough to ask every 2 ms)."""
    new = outbox / "new"
    return len(list(new.iterdir())) if new.is_dir() else 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--people", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=120.0)
    args = parser.parse_args()
    delays = []
    with tempfile.TemporaryDirectory() as tmp, serving_daemon(Path(tmp)) as running:
        deadline = time.monotonic() + args.seconds
        for n in range(args.people):
            if time.monotonic() > deadline:
                break
            msg = EmailMessage()
            msg["From"], msg["To"] = f"p{n}@players.example", "pbm@example.org"
            msg["Subject"] = f"signup p{n} secret"
            msg.set_content("\n")
            with smtplib.SMTP("127.0.0.1", running.smtp, timeout=10) as client:
                client.send_message(msg)
            request = waited(lambda n=n: (mails_to(running.outbox, f"p{n}@") or [None])[0], "mail")
            link = re.search(rf"{re.escape(running.base)}(/confirm/\w+)", request)
            assert link, request
            before = mails(running.outbox)
            answer = httpx.post(running.base + link.group(1), timeout=10)
            assert answer.status_code == 200, answer.text
            posted = time.monotonic()
            while mails(running.outbox) == before and time.monotonic() < deadline:
                time.sleep(POLL_SECONDS)
            delays.append(time.monotonic() - posted)
    print(
        f"{len(delays)} confirmations by POST to pbm serve's pages (their child process at "
        f"pbm's default [web] nice): the answer in the Maildir "
        f"{statistics.median(delays) * 1000:.0f} ms (median), {max(delays) * 1000:.0f} ms "
        f"(largest) after the POST was answered"
    )


if __name__ == "__main__":
    main()
