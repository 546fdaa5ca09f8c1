"""Parse one raw inbound mail into what the command layer needs.

`parse_message` never raises: malformed headers, missing senders, unknown charsets
and undecodable bytes degrade to empty or replacement text, and a mail nobody can be
answered at is marked as a robot with a reason.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from email import message_from_bytes, policy
from email.utils import format_datetime, parsedate_to_datetime
from functools import lru_cache

from pbm.mail.body import Structure, body_text, structure
from pbm.mail.headers import (
    Headers,
    clean,
    fold_space,
    strip_subject_prefixes,
    unfold,
    unguessed,
)
from pbm.mail.mailbox import AddressError, Mailbox, bare_address, check_addr_spec, parse_mailbox
from pbm.mail.quoting import first_line, fresh_text
from pbm.mail.robots import robot_reason

_QUOTE_MAX_LINES = 200
_QUOTE_MAX_COLUMNS = 500
_QUOTE_MAX_BYTES = 4096
_QUOTE_CUT = "[...]"
# How far back from the byte limit a cut looks for a line end before cutting mid-line.
_QUOTE_LINE_SLACK = 512
_RECIPIENT_HEADERS = ("To", "Cc", "Delivered-To", "X-Original-To", "Envelope-To", "X-Envelope-To")
NO_SENDER = "no sender address"


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
    # Authentication-Results values (RFC 8601), unfolded, topmost (newest) first.
    authentication_results: tuple[str, ...] = ()


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


def sender_of(headers: Headers) -> tuple[Mailbox | None, str | None]:
    """(the one From mailbox, None), or (None, why the mail has no usable sender).

    Read strictly (see mailbox.py): a From that is not exactly one valid address, or
    more than one From header, names nobody, whatever a lenient parser would guess. Raw
    bytes that are not UTF-8 are never guessed into the address (they refuse it); in
    the display name they are read as cp1252, since the name is only shown.
    """
    raws = headers.raw("From")
    if not any(raw.strip() for raw in raws):
        return None, NO_SENDER
    if len(raws) > 1:
        return None, f"From is not exactly one valid address: {len(raws)} From headers"
    try:
        mailbox = parse_mailbox(unguessed(raws[0]))
    except AddressError as error:
        return None, f"From is not exactly one valid address: {error}"
    if clean(raws[0]) != raws[0]:
        # The same tokens with the name's bytes guessed: the address is the one above.
        with contextlib.suppress(AddressError):
            mailbox = Mailbox(parse_mailbox(clean(raws[0])).name, mailbox.address)
    return mailbox, None


def _valid_addresses(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """The addresses of lenient parses that are valid bare addresses (no controls)."""
    found: list[str] = []
    for _, address in pairs:
        try:
            found.append(check_addr_spec(address))
        except AddressError:
            continue
    return found


def _parse(raw: bytes) -> InboundMail:
    msg = message_from_bytes(raw, policy=policy.compat32)  # see headers.py
    headers = Headers(msg)
    mailbox, sender_problem = sender_of(headers)
    sender_name, sender = (mailbox.name, mailbox.address) if mailbox else ("", "")
    subject = headers.text("Subject") or ""
    try:
        parts = structure(msg)
        text = clean(body_text(parts))
    except Exception:  # a body we cannot read still leaves the subject usable
        parts, text = Structure(), ""
    recipients = [
        a for name in _RECIPIENT_HEADERS for a in _valid_addresses(headers.addresses(name))
    ]
    reply_tos = _valid_addresses(headers.addresses("Reply-To"))
    robot = sender_problem or robot_reason(
        headers, parts, sender=sender, subject=subject, body=text
    )
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
        robot=robot,
        date=_date(headers),
        reply_to=reply_tos[0] if reply_tos else None,
        authentication_results=tuple(
            unfold(clean(value)).strip() for value in headers.raw("Authentication-Results")
        ),
    )


# A message is parsed when it is stored (its order keys) and again, moments later in the
# same process, when it is processed: the last few small ones are kept. The parse is a
# pure function of the bytes and InboundMail is immutable, so a kept one cannot go stale.
_KEPT_MESSAGES = 64
_KEPT_BYTES = 64 * 1024


def parse_message(raw: bytes) -> InboundMail:
    """Parse raw RFC 5322 bytes; never raises (see the module docstring)."""
    raw = bytes(raw)
    return _parse_kept(raw) if len(raw) <= _KEPT_BYTES else _parse_safely(raw)


@lru_cache(maxsize=_KEPT_MESSAGES)
def _parse_kept(raw: bytes) -> InboundMail:
    return _parse_safely(raw)


def _parse_safely(raw: bytes) -> InboundMail:
    try:
        return _parse(raw)
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
    addr = bare_address(address)
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

    The body is cut after `_QUOTE_MAX_LINES` lines of at most `_QUOTE_MAX_COLUMNS`
    characters, and the whole quote at `_QUOTE_MAX_BYTES` of UTF-8 (each cut marked
    "[...]"), so a huge mail with a forged sender cannot be reflected at full size to
    someone else, whatever its headers hold.
    """
    name = mail.sender_name
    if any(char in name for char in '@<>,;:"'):
        # A name like "alice@a.test" is shown quoted, as the sender wrote it.
        name = '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
    sender = f"{name} <{mail.sender}>" if name else mail.sender
    lines = [f"From: {sender}", f"Subject: {mail.subject}"]
    if mail.date is not None:
        lines.append(f"Date: {format_datetime(mail.date)}")
    body = mail.text.rstrip("\n").split("\n")
    if len(body) > _QUOTE_MAX_LINES:
        body = [*body[:_QUOTE_MAX_LINES], _QUOTE_CUT]
    body = [line[:_QUOTE_MAX_COLUMNS] for line in body]
    return _cap_bytes("\n".join(lines) + "\n\n" + "\n".join(body))


def _cap_bytes(text: str) -> str:
    """`text` within `_QUOTE_MAX_BYTES` of UTF-8, cut at a line end when one is near,
    else between characters, with a "[...]" line after the cut."""
    data = text.encode("utf-8")
    if len(data) <= _QUOTE_MAX_BYTES:
        return text
    budget = _QUOTE_MAX_BYTES - len(("\n" + _QUOTE_CUT).encode("utf-8"))
    head = data[:budget].decode("utf-8", "ignore")  # drops a split character's bytes
    line_end = head.rfind("\n")
    if line_end >= 0 and len(head) - line_end <= _QUOTE_LINE_SLACK:
        head = head[:line_end]
    return head.rstrip("\n") + "\n" + _QUOTE_CUT
