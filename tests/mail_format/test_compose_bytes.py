"""compose writes a text mail from bytes (pbm.mail.multipart.header, text_mail) byte for
byte as the `email` package writes it with `policy.SMTP`: the package, driven as
compose drove it before, is the oracle, over odd subjects, addresses, Message-IDs,
references, stream headers and bodies."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta, timezone
from email.message import EmailMessage

from hypothesis import event, given, settings
from hypothesis import strategies as st

from pbm.mail.compose import _body_with_quote, _mailbox, _one_line, compose
from pbm.mail.multipart import header
from pbm.mail.streams import MailReason, StreamHeaders
from tests.mail_format.test_multipart import SMTP

WHEN = datetime(2026, 11, 22, 4, 12, 40, tzinfo=UTC)


def by_the_email_package(
    *,
    sender: str,
    to: Sequence[str],
    subject: str,
    body: str,
    message_id: str,
    in_reply_to: str | None,
    references: Sequence[str],
    reply_to: str | None,
    date: datetime,
    quote: str | None,
    stream: StreamHeaders | None,
) -> bytes:
    msg = EmailMessage(policy=SMTP)
    msg["From"] = _mailbox(sender)
    msg["To"] = ", ".join(_mailbox(address) for address in to)
    msg["Subject"] = _one_line(subject)
    msg["Date"] = date
    msg["Message-ID"] = _one_line(message_id)
    if in_reply_to:
        msg["In-Reply-To"] = _one_line(in_reply_to)
    if references:
        msg["References"] = " ".join(_one_line(ref) for ref in references)
    if reply_to:
        msg["Reply-To"] = _mailbox(reply_to)
    msg["Auto-Submitted"] = "auto-replied"
    msg["X-Auto-Response-Suppress"] = "All"
    if stream is not None:
        if stream.list_id:
            msg["List-Id"] = _one_line(stream.list_id)
        stops = [f"<{_one_line(stream.unsubscribe_url)}>"] if stream.unsubscribe_url else []
        if stream.unsubscribe:
            stops.append(f"<mailto:{_one_line(stream.unsubscribe)}>")
        if stops:
            msg["List-Unsubscribe"] = ", ".join(stops)
        if stream.unsubscribe_url:
            msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
        if stream.archive_url:
            msg["List-Archive"] = f"<{_one_line(stream.archive_url)}>"
            msg["Archived-At"] = f"<{_one_line(stream.archive_url)}>"
        msg["X-PBM-Reason"] = stream.reason.value
        msg["Feedback-ID"] = _one_line(stream.feedback_id)
    text = _body_with_quote(body, quote)
    ascii_lines = text.isascii() and all(len(line) <= 998 for line in text.split("\n"))
    if ascii_lines:
        msg.set_content(text, subtype="plain", charset="us-ascii", cte="7bit")
    else:
        msg.set_content(text, subtype="plain", charset="utf-8", cte="quoted-printable")
    return msg.as_bytes()


# Header text from the characters that change how the package writes it: RFC 2047
# markers, specials of addresses, quotes, non-ASCII, controls, long runs.
_TEXT = st.text(
    alphabet=st.sampled_from(list("abcXYZ019 .,:;<>@\"'()[]\\=?_-+é€\u202e\t\x07")), max_size=90
)
_LOCAL = st.from_regex(r"[a-z0-9!#$%&'*+/=?^_`{|}~.-]{1,20}", fullmatch=True)
_DOMAIN = st.from_regex(r"[a-z0-9-]{1,15}(\.[a-z0-9-]{1,15}){0,3}", fullmatch=True)
_BARE = st.builds(lambda local, domain: f"{local}@{domain}", _LOCAL, _DOMAIN)
_ADDRESS = st.one_of(
    _BARE,
    st.builds(lambda name, addr: f"{name} <{addr}>", _TEXT, _BARE),
    _TEXT,
)
_MSG_ID = st.one_of(st.builds(lambda addr: f"<{addr}>", _BARE), _TEXT)
_STREAM = st.one_of(
    st.none(),
    st.builds(
        StreamHeaders,
        reason=st.sampled_from(list(MailReason)),
        feedback_id=_TEXT,
        list_id=st.one_of(st.none(), _TEXT),
        unsubscribe=st.one_of(st.none(), _BARE, _TEXT),
        unsubscribe_url=st.one_of(st.none(), _TEXT),
        archive_url=st.one_of(st.none(), _TEXT),
    ),
)
_BODY = st.one_of(
    st.text(max_size=300),
    st.text(alphabet=st.sampled_from(list("ab \n.=")), max_size=2500),
)


@settings(max_examples=400, deadline=None)
@given(
    sender=_ADDRESS,
    to=st.lists(_ADDRESS, min_size=1, max_size=3),
    subject=st.one_of(_TEXT, st.text(max_size=200)),
    body=_BODY,
    message_id=_MSG_ID,
    in_reply_to=st.one_of(st.none(), _MSG_ID),
    references=st.lists(_MSG_ID, max_size=4),
    reply_to=st.one_of(st.none(), _ADDRESS),
    offset=st.integers(min_value=-12 * 60, max_value=14 * 60),
    quote=st.one_of(st.none(), st.text(max_size=200)),
    stream=_STREAM,
)
def test_the_same_bytes_as_the_email_package(
    sender: str,
    to: list[str],
    subject: str,
    body: str,
    message_id: str,
    in_reply_to: str | None,
    references: list[str],
    reply_to: str | None,
    offset: int,
    quote: str | None,
    stream: StreamHeaders | None,
) -> None:
    date = WHEN.astimezone(timezone(timedelta(minutes=offset)))
    given_ = dict(
        sender=sender,
        to=to,
        subject=subject,
        body=body,
        message_id=message_id,
        in_reply_to=in_reply_to,
        references=references,
        reply_to=reply_to,
        date=date,
        quote=quote,
        stream=stream,
    )
    written = outcome(compose, given_)
    event("written" if isinstance(written, bytes) else "refused")
    assert written == outcome(by_the_email_package, given_)


def outcome(write: Callable[..., bytes], given_: Mapping[str, object]) -> bytes | str:
    """The bytes written, or "refused" where the package's header parser gives up on
    garbage (a lone "<" as a Message-ID): then both must (each may meet another of
    the bad headers first, so the exceptions may differ)."""
    try:
        return write(**given_)
    except Exception:
        return "refused"


def test_a_typical_board_mail_is_written_without_the_header_classes() -> None:
    """The fast path is taken where it matters: the usual headers of a board mail."""
    assert header("To", "alice@example.org, bob@example.org") == (
        b"To: alice@example.org, bob@example.org\r\n"
    )
    assert (
        header("Message-ID", "<pbm.42.7@example.org>") == b"Message-ID: <pbm.42.7@example.org>\r\n"
    )


def test_a_header_the_package_rewrites_goes_through_its_classes() -> None:
    assert header("To", "Jörg <j@example.org>") == b"To: =?utf-8?q?J=C3=B6rg?= <j@example.org>\r\n"
    assert header("Subject", "=?utf-8?q?x?=") == b"Subject: x\r\n"
    assert header("To", '"a b"@example.org') == b'To: "a b"@example.org\r\n'
