"""The MIME structure of a mail and its plain-text body.

One pass over the parts reads each Content-Type once; the body is the first inline
text/plain part with content, else the first text/html part converted to text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from email.message import Message
from email.utils import collapse_rfc2231_value

from pbm.mail.headers import clean, decode_bytes
from pbm.mail.html_text import html_to_text

# RFC 2045 section 5.2: a missing or unreadable Content-Type means text/plain.
_DEFAULT_TYPE = "text/plain"


@dataclass(frozen=True)
class Part:
    """One MIME part with its Content-Type read once."""

    message: Message
    kind: str
    params: dict[str, str]
    attachment: bool


@dataclass
class Structure:
    """Every part's content type, the body candidates, and the report type if any."""

    kinds: list[str] = field(default_factory=list)
    leaves: list[Part] = field(default_factory=list)  # not inside attached messages
    report_type: str = ""


def _content_type(part: Message) -> tuple[str, dict[str, str]]:
    try:
        kind = part.get_content_type()  # the parser set the default (digest parts)
        params: dict[str, str] = {}
        for key, value in part.get_params(failobj=[])[1:]:
            params[str(key).lower()] = clean(collapse_rfc2231_value(value))
    except Exception:
        return _DEFAULT_TYPE, {}
    return kind, params


def _is_attachment(part: Message) -> bool:
    try:
        return part.get_content_disposition() == "attachment"
    except Exception:
        return False


def structure(msg: Message) -> Structure:
    """Walk the parts once; leaves are collected outside attached messages only."""
    result = Structure()
    # (part, inside an attached message); popped from the end, children pushed reversed,
    # so parts come in document order in linear time.
    stack: list[tuple[Message, bool]] = [(msg, False)]
    while stack:
        part, attached = stack.pop()
        kind, params = _content_type(part)
        result.kinds.append(kind)
        if kind == "multipart/report" and not result.report_type:
            result.report_type = params.get("report-type", "").lower()
        if part.is_multipart():
            # Only containers' payloads are read here: get_payload() on a leaf decodes
            # text and can raise on odd charset parameters.
            inside = attached or kind.startswith("message/")
            children = part.get_payload()
            if isinstance(children, list):  # always, for a multipart; narrows the type
                stack.extend((p, inside) for p in reversed(children) if isinstance(p, Message))
        elif not attached and not kind.startswith(("multipart/", "message/")):
            result.leaves.append(Part(part, kind, params, _is_attachment(part)))
    return result


def _decoded(part: Part) -> str:
    try:
        payload = part.message.get_payload(decode=True)
    except Exception:
        payload = None
    text = decode_bytes(payload, part.params.get("charset")) if isinstance(payload, bytes) else ""
    # A byte-order mark some Windows programs put first would hide the first command.
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if part.kind == "text/plain" and part.params.get("format", "").lower() == "flowed":
        text = unflow(text, delsp=part.params.get("delsp", "").lower() == "yes")
    return text


def unflow(text: str, *, delsp: bool) -> str:
    """Undo RFC 3676 format=flowed: join soft-broken lines, keep quote depth."""
    out: list[str] = []
    paragraph = ""
    paragraph_depth: int | None = None
    for line in text.split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        content = line[depth:]
        if depth and content.startswith(" "):
            # Space-stuffing is undone on quoted lines only: senders that forget to
            # stuff would otherwise lose a one-space indent, which marks a comment line
            # in `multiple` mails; an extra leading space harms nothing.
            content = content[1:]
        if paragraph_depth is not None and depth != paragraph_depth:
            out.append(_quoted(paragraph, paragraph_depth))
            paragraph, paragraph_depth = "", None
        soft = content.endswith(" ") and content != "-- "
        if soft and delsp:
            content = content[:-1]
        paragraph += content
        paragraph_depth = depth
        if not soft:
            out.append(_quoted(paragraph, depth))
            paragraph, paragraph_depth = "", None
    if paragraph_depth is not None:
        out.append(_quoted(paragraph, paragraph_depth))
    return "\n".join(out)


def _quoted(content: str, depth: int) -> str:
    if not depth:
        return content
    return ">" * depth + (" " + content if content else "")


def body_text(parts: Structure) -> str:
    """The plain-text body: first inline text/plain with content, else HTML as text."""
    html_part: Part | None = None
    blank_plain: str | None = None
    for part in parts.leaves:
        if part.attachment:
            continue
        if part.kind == "text/plain":
            text = _decoded(part)
            if text.strip():
                return text
            blank_plain = text if blank_plain is None else blank_plain
        elif part.kind == "text/html" and html_part is None:
            html_part = part
    if html_part is not None:
        return html_to_text(_decoded(html_part))
    return blank_plain or ""
