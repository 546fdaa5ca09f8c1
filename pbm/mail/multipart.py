"""Mail written from bytes: the text mail `compose` queues, and the same mail made
`multipart/alternative` by the sender, without building an
`email.message.EmailMessage` and writing it out.

The `email` package's policy machinery (parsing every header into an object, asking it
again for the content type at every step of the generator) cost about 2 ms of the
sender's CPU per mail, more than drawing a picture, and a quarter of a move's
processing when the text mail was composed with it. Everything written here is what the
package wrote with `policy.SMTP` for the same mail, byte for byte: the text part's
bytes as composed, a part's body 7bit when it is ASCII in lines of at most 998 octets
and UTF-8 quoted-printable otherwise, base64 in lines of 76, CRLF line ends, and a
header folded by the policy whenever it would not fit in 78 columns
(tests/mail_format/test_multipart.py and test_compose_bytes.py compare both). The
interface:

- `TextMail.read(raw)`: the mail's headers, its text part, and what the HTML part needs
  from it (the text, the Subject and the Message-ID, decoded);
- `text_part`, `picture_part`, `multipart`: one MIME part each, as bytes;
- `TextMail.alternative(boundary, parts)`: the whole mail, its text part first;
- `header(name, value)` and `text_mail(head, text)`: what compose writes a text mail
  with, the same way (a header the package would rewrite goes through its header
  classes, tested in tests/mail_format/test_compose_bytes.py).

A picture's base64 lines are made once per picture (`_base64_lines`): the mails of one
move to its readers show the same picture.
"""

from __future__ import annotations

import binascii
import quopri
import re
from collections.abc import Sequence
from dataclasses import dataclass
from email import policy, quoprimime
from functools import lru_cache

from pbm.mail.headers import HEADER_CLASSES

# RFC 5322 section 2.1.1: at most 998 characters per line, excluding the CRLF.
MAX_LINE_OCTETS = 998
# The columns the policy folds headers at, and base64's 76-character lines (57 bytes).
_FOLD = 78
_BASE64_CHUNK = 76 // 4 * 3
_CRLF = b"\r\n"
_HEADER_LINE = re.compile(rb"[^\r\n]*\r\n(?:[ \t][^\r\n]*\r\n)*")
_TEXT_HEADERS = {
    b'Content-Type: text/plain; charset="us-ascii"\r\nContent-Transfer-Encoding: 7bit\r\n': "7bit",
    b'Content-Type: text/plain; charset="utf-8"\r\n'
    b"Content-Transfer-Encoding: quoted-printable\r\n": "quoted-printable",
}
# compose's policy: the rare header this folds or decodes is read as compose wrote it.
_SMTP = policy.SMTP.clone(header_factory=HEADER_CLASSES)
# Boundaries the policy writes as they are, in quotes (pbm's are `=_pbmN_` and hex).
_BOUNDARY = re.compile(r"[A-Za-z0-9=_.-]+")


def fits_7bit(text: str) -> bool:
    return text.isascii() and all(len(line) <= MAX_LINE_OCTETS for line in text.split("\n"))


# Printable ASCII, which the header classes write back as it was unless it holds an
# RFC 2047 word ("=?", decoded and encoded again) or, in an address header, anything
# but bare addresses (display names and quoted local parts are rewritten).
_PRINTABLE = re.compile(r"[ -~]*")
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_DOT_ATOM = rf"{_ATOM}(?:\.{_ATOM})*"
_BARE_ADDRESS = re.compile(rf"{_DOT_ATOM}@{_DOT_ATOM}")
_BARE_MSG_ID = re.compile(rf"<{_DOT_ATOM}@{_DOT_ATOM}>")
_ADDRESS_HEADERS = frozenset({"from", "to", "cc", "bcc", "reply-to", "sender"})


def _written_as_is(name: str, value: str) -> bool:
    if not value or not _PRINTABLE.fullmatch(value) or "=?" in value:  # "Name:" if empty
        return False
    lower = name.lower()
    if lower in _ADDRESS_HEADERS:
        return all(_BARE_ADDRESS.fullmatch(each) for each in value.split(", "))
    if lower == "message-id":
        return bool(_BARE_MSG_ID.fullmatch(value))
    return True


def header(name: str, value: str) -> bytes:
    """One header as the policy writes it when a message is given `value` as a string:
    as it is when it fits in 78 columns and the header classes would not rewrite it,
    else through those classes (encoded, folded)."""
    if len(name) + 2 + len(value) <= _FOLD and _written_as_is(name, value):
        return f"{name}: {value}".encode("ascii") + _CRLF
    return _SMTP.header_factory(name, value).fold(policy=_SMTP).encode("ascii", "surrogateescape")


def _unfold(value: bytes) -> str:
    return "".join(value.decode("ascii", "surrogateescape").split("\r\n")).strip()


@dataclass(frozen=True, slots=True)
class TextMail:
    """A mail `compose` wrote, in pieces: `head`, its headers but the content ones;
    `part`, its text part (content headers, blank line, body) as composed; and, decoded,
    its `text` (LF line ends), `subject` and `message_id`."""

    head: bytes
    part: bytes
    text: str
    subject: str
    message_id: str

    @classmethod
    def read(cls, raw: bytes) -> TextMail:
        """ValueError when `raw` is not a single text part as `compose` writes it."""
        cut = raw.find(b"\r\n\r\n")
        if cut < 0:
            raise ValueError("no end of the headers")
        headers, body = raw[: cut + 2], raw[cut + 4 :]
        head, content, subject, message_id = [], [], "", ""
        for match in _HEADER_LINE.finditer(headers):
            field = match.group()
            name, _, value = field.partition(b":")
            lower = name.lower()
            if lower.startswith(b"content-"):
                content.append(field)
                continue
            head.append(field)
            if lower == b"subject":
                subject = _decoded_subject(value)
            elif lower == b"message-id":
                message_id = _unfold(value)
        content_headers = b"".join(content)
        cte = _TEXT_HEADERS.get(content_headers)
        if cte is None:
            raise ValueError(f"not a text mail compose wrote: {content_headers[:200]!r}")
        if cte == "7bit":
            text = body.decode("ascii")
        else:
            text = quopri.decodestring(body).decode("utf-8", "replace")
        return cls(
            head=b"".join(head),
            part=content_headers + _CRLF + body,
            text=text.replace("\r\n", "\n"),
            subject=subject,
            message_id=message_id,
        )

    def alternative(self, boundary: str, parts: Sequence[bytes]) -> bytes:
        """The whole mail as `multipart/alternative`: the text part, then `parts`."""
        return self.head + multipart("alternative", boundary, [self.part, *parts])


def _decoded_subject(value: bytes) -> str:
    """The Subject as the policy reads it: RFC 2047 words decoded (only they need the
    header parser)."""
    unfolded = _unfold(value)
    if "=?" not in unfolded:
        return unfolded
    return str(_SMTP.header_fetch_parse("Subject", unfolded))


def text_part(text: str, subtype: str) -> bytes:
    """A text part: 7bit when `text` fits it, else UTF-8 quoted-printable."""
    content, body = _text_content(text, subtype)
    return content + _CRLF + body


def text_mail(head: bytes, text: str) -> bytes:
    """A whole mail of one text/plain part: `head` (its headers, each written by
    `header`), the content headers and MIME-Version where the package puts them, then
    the body."""
    content, body = _text_content(text, "plain")
    return head + content + b"MIME-Version: 1.0\r\n" + _CRLF + body


def _text_content(text: str, subtype: str) -> tuple[bytes, bytes]:
    """A text part's content headers and its body, each as written."""
    if fits_7bit(text):
        head = f'Content-Type: text/{subtype}; charset="us-ascii"\r\n'
        head += "Content-Transfer-Encoding: 7bit\r\n"
        body = _CRLF.join(text.encode("ascii").splitlines()) + _CRLF
    else:
        head = f'Content-Type: text/{subtype}; charset="utf-8"\r\n'
        head += "Content-Transfer-Encoding: quoted-printable\r\n"
        lines = text.encode("utf-8").splitlines()
        encoded = quoprimime.body_encode((b"\n".join(lines) + b"\n").decode("latin-1"), _FOLD)
        body = _CRLF.join(encoded.encode("ascii").splitlines()) + _CRLF
    return head.encode("ascii"), body


@lru_cache(maxsize=64)
def _base64_lines(png: bytes) -> bytes:
    return b"".join(
        binascii.b2a_base64(png[i : i + _BASE64_CHUNK]).replace(b"\n", _CRLF)
        for i in range(0, len(png), _BASE64_CHUNK)
    )


def picture_part(png: bytes, cid: str, filename: str) -> bytes:
    """An inline PNG named by its Content-ID `cid` (without the angle brackets)."""
    head = (
        b"Content-Type: image/png\r\nContent-Transfer-Encoding: base64\r\n"
        + header("Content-Disposition", f'inline; filename="{filename}"')
        + header("Content-ID", f"<{cid}>")
    )
    return head + _CRLF + _base64_lines(png)


def _multipart_header(subtype: str, boundary: str) -> bytes:
    """The Content-Type of a multipart: the policy breaks it before the boundary when
    the whole does not fit (its parser is a third of the cost of the mail otherwise)."""
    first, second = f"Content-Type: multipart/{subtype};", f' boundary="{boundary}"'
    if len(first) + len(second) <= _FOLD:
        return (first + second).encode("ascii") + _CRLF
    if len(second) <= _FOLD and _BOUNDARY.fullmatch(boundary):
        return (first + "\r\n" + second).encode("ascii") + _CRLF
    return _SMTP.fold_binary("Content-Type", f'multipart/{subtype}; boundary="{boundary}"')


def multipart(subtype: str, boundary: str, parts: Sequence[bytes]) -> bytes:
    """A `multipart/subtype` part holding `parts`, split by `boundary`."""
    head = _multipart_header(subtype, boundary)
    dash = f"--{boundary}".encode("ascii")
    body = dash + _CRLF + (_CRLF + dash + _CRLF).join(parts) + _CRLF + dash + b"--" + _CRLF
    return head + _CRLF + body
