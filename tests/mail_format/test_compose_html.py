"""The HTML alternative `with_html` adds to a mail `compose` wrote: the MIME structure,
escaping, pictures by cid:, nothing remote, the same bytes for the same mail, and the
text part and the headers exactly as composed."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from email import message_from_bytes, policy
from email.message import EmailMessage

from hypothesis import given, settings
from hypothesis import strategies as st

from pbm.mail.compose import InlinePicture, compose, with_html
from pbm.mail.inbound import parse_message
from pbm.mail.visible import visible

WHEN = datetime(2026, 11, 22, 4, 12, 40, tzinfo=UTC)
BOARD = "Summary of Quarto Board 101\n\n    a    b\n 1 TDQF .   1\n"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
PICTURE = InlinePicture(PNG, 20, 10, 'Quarto "board" <101>', ("a1: TDQF", "b1: empty & <free>"))
REMOTE = re.compile(r"(https?:|ftp:|//[a-z0-9]|<link\b|@import|url\(|<script\b)", re.I)


def mail(
    *, html: bool = True, pictures: list[InlinePicture] | None = None, **overrides: object
) -> EmailMessage:
    arguments: dict[str, object] = {
        "sender": "PBeM Server <pbm@example.org>",
        "to": ["bob@example.net"],
        "subject": "Quarto Board 101 bob",
        "body": BOARD,
        "message_id": "<pbm.k3q9z7m2p4x8.1@example.org>",
        "date": WHEN,
    }
    arguments.update(overrides)
    raw = compose(**arguments)  # type: ignore[arg-type]
    if html:
        raw = with_html(raw, pictures or [])
    msg = message_from_bytes(raw, policy=policy.default)
    assert isinstance(msg, EmailMessage)
    assert not msg.defects
    return msg


def html_of(msg: EmailMessage) -> str:
    part = msg.get_body(("html",))
    assert part is not None
    return str(part.get_content()).replace("\r\n", "\n")


def test_every_mail_is_alternative_text_first() -> None:
    msg = mail()
    assert msg.get_content_type() == "multipart/alternative"
    assert [p.get_content_type() for p in msg.iter_parts()] == ["text/plain", "text/html"]
    text = msg.get_body(("plain",))
    assert text is not None and text.get_content().replace("\r\n", "\n") == BOARD
    assert "\n<pre " in html_of(msg)
    assert "    a    b\n 1 TDQF .   1</pre>" in html_of(msg)


def test_a_board_picture_is_related_and_named_by_cid() -> None:
    msg = mail(pictures=[PICTURE])
    _text, related = msg.iter_parts()
    assert related.get_content_type() == "multipart/related"
    html_part, image = related.iter_parts()
    assert html_part.get_content_type() == "text/html"
    assert image.get_content_type() == "image/png"
    assert image.get_content_disposition() == "inline"
    assert image.get_content() == PNG
    cid = str(image["Content-ID"]).strip()
    assert cid.startswith("<board1.") and cid.endswith("@example.org>")
    html = html_of(msg)
    assert f'<img src="cid:{cid[1:-1]}" width="20" height="10"' in html
    # alt and words escaped, the words in a list shown after the picture (issue 26).
    assert 'alt="Quarto &quot;board&quot; &lt;101&gt;"' in html
    assert "<li>b1: empty &amp; &lt;free&gt;</li>" in html
    assert "clip:rect(0,0,0,0)" not in html and "position:absolute" not in html
    assert html.index("<img") < html.index('<ul class="words"') < html.index("<pre")


def test_several_pictures_keep_their_order() -> None:
    second = InlinePicture(PNG + b"x", 30, 15, "Quad Board 7", ())
    msg = mail(pictures=[PICTURE, second])
    images = [p for p in msg.walk() if p.get_content_type() == "image/png"]
    assert [i.get_content() for i in images] == [PNG, PNG + b"x"]
    cids = [str(i["Content-ID"]).strip()[1:-1] for i in images]
    assert len(set(cids)) == 2
    html = html_of(msg)
    assert html.index(cids[0]) < html.index(cids[1])


def test_text_alone_is_the_single_part_of_old() -> None:
    msg = mail(html=False, pictures=[PICTURE])
    assert msg.get_content_type() == "text/plain"
    assert not msg.is_multipart()


def test_the_headers_and_the_text_part_stay_byte_for_byte() -> None:
    arguments = {
        "sender": "PBeM Server <pbm@example.org>",
        "to": ["bob@example.net"],
        "subject": "Quarto Board 101 bob: " + "a long subject that folds " * 4,
        "body": BOARD + "caf\u00e9 " * 200 + "\n",  # UTF-8, quoted-printable, long lines
        "message_id": "<pbm.k3q9z7m2p4x8.1@example.org>",
        "in_reply_to": "<x@example.net>",
        "references": ["<pbm-board-1@example.org>", "<x@example.net>"],
        "reply_to": "pbm+k3q9z7m2p4x8.1@example.org",
        "date": WHEN,
    }
    text_only = compose(**arguments)  # type: ignore[arg-type]
    both = with_html(text_only, [PICTURE])
    head, _, body = text_only.partition(b"\r\n\r\n")
    content = [h for h in fields(head) if h.lower().startswith(b"content-")]
    kept = [h for h in fields(head) if not h.lower().startswith(b"content-")]
    new_head, _, new_body = both.partition(b"\r\n\r\n")
    # Every header but the Content-* ones is as composed (folded lines too), in order;
    # those moved to the text part, which holds the composed body unchanged.
    assert [h for h in fields(new_head) if not h.lower().startswith(b"content-")] == kept
    assert any(h.startswith(b"Subject: ") and b"\r\n " in h for h in kept)  # one folded
    assert b"\r\n".join(content) + b"\r\n\r\n" + body.rstrip(b"\r\n") in new_body


def fields(head: bytes) -> list[bytes]:
    """The header fields of a header block, each with its folded lines."""
    return re.split(rb"\r\n(?![ \t])", head)


def test_markup_in_the_text_is_text() -> None:
    body = "alice writes:\n<script>alert(1)</script> & <img src=http://x/y.png>\n"
    html = html_of(mail(body=body, subject="<b>hi</b>"))
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;img src=http://x/y.png&gt;" in html
    assert "<title>&lt;b&gt;hi&lt;/b&gt;</title>" in html


def test_the_same_mail_is_the_same_bytes() -> None:
    first = mail(pictures=[PICTURE]).as_bytes()
    assert first == mail(pictures=[PICTURE]).as_bytes()
    assert first != mail(pictures=[PICTURE], body=BOARD + "x\n").as_bytes()


@settings(max_examples=50, deadline=None)
@given(
    body=st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=300),
    words=st.lists(st.text(max_size=40), max_size=4),
)
def test_no_remote_resource_and_the_text_reads_back(body: str, words: list[str]) -> None:
    body = "board\n" + body  # a reply always has words (an empty text part reads the HTML)
    picture = InlinePicture(PNG, 20, 10, "alt", tuple(words))
    raw = with_html(
        compose(
            sender="pbm@example.org",
            to=["bob@example.net"],
            subject="s",
            body=body,
            message_id="<pbm.1@example.org>",
            date=WHEN,
        ),
        [picture],
    )
    assert max(len(line) for line in raw.split(b"\r\n")) <= 998
    msg = message_from_bytes(raw, policy=policy.default)
    assert isinstance(msg, EmailMessage)
    # The template loads nothing; the text and words are escaped, so whatever a player
    # wrote cannot add a tag (a "http:" inside the escaped text is harmless).
    template_only = re.sub(r"<pre[^>]*>.*</pre>|<li>.*?</li>", "", html_of(msg), flags=re.S)
    assert not REMOTE.search(template_only)
    assert html_of(msg).count("<li>") == len(words)
    expected = visible(body)  # without controls and bidi characters
    assert parse_message(raw).text.rstrip("\n") == expected.rstrip("\n")
