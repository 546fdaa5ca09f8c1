"""Bounces and spam complaints: who a returned mail was for, and what went wrong.

Each outgoing mail's envelope sender names its outbox row (VERP): `LOCAL+ID-CODE@host`,
CODE a random secret stored with the row, so a bounce is matched to the exact mail and
recipient and nobody can blame a mail on another. A report to that address (or to the
feedback address a provider's loop mails) is read here:

- a delivery status notification (RFC 3464): the stdlib parses each
  `message/delivery-status` block; `Status: 5.x.x` is a hard failure, `4.x.x` (a
  delay, or a retry time that ran out) a soft one;
- a non-standard bounce (old Exim, qmail, Exchange...): flufl.bounce, Mailman's
  detectors, finds the failed addresses and whether they failed for good;
- an abuse report (ARF, RFC 5965, `message/feedback-report`): a complaint.

The returned original (`message/rfc822` or `text/rfc822-headers`) gives its Message-ID,
which attributes a report that came without VERP (a feedback loop mails the operator's
registered address). Nothing here touches the store: pbm.services.mailing.bounces counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from email import message_from_bytes
from email.header import Header, decode_header
from email.message import Message
from email.policy import compat32
from enum import StrEnum

from flufl.bounce import all_failures

from pbm.mail.mailbox import AddressError, check_addr_spec

_STATUS = re.compile(r"\b([245])\.(\d{1,3})\.(\d{1,3})\b")
_VERP_TAG = re.compile(r"^(\d{1,18})-([a-z0-9]{8,32})$")
# The original as it came back; message/global* carry one in UTF-8 (RFC 6532, 6533).
_ORIGINAL_TYPES = (
    "message/rfc822",
    "text/rfc822-headers",
    "message/rfc822-headers",
    "message/global",
    "message/global-headers",
)


class BounceKind(StrEnum):
    HARD = "hard"  # the address does not take mail (5.x.x)
    SOFT = "soft"  # not now: full, deferred too long (4.x.x)
    COMPLAINT = "complaint"  # the reader reported the mail as spam


@dataclass(frozen=True, slots=True)
class Report:
    """What a bounce or complaint says: `kind`, the failed `recipients` (as the
    reporter wrote them; empty when it names none), the DSN `status` code ("" when
    none was given) and the Message-ID of the returned original, when it came back."""

    kind: BounceKind
    recipients: tuple[str, ...] = ()
    status: str = ""
    original_message_id: str | None = None


def tagged_address(local: str, host: str, tag: str) -> str:
    return f"{local}+{tag}@{host}"


def tag_for(addresses: tuple[str, ...] | list[str], local: str, host: str) -> str | None:
    """The tag of the first of `addresses` that is `LOCAL+TAG@HOST` (case-insensitive)."""
    prefix = f"{local.lower()}+"
    for address in addresses:
        name, at, domain = address.strip().lower().rpartition("@")
        if at and domain == host.lower() and name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix) :]
    return None


def verp_tag(mail_id: int, code: str) -> str:
    return f"{mail_id}-{code}"


def verp_address(bounce_address: str, mail_id: int, code: str | None) -> str:
    """The envelope sender of outbox mail `mail_id`: `bounce_address` (`LOCAL@host`)
    tagged `+ID-CODE`; as it is for a mail queued without a code."""
    local, at, host = bounce_address.rpartition("@")
    if not code or not at:
        return bounce_address
    return tagged_address(local, host, verp_tag(mail_id, code))


def verp_parts(tag: str) -> tuple[int, str] | None:
    """(outbox row id, code) of a VERP tag, or None for a tag of another shape."""
    match = _VERP_TAG.match(tag)
    return (int(match.group(1)), match.group(2)) if match else None


def _status(text: str) -> str:
    match = _STATUS.search(text or "")
    return ".".join(match.groups()) if match else ""


def _text(field: str | Header | None) -> str:
    """A report field as text. Reporters write an internationalised address in raw
    UTF-8 (`utf-8; bob@bücher.example`, RFC 6533), which the compat32 parser hands back
    as a Header of undecoded bytes."""
    if isinstance(field, Header):
        return "".join(
            part.decode("utf-8", "replace") if isinstance(part, bytes) else part
            for part, _charset in decode_header(field)
        )
    return field or ""


def _address(field: str | Header | None) -> str | None:
    """The address of a DSN or ARF address field (`rfc822; alice@x.test`)."""
    text = _text(field)
    if not text:
        return None
    value = text.rpartition(";")[2].strip().strip("<>").strip()
    try:
        return check_addr_spec(value)
    except AddressError:
        return None


def _original(msg: Message) -> Message | None:
    """The returned original (its headers at least), when the report carries it."""
    for part in msg.walk():
        if part.get_content_type() not in _ORIGINAL_TYPES:
            continue
        payload = part.get_payload()
        if isinstance(payload, list) and payload and isinstance(payload[0], Message):
            return payload[0]
        if isinstance(payload, str):
            return message_from_bytes(payload.encode("utf-8", "replace"), policy=compat32)
    return None


def _message_id(original: Message | None) -> str | None:
    if original is None:
        return None
    value = str(original.get("Message-ID", "") or "").strip()
    return value or None


def _blocks(part: Message) -> list[Message]:
    """The header blocks of a `message/*-status` or `message/feedback-report` part. The
    parser splits a `message/delivery-status` into them; a `message/global-delivery-status`
    (RFC 6533) it reads as one message whose body holds the later blocks."""
    payload = part.get_payload()
    if isinstance(payload, str):
        # compat32 keeps a part's raw bytes as surrogates: give the parser those bytes.
        return _split(payload.encode("utf-8", "surrogateescape"))
    if not isinstance(payload, list):
        return []
    blocks = [p for p in payload if isinstance(p, Message)]
    if len(blocks) == 1 and isinstance(rest := blocks[0].get_payload(decode=True), bytes):
        blocks += _split(rest)
    return blocks


def _split(raw: bytes) -> list[Message]:
    """Header blocks separated by blank lines."""
    blocks = raw.replace(b"\r\n", b"\n").split(b"\n\n")
    return [message_from_bytes(b, policy=compat32) for b in blocks if b.strip()]


def _complaint(part: Message, original: Message | None) -> Report:
    fields = _blocks(part)
    recipients = [
        a
        for block in fields
        for name in ("Original-Rcpt-To", "Removal-Recipient")
        for a in [_address(v) for v in block.get_all(name, [])]
        if a
    ]
    if not recipients and original is not None:
        recipients = [a for a in [_address(str(original.get("To", "")))] if a]
    return Report(BounceKind.COMPLAINT, tuple(dict.fromkeys(recipients)), "", _message_id(original))


def _delivery_status(part: Message, original: Message | None) -> Report | None:
    failed: dict[str, str] = {}
    for block in _blocks(part)[1:] or _blocks(part):
        action = str(block.get("Action", "")).strip().lower()
        status = _status(str(block.get("Status", "")))
        if action not in ("failed", "delayed") or not status or status.startswith("2"):
            continue
        address = _address(block.get("Final-Recipient")) or _address(
            block.get("Original-Recipient")
        )
        if address:
            failed[address] = status
    if not failed:
        return None
    # A hard failure of any recipient makes the report hard: each mail has one.
    status = next((s for s in failed.values() if s.startswith("5")), next(iter(failed.values())))
    kind = BounceKind.HARD if status.startswith("5") else BounceKind.SOFT
    return Report(kind, tuple(failed), status, _message_id(original))


def _non_standard(msg: Message, original: Message | None) -> Report | None:
    temporary, permanent = all_failures(msg)
    if not temporary and not permanent:
        return None
    addresses = [
        a.decode("utf-8", "replace") if isinstance(a, bytes) else str(a)
        for a in (permanent or temporary)
    ]
    kind = BounceKind.HARD if permanent else BounceKind.SOFT
    return Report(kind, tuple(sorted(addresses)), "", _message_id(original))


def parse_report(raw: bytes) -> Report | None:
    """The bounce or complaint `raw` is, or None when it is neither (a person's mail, an
    auto-reply, a delivery report that says the mail arrived)."""
    try:
        msg = message_from_bytes(raw, policy=compat32)
        original = _original(msg)
        for part in msg.walk():
            kind = part.get_content_type()
            if kind == "message/feedback-report":
                return _complaint(part, original)
            if kind in ("message/delivery-status", "message/global-delivery-status"):
                return _delivery_status(part, original)
        return _non_standard(msg, original)
    except Exception:  # a report nobody can read is no report: it is logged as ignored
        return None
