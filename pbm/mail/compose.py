"""Compose the server's outgoing mails as complete RFC 5322 messages.

Every mail is what the `email` package writes with `policy.SMTP`: headers RFC 2047
encoded where they need it and folded at 78 columns, lines ending in CRLF, which is
what smtplib and aiosmtplib send as-is. This module decides what goes in;
pbm.mail.multipart writes it from bytes, the same bytes the package writes at a
fraction of its cost (every move queues mails, so composing is on the hot path), and
hands any header the package would rewrite (non-ASCII, long, a display name) to the
package's header classes.

The text is the mail: an ASCII body whose lines fit in SMTP's 998 octets goes out as
7bit, untouched, so 72-column boards and long comment lines reach the player exactly as
rendered; anything else is UTF-8 quoted-printable (soft line breaks that every mail
program joins again). `compose` writes that text mail, which the outbox queues.

Most mail programs show text/plain in a proportional font, so when the mail is sent
`with_html` makes it `multipart/alternative`: the text part unchanged, then an HTML
part with the same text in a `<pre>` (monospace, columns kept) and, above it, the drawn
boards given as `InlinePicture`s, each an inline PNG of a `multipart/related` part
named by `cid:`, with its alt text and a visually hidden list of the position for
screen readers. The HTML (templates/mail.html) loads nothing from the network: no URL,
no remote style, font or image.

No "Precedence: bulk": RFC 3834 `Auto-Submitted` already tells standard responders
not to answer, `X-Auto-Response-Suppress: All` tells Exchange, and bulk precedence
would file personal game mail with newsletters.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email import message_from_bytes, policy
from email.errors import HeaderParseError
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime
from functools import lru_cache
from html import escape

from pbm.mail.headers import HEADER_CLASSES, clean
from pbm.mail.html_blocks import to_html
from pbm.mail.multipart import (
    TextMail,
    header,
    multipart,
    picture_part,
    text_mail,
    text_part,
)
from pbm.mail.quoting import quote_lines
from pbm.mail.streams import StreamHeaders
from pbm.mail.visible import visible
from pbm.texts import render_html

# C0 and C1 controls and DEL: a NUL or an escape in a header (a userid stored before
# userids were checked) is refused by some relays and garbles mail programs.
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# SMTP's policy (CRLF, 78-column folding, RFC 2047) with header classes put together
# once instead of once per header (see headers.py); the bytes written are the same.
_POLICY = policy.SMTP.clone(header_factory=HEADER_CLASSES)


def _one_line(value: str) -> str:
    """Header values never carry line breaks (they would inject headers) nor control
    characters (shown as U+FFFD), nor invisible format characters such as bidi
    overrides (dropped, see visible.py)."""
    return visible(_CONTROLS.sub("\ufffd", " ".join(value.split())))


@dataclass(frozen=True, slots=True)
class InlinePicture:
    """A drawn board for the HTML part: `png` bytes of `width` x `height` pixels, the
    `alt` text and `words`, the position line by line (read out by screen readers).
    The services draw it; the transport only places it."""

    png: bytes
    width: int
    height: int
    alt: str
    words: tuple[str, ...] = ()


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
def _from_header(sender: str) -> bytes:
    """The From header of the server's own address, written once per process: every
    mail pbm sends has the same one."""
    return header("From", _mailbox(sender))


def _body_with_quote(body: str, quote: str | None) -> str:
    """The text part: player text in it (comments, chat, echoes, the quote) has no
    control or bidi character left (visible.py), whichever way it came in."""
    text = visible(clean(body))
    if quote is not None:
        text = text.rstrip("\n") + "\n\n" + quote_lines(visible(clean(quote)))
    if not text.endswith("\n"):
        text += "\n"
    return text


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
    stream: StreamHeaders | None = None,
) -> bytes:
    """Return the complete message as bytes with CRLF line ends (see module docstring).

    `quote`, when given, is appended after the body and a blank line, every line
    prefixed with "> " (the caller's body ends with its own introduction such as
    "Original message follows:"). `stream` adds the headers of its reason and list.
    """
    fields = [
        ("To", ", ".join(_mailbox(address) for address in to)),
        ("Subject", _one_line(subject)),
        ("Date", format_datetime(date if date.tzinfo is not None else date.replace(tzinfo=UTC))),
        ("Message-ID", _one_line(message_id)),
    ]
    if in_reply_to:
        fields.append(("In-Reply-To", _one_line(in_reply_to)))
    if references:
        fields.append(("References", " ".join(_one_line(ref) for ref in references)))
    if reply_to:
        fields.append(("Reply-To", _mailbox(reply_to)))
    fields.append(("Auto-Submitted", _one_line(auto_submitted)))
    fields.append(("X-Auto-Response-Suppress", "All"))
    if stream is not None:
        fields.extend(_stream_headers(stream))
    head = _from_header(sender) + b"".join(header(name, value) for name, value in fields)
    return text_mail(head, _body_with_quote(body, quote))


def _stream_headers(stream: StreamHeaders) -> list[tuple[str, str]]:
    """Why the mail was sent, its list (board or tournament) and how to stop it
    (docs/mail-format.md)."""
    fields = []
    if stream.list_id:
        fields.append(("List-Id", _one_line(stream.list_id)))
    stops = [f"<{_one_line(stream.unsubscribe_url)}>"] if stream.unsubscribe_url else []
    if stream.unsubscribe:
        stops.append(f"<mailto:{_one_line(stream.unsubscribe)}>")
    if stops:
        fields.append(("List-Unsubscribe", ", ".join(stops)))
    if stream.unsubscribe_url:  # RFC 8058: a POST to the https link stops it at once
        fields.append(("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"))
    if stream.archive_url:
        fields.append(("List-Archive", f"<{_one_line(stream.archive_url)}>"))
        fields.append(("Archived-At", f"<{_one_line(stream.archive_url)}>"))
    fields.append(("X-PBM-Reason", stream.reason.value))
    fields.append(("Feedback-ID", _one_line(stream.feedback_id)))
    return fields


def with_attachment(raw: bytes, filename: str, data: bytes, mime_type: str) -> bytes:
    """`raw`, a mail `compose` wrote, as `multipart/mixed`: its text part as it was, then
    `data` as an attachment named `filename` (base64, which the email package chooses)."""
    msg = message_from_bytes(raw, policy=_POLICY)
    assert isinstance(msg, EmailMessage)  # the policy's message factory
    maintype, _, subtype = mime_type.partition("/")
    msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=_one_line(filename))
    return msg.as_bytes()


def with_html(raw: bytes, pictures: Sequence[InlinePicture]) -> bytes:
    """`raw`, a mail `compose` wrote, as `multipart/alternative`: its text part as it
    was, then the HTML part with `pictures` drawn above the same text (made from bytes
    by pbm.mail.multipart: the same bytes the email package wrote, in a tenth of the
    time)."""
    mail = TextMail.read(raw)
    cids = [_content_id(i, mail.message_id) for i in range(len(pictures))]
    page = html_page(mail.subject, mail.text, list(zip(cids, pictures, strict=True)))
    outer, inner = _boundaries([mail.message_id, mail.text, page, *(p.png for p in pictures)], 2)
    html = text_part(page, "html")
    if pictures:
        images = [
            picture_part(picture.png, cid, f"board{number}.png")
            for number, (cid, picture) in enumerate(zip(cids, pictures, strict=True), 1)
        ]
        html = multipart("related", inner, [html, *images])
    return mail.alternative(outer, [html])


def _boundaries(content: Sequence[str | bytes], count: int) -> list[str]:
    """Boundaries made from a digest of what the mail holds instead of random ones, the
    outermost first: the same mail is the same bytes (golden files, a mail sent again),
    and a boundary that is a digest of the content cannot occur in it by any practical
    chance."""
    seed = hashlib.sha256()
    for item in content:
        data = item.encode("utf-8", "surrogateescape") if isinstance(item, str) else item
        seed.update(len(data).to_bytes(8, "big") + data)
    found = []
    for number in range(count):
        digest = seed.copy()
        digest.update(f"part {number}".encode())
        found.append(f"=_pbm{number}_{digest.hexdigest()[:32]}")
    return found


def _content_id(index: int, message_id: str) -> str:
    """A Content-ID unique to this mail and short enough not to fold: the picture's
    number, a digest of the Message-ID and its host (an addr-spec, as RFC 2392 asks)."""
    host = re.sub(r"[^A-Za-z0-9.-]", "", message_id.rpartition("@")[2]) or "pbm"
    digest = hashlib.sha256(message_id.encode("utf-8", "replace")).hexdigest()[:16]
    return f"board{index + 1}.{digest}@{host}"


def html_page(title: str, text: str, pictures: Sequence[tuple[str, InlinePicture]]) -> str:
    """The HTML part: every `(cid, picture)` drawn in order, each followed by the position
    in words, then `text` as paragraphs, lists and (boards, tables) `<pre>` blocks
    (pbm.mail.html_blocks). Everything put in is escaped; the page is templates/mail.html."""
    drawn = "".join(
        render_html(
            "mail_picture",
            cid=escape(cid),
            width=str(picture.width),
            height=str(picture.height),
            alt=escape(_one_line(picture.alt)),
            words="\n".join(f"<li>{escape(_one_line(w))}</li>" for w in picture.words),
        )
        for cid, picture in pictures
    )
    return render_html(
        "mail",
        title=escape(_one_line(title)),
        pictures=drawn,
        text=to_html(text),
    )
