"""Parse one raw inbound mail into what the command layer needs.

`parse_message` never raises: malformed headers, missing senders, unknown charsets
and undecodable bytes degrade to empty or replacement text, and a mail nobody can be
answered at is marked as a robot with a reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from email import message_from_bytes, policy
from email.utils import format_datetime, parseaddr, parsedate_to_datetime

from pbm.mail.body import Structure, body_text, structure
from pbm.mail.headers import Headers, clean, fold_space
from pbm.mail.quoting import first_line, fresh_text
from pbm.mail.robots import robot_reason

_QUOTE_MAX_LINES = 200
_QUOTE_MAX_COLUMNS = 500
_RECIPIENT_HEADERS = ("To", "Cc", "Delivered-To", "X-Original-To", "Envelope-To", "X-Envelope-To")
# Reply/forward markers in many languages, "Re[2]:"/"Re(2):"/"Re^2:", and "[tag]" prefixes.
_SUBJECT_PREFIX = re.compile(
    r"^\s*(?:(?:re|fwd?|aw|wg|sv|vs|antw|antwort|réf|ref|tr|rv|r|odp|enc|res|ynt|vá|"
    r"trans|doorst|fs|vb|ats|atb|πρθ|на|отв)\s*(?:\[\d+\]|\(\d+\)|\^\d+)?\s*[:：]|\[[^\]]*\])\s*",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class InboundMail:
    """One inbound mail, decoded; see docs/mail-format.md for the rules."""

    message_id: str | None
    sender: str
    sender_name: str
    subject: str
    command_subject: str
    text: str
    fresh_text: str
    recipients: tuple[str, ...]
    in_reply_to: tuple[str, ...]
    references: tuple[str, ...]
    robot: str | None
    date: datetime | None
    reply_to: str | None = None


def strip_subject_prefixes(subject: str) -> str:
    """The subject without leading Re:/Fwd:/AW:/... markers and [list tags]."""
    previous = None
    while previous != subject:
        previous = subject
        subject = _SUBJECT_PREFIX.sub("", subject, count=1)
    return subject.strip()


def _date(headers: Headers) -> datetime | None:
    raws = headers.raw("Date")
    value = fold_space(clean(raws[0])) if raws else ""
    if not value:
        return None
    try:
        parsed = parsedate_to_datetime(value)
    except Exception:
        return None
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)  # "-0000" means UTC with unknown origin
    return parsed


def _parse(raw: bytes) -> InboundMail:
    msg = message_from_bytes(raw, policy=policy.compat32)  # see headers.py
    headers = Headers(msg)
    senders = headers.addresses("From")
    sender_name, sender = senders[0] if senders else ("", "")
    subject = headers.text("Subject") or ""
    try:
        parts = structure(msg)
        text = clean(body_text(parts))
    except Exception:  # a body we cannot read still leaves the subject usable
        parts, text = Structure(), ""
    recipients = [addr for name in _RECIPIENT_HEADERS for _, addr in headers.addresses(name)]
    reply_tos = headers.addresses("Reply-To")
    ids = headers.message_ids("Message-ID")
    return InboundMail(
        message_id=ids[0] if ids else None,
        sender=sender,
        sender_name=fold_space(sender_name),
        subject=subject,
        command_subject=strip_subject_prefixes(subject),
        text=text,
        fresh_text=fresh_text(text),
        recipients=tuple(dict.fromkeys(recipients)),
        in_reply_to=headers.message_ids("In-Reply-To"),
        references=headers.message_ids("References"),
        robot=robot_reason(headers, parts, sender=sender, subject=subject, body=text),
        date=_date(headers),
        reply_to=reply_tos[0][1] if reply_tos else None,
    )


def parse_message(raw: bytes) -> InboundMail:
    """Parse raw RFC 5322 bytes; never raises (see the module docstring)."""
    try:
        return _parse(bytes(raw))
    except Exception as error:  # last line of defence: intake must never crash on input
        return InboundMail(
            message_id=None,
            sender="",
            sender_name="",
            subject="",
            command_subject="",
            text="",
            fresh_text="",
            recipients=(),
            in_reply_to=(),
            references=(),
            robot=f"unparseable message ({type(error).__name__})",
            date=None,
        )


def first_command_line(mail: InboundMail) -> str | None:
    """The first non-blank line the sender wrote (quotes and signatures removed)."""
    return first_line(mail.fresh_text)


def _address_key(address: str) -> tuple[str, str] | None:
    _, addr = parseaddr(address)
    addr = (addr or address).strip().lower()
    if "@" not in addr:
        return None
    local, _, domain = addr.rpartition("@")
    return local.split("+", 1)[0], domain


def is_from_self(mail: InboundMail, server_addresses: Iterable[str]) -> bool:
    """True when the sender is one of the server's addresses, plus-addressed or not."""
    sender = _address_key(mail.sender) if mail.sender else None
    if sender is None:
        return False
    return any(_address_key(address) == sender for address in server_addresses)


def quotable_original(mail: InboundMail) -> str:
    """The original message as error replies quote it: From, Subject, Date, blank, body.

    The body is cut after `_QUOTE_MAX_LINES` lines (marked "[...]") so a huge mail
    with a forged sender cannot be reflected at full size to someone else.
    """
    sender = f"{mail.sender_name} <{mail.sender}>" if mail.sender_name else mail.sender
    lines = [f"From: {sender}", f"Subject: {mail.subject}"]
    if mail.date is not None:
        lines.append(f"Date: {format_datetime(mail.date)}")
    body = mail.text.rstrip("\n").split("\n")
    if len(body) > _QUOTE_MAX_LINES:
        body = [*body[:_QUOTE_MAX_LINES], "[...]"]
    body = [line[:_QUOTE_MAX_COLUMNS] for line in body]
    return "\n".join(lines) + "\n\n" + "\n".join(body)
