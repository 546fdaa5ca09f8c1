"""Compose the server's outgoing mails as complete RFC 5322 messages.

Plain text only. An ASCII body whose lines fit in SMTP's 998 octets goes out as 7bit,
untouched, so 72-column boards and long comment lines reach the player exactly as
rendered; anything else is UTF-8 quoted-printable (soft line breaks that every mail
program joins again). Headers are encoded by the `email` package (RFC 2047 where
needed) and lines end in CRLF, which is what smtplib and aiosmtplib send as-is.

When every header is plain ASCII (the usual board mail) the message is written
directly, ten times faster and with the bytes the email package would write (a long
header may be folded at other spaces, equally valid); otherwise `EmailMessage` does it.

No "Precedence: bulk": RFC 3834 `Auto-Submitted` already tells standard responders
not to answer, `X-Auto-Response-Suppress: All` tells Exchange, and bulk precedence
would file personal game mail with newsletters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from email import policy, quoprimime
from email.errors import HeaderParseError
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime

from pbm.mail.headers import clean
from pbm.mail.quoting import quote_lines

# RFC 5322 section 2.1.1: at most 998 characters per line, excluding the CRLF.
MAX_LINE_OCTETS = 998
_FOLD_WIDTH = 78  # RFC 5322 2.1.1 "SHOULD", and what the email package folds to
_FOLDABLE = frozenset({"Subject", "References", "In-Reply-To"})  # unstructured / id lists
_ASCII_BODY_HEADERS = (
    'Content-Type: text/plain; charset="us-ascii"',
    "Content-Transfer-Encoding: 7bit",
    "MIME-Version: 1.0",
)
_UTF8_BODY_HEADERS = (
    'Content-Type: text/plain; charset="utf-8"',
    "Content-Transfer-Encoding: quoted-printable",
    "MIME-Version: 1.0",
)
# "addr" or "Name Words <addr>" with atext-only words and a dot-atom address: written
# unchanged by the email package too, so no parsing is needed.
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
_DOT_ATOM = rf"{_ATEXT}+(?:\.{_ATEXT}+)*"
_SIMPLE_MAILBOX = re.compile(
    rf"^(?:(?P<bare>{_DOT_ATOM}@{_DOT_ATOM})"
    rf"|(?:(?P<name>{_ATEXT}+(?: {_ATEXT}+)*) )?<(?P<addr>{_DOT_ATOM}@{_DOT_ATOM})>)$"
)


# C0 and C1 controls and DEL: a NUL or an escape in a header (a userid stored before
# userids were checked) is refused by some relays and garbles mail programs.
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _one_line(value: str) -> str:
    """Header values never carry line breaks (they would inject headers) nor control
    characters (shown as U+FFFD)."""
    return _CONTROLS.sub("\ufffd", " ".join(value.split()))


def _mailbox(value: str) -> str:
    """`Name <addr>` or `addr` as a well-formed mailbox, the name quoted when needed.

    A display name such as `Server, PBeM` must be quoted, or the header would hold two
    addresses; values that are not a plain mailbox pass through unchanged.
    """
    value = _one_line(value)
    simple = _SIMPLE_MAILBOX.match(value)
    if simple is not None:  # the common case, without the (slow) full parser
        name, addr = simple.group("name"), simple.group("bare") or simple.group("addr")
        return f"{name} <{addr}>" if name else addr
    name, addr = "", value
    if value.endswith(">") and "<" in value:
        cut = value.rindex("<")
        name, addr = value[:cut].strip(), value[cut + 1 : -1].strip()
        if len(name) >= 2 and name[0] == name[-1] == '"':
            name = name[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    try:
        return str(Address(display_name=name, addr_spec=addr))
    except (ValueError, IndexError, TypeError, HeaderParseError):
        return value


def _body_with_quote(body: str, quote: str | None) -> str:
    text = clean(body).replace("\r\n", "\n").replace("\r", "\n")
    if quote is not None:
        text = text.rstrip("\n") + "\n\n" + quote_lines(clean(quote))
    if not text.endswith("\n"):
        text += "\n"
    return text


def _fits_7bit(text: str) -> bool:
    return text.isascii() and all(len(line) <= MAX_LINE_OCTETS for line in text.split("\n"))


def _fold(name: str, value: str) -> list[str] | None:
    """`name: value` as header lines of at most 78 characters, folded at spaces.

    None when a single word is too long to fit; the email package then decides.
    """
    lines = [f"{name}:"]
    for word in value.split(" "):
        if len(lines[-1]) + 1 + len(word) <= _FOLD_WIDTH or lines[-1] == f"{name}:":
            lines[-1] += " " + word
        else:
            lines.append(" " + word)
    return lines if all(len(line) <= _FOLD_WIDTH for line in lines) else None


def _direct_message(headers: list[tuple[str, str]], text: str) -> bytes | None:
    """The message written directly when all headers are plain ASCII, else None.

    It produces the bytes the email package would (a test checks this) in a tenth of
    the time; headers needing RFC 2047 are left to the email package.
    """
    out: list[str] = []
    for name, value in headers:
        if not value.isascii() or "=?" in value:
            return None  # RFC 2047 encoding needed, or text that looks encoded
        if len(name) + 2 + len(value) <= _FOLD_WIDTH:
            out.append(f"{name}: {value}" if value else f"{name}:")
            continue
        folded = _fold(name, value) if name in _FOLDABLE else None
        if folded is None:
            return None
        out.extend(folded)
    if _fits_7bit(text):
        out.extend(_ASCII_BODY_HEADERS)
        body = text[:-1].split("\n")  # text always ends with one "\n"
    else:
        out.extend(_UTF8_BODY_HEADERS)
        # As the email package does it: UTF-8 bytes, seen as Latin-1 text, QP-encoded.
        utf8 = text.encode("utf-8").decode("latin-1")
        body = quoprimime.body_encode(utf8, _FOLD_WIDTH).split("\n")
        if body[-1] == "":
            body.pop()
    return ("\r\n".join([*out, "", *body]) + "\r\n").encode("ascii")


def _email_package_message(headers: list[tuple[str, str]], text: str) -> bytes:
    msg = EmailMessage(policy=policy.SMTP)
    for name, value in headers:
        msg[name] = value
    if _fits_7bit(text):
        msg.set_content(text, subtype="plain", charset="us-ascii", cte="7bit")
    else:
        msg.set_content(text, subtype="plain", charset="utf-8", cte="quoted-printable")
    return msg.as_bytes(policy=policy.SMTP)


def compose(
    *,
    sender: str,
    to: Sequence[str],
    subject: str,
    body: str,
    message_id: str,
    in_reply_to: str | None = None,
    references: Sequence[str] = (),
    reply_to: str | None = None,
    date: datetime,
    auto_submitted: str = "auto-replied",
    quote: str | None = None,
) -> bytes:
    """Return the complete message as bytes with CRLF line ends (see module docstring).

    `quote`, when given, is appended after the body and a blank line, every line
    prefixed with "> " (the caller's body ends with its own introduction such as
    "Original message follows:").
    """
    if date.tzinfo is None:
        date = date.replace(tzinfo=UTC)
    headers = [
        ("From", _mailbox(sender)),
        ("To", ", ".join(_mailbox(address) for address in to)),
        ("Subject", _one_line(subject)),
        ("Date", format_datetime(date)),
        ("Message-ID", _one_line(message_id)),
    ]
    if in_reply_to:
        headers.append(("In-Reply-To", _one_line(in_reply_to)))
    if references:
        headers.append(("References", " ".join(_one_line(ref) for ref in references)))
    if reply_to:
        headers.append(("Reply-To", _mailbox(reply_to)))
    headers.append(("Auto-Submitted", _one_line(auto_submitted)))
    headers.append(("X-Auto-Response-Suppress", "All"))
    text = _body_with_quote(body, quote)
    fast = _direct_message(headers, text)
    return fast if fast is not None else _email_package_message(headers, text)
