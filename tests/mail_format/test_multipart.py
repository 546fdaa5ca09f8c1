"""The sender's fast path (pbm.mail.multipart) writes the HTML alternative byte for byte
as the `email` package writes the same mail with `policy.SMTP`: the package, driven as
`with_html` drove it before the fast path, is the oracle here, over odd subjects, bodies,
Message-IDs and pictures."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from email import message_from_bytes, policy
from email.message import EmailMessage

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbm.mail.compose import InlinePicture, _content_id, compose, html_page, with_html
from pbm.mail.headers import HEADER_CLASSES
from pbm.mail.multipart import TextMail

WHEN = datetime(2026, 11, 22, 4, 12, 40, tzinfo=UTC)
SMTP = policy.SMTP.clone(header_factory=HEADER_CLASSES)  # the policy compose writes with


def by_the_email_package(raw: bytes, pictures: list[InlinePicture]) -> bytes:
    """The HTML alternative written by the `email` package alone."""
    msg = message_from_bytes(raw, policy=SMTP)
    assert isinstance(msg, EmailMessage)
    text = str(msg.get_content()).replace("\r\n", "\n")
    message_id = str(msg["Message-ID"] or "")
    cids = [_content_id(i, message_id) for i in range(len(pictures))]
    part = EmailMessage(policy=SMTP)
    page = html_page(str(msg["Subject"] or ""), text, list(zip(cids, pictures, strict=True)))
    ascii_lines = page.isascii() and all(len(line) <= 998 for line in page.split("\n"))
    if ascii_lines:
        part.set_content(page, subtype="html", charset="us-ascii", cte="7bit")
    else:
        part.set_content(page, subtype="html", charset="utf-8", cte="quoted-printable")
    for number, (cid, picture) in enumerate(zip(cids, pictures, strict=True), 1):
        part.add_related(
            picture.png,
            maintype="image",
            subtype="png",
            cid=f"<{cid}>",
            disposition="inline",
            filename=f"board{number}.png",
        )
    msg.make_alternative()
    msg.attach(part)
    seed = hashlib.sha256()
    items: list[str | bytes] = [message_id, text, page, *(p.png for p in pictures)]
    for item in items:
        data = item.encode("utf-8", "surrogateescape") if isinstance(item, str) else item
        seed.update(len(data).to_bytes(8, "big") + data)
    for number, each in enumerate(p for p in msg.walk() if p.is_multipart()):
        digest = seed.copy()
        digest.update(f"part {number}".encode())
        each.set_boundary(f"=_pbm{number}_{digest.hexdigest()[:32]}")
    for each in msg.walk():
        if each is not msg:
            del each["MIME-Version"]
    return msg.as_bytes()


def same_mail(raw: bytes, pictures: list[InlinePicture]) -> None:
    """`with_html` writes what the package writes, but for one thing: the package folds
    some headers again (an empty Subject gets a space, a leading space goes), where the
    fast path keeps every header as composed."""
    fast = with_html(raw, pictures)
    head, _, body = fast.partition(b"\r\n\r\n")
    oracle_head, _, oracle_body = by_the_email_package(raw, pictures).partition(b"\r\n\r\n")
    assert body == oracle_body
    composed_head = raw.partition(b"\r\n\r\n")[0]
    kept = [f for f in fields(composed_head) if not f.lower().startswith(b"content-")]
    content = [f for f in fields(oracle_head) if f.lower().startswith(b"content-")]
    assert fields(head) == kept + content


def fields(head: bytes) -> list[bytes]:
    """The header fields of a header block, each with its folded lines."""
    return re.split(rb"\r\n(?![ \t])", head)


def composed(
    subject: str, body: str, message_id: str = "<pbm.k3q9z7m2p4x8.1@example.org>"
) -> bytes:
    return compose(
        sender="PBeM Server <pbm@example.org>",
        to=["bob@example.net", "Jörg Müller <jorg@example.net>"],
        subject=subject,
        body=body,
        message_id=message_id,
        in_reply_to="<x@example.net>",
        references=["<pbm-board-1@example.org>", "<x@example.net>"],
        date=WHEN,
    )


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 9
PICTURE = InlinePicture(PNG, 20, 10, "Quarto Board 101", ("a1: TDQF", "b1: empty"))


@pytest.mark.parametrize(
    ("subject", "body"),
    [
        ("Quarto Board 101 bob", "    a    b\n 1 TDQF .   1\n"),
        ("Quarto Board 101 bob: " + "a long subject that folds " * 4, "x\n" * 3),
        ("Schach für Jörg ♞ " * 5, "café " * 300 + "\n\ttab\n trailing space \n"),
        ("=?utf-8?q?not_encoded?= as typed", "=3D and = signs\n" + "a" * 1200 + "\n"),
        ("", "no subject\n\n\nblank lines\n"),
        ("emoji 😀", "😀 " * 50),
    ],
)
@pytest.mark.parametrize("count", [0, 1, 3])
def test_the_same_bytes_as_the_email_package(subject: str, body: str, count: int) -> None:
    pictures = [PICTURE, InlinePicture(PNG[:5], 1, 1, "tiny"), InlinePicture(b"", 1, 1, "")]
    raw = composed(subject, body)
    same_mail(raw, pictures[:count])
    if subject.strip():  # compose wrote the headers as the package folds them
        assert with_html(raw, pictures[:count]) == by_the_email_package(raw, pictures[:count])


def test_a_long_host_folds_the_content_id_as_the_package_does() -> None:
    raw = composed("s", "x\n", message_id="<pbm.1@" + "very-long-host." * 6 + "example.org>")
    same_mail(raw, [PICTURE])


@settings(max_examples=60, deadline=None)
@given(
    subject=st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=120),
    body=st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=400),
    count=st.integers(0, 2),
)
def test_any_text_gives_the_same_bytes(subject: str, body: str, count: int) -> None:
    raw = composed(subject, "board\n" + body)
    same_mail(raw, [PICTURE] * count)


def test_a_mail_not_written_by_compose_is_refused() -> None:
    with pytest.raises(ValueError, match="not a text mail compose wrote"):
        TextMail.read(b"Subject: x\r\nContent-Type: text/html\r\n\r\n<p>x</p>\r\n")
    with pytest.raises(ValueError, match="no end of the headers"):
        TextMail.read(b"Subject: x\r\n")
