"""Delivery reports and abuse reports as receiving systems write them, for an outbox mail
pbm queued: a Postfix-style DSN (RFC 3464) to its VERP address, and a feedback loop's
ARF report (RFC 5965). Used by the tests and benchmarks/deliverability.py."""

from __future__ import annotations

from datetime import datetime
from email.utils import format_datetime

from pbm.mail.bounces import verp_address

_REPORT = """\
From: {sender}
To: {to}
Subject: {subject}
Date: {date}
Message-ID: {message_id}
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type={report_type}; boundary="{boundary}"

--{boundary}
Content-Type: text/plain; charset=us-ascii

{text}

--{boundary}
Content-Type: message/{report_type}

{fields}
--{boundary}
Content-Type: text/rfc822-headers

{original}
--{boundary}--
"""


def _original_headers(raw: bytes) -> str:
    head = raw.split(b"\r\n\r\n", 1)[0].replace(b"\r\n", b"\n")
    return head.decode("utf-8", "replace") + "\n"


def _report(**values: str) -> bytes:
    return _REPORT.format(boundary="=_report_boundary_1", **values).encode().replace(b"\n", b"\r\n")


def dsn(
    *,
    envelope_from: str,
    mail_id: int,
    verp: str | None,
    recipient: str,
    raw: bytes,
    status: str,
    now: datetime,
    message_id: str,
) -> bytes:
    """A DSN for outbox mail `mail_id` to `recipient`: failed with a 5.x.x `status`,
    delayed with a 4.x.x one."""
    hard = status.startswith("5")
    return _report(
        sender="MAILER-DAEMON@mx.players.example (Mail Delivery System)",
        to=verp_address(envelope_from, mail_id, verp),
        subject="Undelivered Mail Returned to Sender" if hard else "Delayed Mail",
        date=format_datetime(now),
        message_id=message_id,
        report_type="delivery-status",
        text=f"<{recipient}>: host mx.players.example said: {status} failure",
        fields=(
            "Reporting-MTA: dns; mx.players.example\n\n"
            f"Final-Recipient: rfc822; {recipient}\n"
            f"Action: {'failed' if hard else 'delayed'}\n"
            f"Status: {status}\n"
        ),
        original=_original_headers(raw),
    )


def arf(*, to: str, recipient: str, raw: bytes, now: datetime, message_id: str) -> bytes:
    """A feedback loop's abuse report about `raw` (its headers), mailed to `to`."""
    return _report(
        sender="Feedback Loop <fbl@fbl.players.example>",
        to=to,
        subject="Abuse report",
        date=format_datetime(now),
        message_id=message_id,
        report_type="feedback-report",
        text="This is an email abuse report.",
        fields=(
            "Feedback-Type: abuse\nUser-Agent: TestFBL/1.0\nVersion: 1\n"
            f"Original-Rcpt-To: <{recipient}>\n"
        ),
        original=_original_headers(raw),
    )
