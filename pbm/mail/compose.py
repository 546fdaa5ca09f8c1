"""Compose the server's outgoing mails as complete RFC 5322 messages.

Every mail is an `email.message.EmailMessage` written by the `email` package with
`policy.SMTP`: headers RFC 2047 encoded where they need it and folded at 78 columns,
lines ending in CRLF, which is what smtplib and aiosmtplib send as-is. Nothing here
writes MIME or folds headers by hand; this module only decides what goes in.

Plain text only. An ASCII body whose lines fit in SMTP's 998 octets goes out as 7bit,
untouched, so 72-column boards and long comment lines reach the player exactly as
rendered; anything else is UTF-8 quoted-printable (soft line breaks that every mail
program joins again).

No "Precedence: bulk": RFC 3834 `Auto-Submitted` already tells standard responders
not to answer, `X-Auto-Response-Suppress: All` tells Exchange, and bulk precedence
would file personal game mail with newsletters.
"""

from __future__ import annotations

import re
from functools import lru_cache
from collections.abc import Sequence
from datetime import UTC, datetime
from email import policy
from email.errors import HeaderParseError
from email.headerregistry import Address, BaseHeader
from email.message import EmailMessage

from pbm.mail.headers import HEADER_CLASSES, clean
from pbm.mail.quoting import quote_lines

# RFC 5322 section 2.1.1: at most 998 characters per line, excluding the CRLF.
MAX_LINE_OCTETS = 998
# C0 and C1 controls and DEL: a NUL or an escape in a header (a userid stored before
# userids were checked) is refused by some relays and garbles mail programs.
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# SMTP's policy (CRLF, 78-column folding, RFC 2047) with header classes put together
# once instead of once per header (see headers.py); the bytes written are the same.
_POLICY = policy.SMTP.clone(header_factory=HEADER_CLASSES)


def _one_line(value: str) -> str:
    """Header values never carry line breaks (they would inject headers) nor control
    characters (shown as U+FFFD)."""
    return _CONTROLS.sub("\ufffd", " ".join(value.split()))


def _mailbox(value: str) -> str:
    """`Name <addr>` or `addr` as a well-formed mailbox: a display name goes through
    `Address`, which quotes or encodes it as needed; a bare address needs neither.

    The caller's text is split at its last `<` rather than parsed, because a display
    name such as `Server, PBeM` written unquoted would read as two addresses. (Not
    `email.utils.formataddr`: its encoded words are decoded again by the header
    parser, so a name like `Jörg <x>` would add an address.) A value `Address`
    refuses stays text, for the header parser to read as it can.
    """
    value = _one_line(value)
    name, addr = "", value
    if value.endswith(">") and "<" in value:
        cut = value.rindex("<")
        name, addr = value[:cut].strip(), value[cut + 1 : -1].strip()
        if len(name) >= 2 and name[0] == name[-1] == '"':
            name = name[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    if not name:
        return addr
    try:
        return str(Address(display_name=name, addr_spec=addr))
    except (ValueError, IndexError, TypeError, HeaderParseError):
        return value


@lru_cache(maxsize=8)
def _from_header(sender: str) -> BaseHeader:
    """The From header of the server's own address, parsed once per process: every mail
    pbm sends has the same one, and the policy stores a header object of the matching
    name as it is (`Policy.header_store_parse`) instead of parsing its text again.
    Header objects are immutable, so one may sit in many messages."""
    return _POLICY.header_factory("From", _mailbox(sender))


def _body_with_quote(body: str, quote: str | None) -> str:
    text = clean(body).replace("\r\n", "\n").replace("\r", "\n")
    if quote is not None:
        text = text.rstrip("\n") + "\n\n" + quote_lines(clean(quote))
    if not text.endswith("\n"):
        text += "\n"
    return text


def _fits_7bit(text: str) -> bool:
    return text.isascii() and all(len(line) <= MAX_LINE_OCTETS for line in text.split("\n"))


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
    msg = EmailMessage(policy=_POLICY)
    msg["From"] = _from_header(sender)
    msg["To"] = ", ".join(_mailbox(address) for address in to)
    msg["Subject"] = _one_line(subject)
    msg["Date"] = date if date.tzinfo is not None else date.replace(tzinfo=UTC)
    msg["Message-ID"] = _one_line(message_id)
    if in_reply_to:
        msg["In-Reply-To"] = _one_line(in_reply_to)
    if references:
        msg["References"] = " ".join(_one_line(ref) for ref in references)
    if reply_to:
        msg["Reply-To"] = _mailbox(reply_to)
    msg["Auto-Submitted"] = _one_line(auto_submitted)
    msg["X-Auto-Response-Suppress"] = "All"
    text = _body_with_quote(body, quote)
    if _fits_7bit(text):
        msg.set_content(text, subtype="plain", charset="us-ascii", cte="7bit")
    else:
        msg.set_content(text, subtype="plain", charset="utf-8", cte="quoted-printable")
    return msg.as_bytes()
