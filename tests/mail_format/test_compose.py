"""compose: headers, encodings, quoting, and the round trip through parse_message."""

from __future__ import annotations

import importlib
import re
from datetime import UTC, datetime, timedelta, timezone
from email import message_from_bytes, policy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbm.mail.addressing import message_id_for, reply_address, tokens_in
from pbm.mail.compose import compose
from pbm.mail.inbound import parse_message
from pbm.mail.visible import visible

TOKEN = "k3q9z7m2p4x8"
SERVER = "pbm@example.org"
WHEN = datetime(2026, 11, 22, 4, 12, 40, tzinfo=UTC)
BOARD = (
    "Summary of Quadrature Board 101\n\nIt is bob's turn.\n\n"
    "     a b c d e f g h i j k\n"
    "11  . . . . , , , . . . .  11\n"
    " 6  , , , , . o . , , , ,   6\n"
    "     a b c d e f g h i j k\n"
)


def board_mail(**overrides: object) -> bytes:
    arguments: dict[str, object] = {
        "sender": "Richard's PBeM Server <pbm@example.org>",
        "to": ["bob@example.net"],
        "subject": "Quadrature Board 101 bob **",
        "body": BOARD,
        "message_id": message_id_for(TOKEN, "example.org"),
        "in_reply_to": "<0b8e1f2a@example.net>",
        "references": ["<first@example.org>", "<0b8e1f2a@example.net>"],
        "reply_to": reply_address(SERVER, TOKEN),
        "date": WHEN,
    }
    arguments.update(overrides)
    return compose(**arguments)  # type: ignore[arg-type]


def header_block(raw: bytes) -> str:
    return raw.split(b"\r\n\r\n", 1)[0].decode("ascii")


def test_headers_and_crlf() -> None:
    raw = board_mail()
    head = header_block(raw)
    assert "\nAuto-Submitted: auto-replied\r" in head
    assert "\nX-Auto-Response-Suppress: All\r" in head
    assert f"\nReply-To: pbm+{TOKEN}@example.org\r" in head
    assert "\nDate: Sun, 22 Nov 2026 04:12:40 +0000\r" in head
    assert "Precedence" not in head
    assert b"\n" not in raw.replace(b"\r\n", b"")  # no bare LF anywhere
    assert raw.endswith(b"\r\n")


def test_ascii_board_is_7bit_and_byte_exact() -> None:
    raw = board_mail()
    assert b"Content-Transfer-Encoding: 7bit" in raw
    body = raw.split(b"\r\n\r\n", 1)[1]
    assert body == BOARD.replace("\n", "\r\n").encode("ascii")


def test_long_ascii_lines_are_not_folded_or_encoded() -> None:
    line = "alice writes: " + "a long comment without any break " * 6  # ~210 columns
    raw = board_mail(body=BOARD + line + "\n")
    assert b"Content-Transfer-Encoding: 7bit" in raw
    assert line.encode() + b"\r\n" in raw


def test_non_ascii_body_is_quoted_printable_utf8_and_subject_rfc2047() -> None:
    raw = board_mail(subject="Quadrature Board 101 jörg", body=BOARD + "jörg writes:\nGrüße!\n")
    head = header_block(raw)
    assert "Content-Transfer-Encoding: quoted-printable" in raw.decode("ascii")
    assert 'charset="utf-8"' in head
    assert "=?utf-8?" in head
    assert raw.isascii()
    mail = parse_message(raw)
    assert mail.subject == "Quadrature Board 101 jörg"
    assert mail.text == BOARD + "jörg writes:\nGrüße!\n"


def test_lines_over_998_octets_are_wrapped_by_quoted_printable() -> None:
    body = "x" * 3000 + "\n"
    raw = board_mail(body=body)
    assert max(len(line) for line in raw.split(b"\r\n")) <= 998
    assert parse_message(raw).text == body


def test_quote_appends_the_original_quoted() -> None:
    original = "From: alice@example.com\nSubject: lyngk move 105 alice secret e1-e2\n\nhi\n"
    raw = board_mail(body="It is not your move\n\nOriginal message follows:\n", quote=original)
    text = parse_message(raw).text
    assert text.endswith(
        "Original message follows:\n\n"
        "> From: alice@example.com\n"
        "> Subject: lyngk move 105 alice secret e1-e2\n"
        ">\n"
        "> hi\n"
    )
    assert parse_message(raw).fresh_text == "It is not your move\n\nOriginal message follows:"


def test_header_values_cannot_inject_headers() -> None:
    raw = board_mail(subject="hi\r\nBcc: victim@example.com", to=["bob@example.net\nBcc: x@y"])
    head = header_block(raw)
    assert "\nBcc:" not in head
    assert parse_message(raw).subject == "hi Bcc: victim@example.com"


def test_naive_date_is_taken_as_utc_and_other_zones_kept() -> None:
    assert "Date: Sun, 22 Nov 2026 04:12:40 +0000" in header_block(
        board_mail(date=datetime(2026, 11, 22, 4, 12, 40))
    )
    zone = timezone(timedelta(hours=-5))
    assert "Date: Sat, 21 Nov 2026 23:12:40 -0500" in header_block(
        board_mail(date=WHEN.astimezone(zone))
    )


def test_round_trip_sender_subject_body_threading() -> None:
    message_id = message_id_for(TOKEN, "example.org")
    raw = board_mail(message_id=message_id)
    mail = parse_message(raw)
    assert mail.sender == "pbm@example.org"
    assert mail.sender_name == "Richard's PBeM Server"
    assert mail.subject == "Quadrature Board 101 bob **"
    assert mail.text == BOARD
    assert mail.message_id == message_id
    assert mail.in_reply_to == ("<0b8e1f2a@example.net>",)
    assert mail.references == ("<first@example.org>", "<0b8e1f2a@example.net>")
    assert mail.reply_to == f"pbm+{TOKEN}@example.org"
    assert mail.recipients == ("bob@example.net",)
    assert mail.date == WHEN
    assert mail.robot == "Auto-Submitted: auto-replied"  # our own mail is never answered


def test_a_reply_to_our_mail_carries_the_token_back() -> None:
    ours = parse_message(board_mail())
    answer = (
        f"From: bob@example.net\nTo: {ours.reply_to}\nSubject: Re: {ours.subject}\n"
        f"In-Reply-To: {ours.message_id}\nReferences: {' '.join(ours.references)} "
        f"{ours.message_id}\n\ng7-g6\n\nOn Sun, pbm wrote:\n"
        + "".join(f"> {line}\n" for line in BOARD.splitlines())
    ).encode()
    mail = parse_message(answer)
    assert [f.token for f in tokens_in(mail, SERVER)] == [TOKEN]
    assert mail.fresh_text == "g7-g6"


def test_many_references_fold_within_limits() -> None:
    refs = [f"<pbm.{TOKEN}.{n:020x}@example.org>" for n in range(60)]
    raw = board_mail(references=refs)
    assert max(len(line) for line in raw.split(b"\r\n")) <= 998
    assert parse_message(raw).references == tuple(refs)


def test_email_package_reads_it_without_defects() -> None:
    msg = message_from_bytes(board_mail(body="é\n"), policy=policy.default)
    assert not msg.defects
    assert msg.get_content().replace("\r\n", "\n") == "é\n"


text_strategy = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
    max_size=400,
)
long_lines = st.lists(st.text(alphabet="ab .,-|", min_size=0, max_size=1500), max_size=4)


@settings(max_examples=150, deadline=None)
@given(subject=text_strategy, body=text_strategy, extra=long_lines, quote=st.none() | text_strategy)
def test_composing_never_exceeds_998_octets_and_round_trips(
    subject: str, body: str, extra: list[str], quote: str | None
) -> None:
    full_body = body + "\n" + "\n".join(extra)
    raw = board_mail(subject=subject, body=full_body, quote=quote)
    assert max(len(line) for line in raw.split(b"\r\n")) <= 998
    mail = parse_message(raw)
    shown_subject = re.sub(r"[\x00-\x1f\x7f-\x9f]", "\ufffd", " ".join(subject.split()))
    assert mail.subject == visible(shown_subject)
    assert mail.sender == "pbm@example.org"
    assert mail.in_reply_to == ("<0b8e1f2a@example.net>",)
    # Controls and bidi characters are dropped (pbm.mail.visible); the rest comes back.
    expected = visible(full_body)
    if quote is None:
        assert mail.text.rstrip("\n") == expected.rstrip("\n")
    else:
        assert mail.text.startswith(expected.rstrip("\n"))


def test_display_names_are_quoted_or_encoded_as_needed() -> None:
    raw = board_mail(
        sender="Server, PBeM <pbm@example.org>",
        to=["Bob, B. <bob@example.net>", "Jörg Schmücker <jorg@example.de>", "carol@example.com"],
    )
    head = header_block(raw)
    assert 'From: "Server, PBeM" <pbm@example.org>' in head
    mail = parse_message(raw)
    assert (mail.sender_name, mail.sender) == ("Server, PBeM", "pbm@example.org")
    assert mail.recipients == ("bob@example.net", "jorg@example.de", "carol@example.com")


@pytest.mark.parametrize(
    "name", ["Jörg, Bob", 'Jörg "the" Bob', "Jörg <x@evil.example>", "Server, PBeM", "a\\b"]
)
def test_display_names_with_specials_stay_one_name(name: str) -> None:
    raw = board_mail(
        sender=f"{name} <pbm@example.org>", to=[f"{name} <bob@example.net>", "carol@example.com"]
    )
    msg = message_from_bytes(raw, policy=policy.default)
    read = [(a.display_name, a.addr_spec) for a in msg["From"].addresses + msg["To"].addresses]
    assert read == [
        (name, "pbm@example.org"),
        (name, "bob@example.net"),
        ("", "carol@example.com"),
    ]
    if "@" not in name:  # mailbox.py refuses a name that decodes to an address
        assert (parse_message(raw).sender_name, parse_message(raw).sender) == (
            name,
            "pbm@example.org",
        )


DOCUMENTED_BOARD_MAIL = (
    "From: Richard's PBeM Server <pbm@example.org>\r\n"
    "To: bob@example.net\r\n"
    "Subject: Quadrature Board 101 bob **\r\n"
    "Date: Sun, 22 Nov 2026 04:12:40 +0000\r\n"
    "Message-ID: <pbm.k3q9z7m2p4x8.3f9a0c2e7b5d1e4f6a8c@example.org>\r\n"
    "In-Reply-To: <0b8e1f2a-93c4-4f61-8d0e-6a7c5b4d3e21@example.net>\r\n"
    "References:\r\n"
    " <pbm-board-17@example.org> <0b8e1f2a-93c4-4f61-8d0e-6a7c5b4d3e21@example.net>\r\n"
    "Reply-To: pbm+k3q9z7m2p4x8@example.org\r\n"
    "Auto-Submitted: auto-replied\r\n"
    "X-Auto-Response-Suppress: All\r\n"
    'Content-Type: text/plain; charset="us-ascii"\r\n'
    "Content-Transfer-Encoding: 7bit\r\n"
    "MIME-Version: 1.0\r\n"
    "\r\n"
)


def test_a_usual_board_mail_is_the_documented_bytes() -> None:
    # The example in docs/mail-format.md, "What pbm's mails look like".
    raw = board_mail(
        message_id="<pbm.k3q9z7m2p4x8.3f9a0c2e7b5d1e4f6a8c@example.org>",
        in_reply_to="<0b8e1f2a-93c4-4f61-8d0e-6a7c5b4d3e21@example.net>",
        references=[
            "<pbm-board-17@example.org>",
            "<0b8e1f2a-93c4-4f61-8d0e-6a7c5b4d3e21@example.net>",
        ],
    )
    assert raw == (DOCUMENTED_BOARD_MAIL + BOARD.replace("\n", "\r\n")).encode("ascii")


ascii_words = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), max_size=30)
ascii_subjects = st.lists(ascii_words, max_size=20).map(" ".join)
message_ids = st.builds(
    lambda local, host: f"<{local}@{host}.example>",
    st.text("abcdef0123456789.-_+", min_size=1, max_size=60),
    st.text("abcdefxyz", min_size=1, max_size=12),
)
# (mailbox as the caller writes it, the address, the display name a reader must find)
mailboxes = st.one_of(
    st.sampled_from(
        [
            ("bob@example.net", "bob@example.net", ""),
            ("<bob@example.net>", "bob@example.net", ""),
            ("Bob Beispiel <bob@example.net>", "bob@example.net", "Bob Beispiel"),
            ("Richard's PBeM Server <pbm@example.org>", "pbm@example.org", "Richard's PBeM Server"),
            ("Frank Q. Sample <frank@corp.example>", "frank@corp.example", "Frank Q. Sample"),
            ("Sample, Frank <frank@corp.example>", "frank@corp.example", "Sample, Frank"),
            ('"Quoted Name" <q@example.org>', "q@example.org", "Quoted Name"),
        ]
    ),
    st.builds(
        lambda name: (f"{name} <x@example.org>", "x@example.org", name),
        ascii_words.filter(lambda name: '"' not in name and "=?" not in name),
    ),
)
bodies = st.one_of(
    st.text(alphabet=st.characters(max_codepoint=126), max_size=300),
    st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=300),
    st.lists(st.text("ab é", max_size=120), max_size=5).map("\n".join),
)


@settings(max_examples=300, deadline=None)
@given(
    subject=ascii_subjects,
    references=st.lists(message_ids, max_size=12),
    sender=mailboxes,
    to=st.lists(mailboxes, min_size=1, max_size=3),
    body=bodies,
)
def test_headers_are_folded_and_read_back_unchanged(
    subject: str,
    references: list[str],
    sender: tuple[str, str, str],
    to: list[tuple[str, str, str]],
    body: str,
) -> None:
    raw = board_mail(
        sender=sender[0], to=[m[0] for m in to], subject=subject, references=references, body=body
    )
    for line in raw.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        # Folded near RFC 5322's 78 columns (its SHOULD; 998 is the MUST): the email
        # package cannot fold a single long word, and may run a column or two over
        # with the comma that ends a line of an address list.
        assert len(line) <= 80 or len(line.split()) <= 2, line
    msg = message_from_bytes(raw, policy=policy.default)
    assert not msg.defects
    assert all(not msg[name].defects for name in msg)
    # The email package may fold right after "Subject:"; unfolded, the words are the same.
    assert str(msg["Subject"]).split() == subject.split()
    assert str(msg.get("References", "")).split() == references
    read = [(a.addr_spec, a.display_name) for a in msg["From"].addresses + msg["To"].addresses]
    assert read == [(address, name) for _, address, name in [sender, *to]]
    expected = visible(body)  # without controls and bidi characters
    assert msg.get_content().replace("\r\n", "\n").rstrip("\n") == expected.rstrip("\n")


@settings(max_examples=150, deadline=None)
@given(
    subject=text_strategy,
    references=st.lists(message_ids, max_size=12),
    to=st.lists(mailboxes, min_size=1, max_size=3),
    body=bodies,
)
def test_header_classes_built_once_write_the_bytes_of_the_stock_smtp_policy(
    subject: str, references: list[str], to: list[tuple[str, str, str]], body: str
) -> None:
    arguments = {
        "subject": subject,
        "references": references,
        "to": [m[0] for m in to],
        "body": body,
        "message_id": "<pbm.k3q9z7m2p4x8.3f9a0c2e7b5d1e4f6a8c@example.org>",
    }
    ours = board_mail(**arguments)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(importlib.import_module("pbm.mail.compose"), "_POLICY", policy.SMTP)
        stock = board_mail(**arguments)
    assert ours == stock


def test_control_characters_never_reach_a_header() -> None:
    raw = compose(
        sender="PBeM Server <pbm@example.org>",
        to=["carol@example.org"],
        subject="Quarto Board 101 \x00carol \x1b[31m\x7f",
        body="x\n",
        message_id="<pbm.1@example.org>",
        date=datetime(2026, 11, 22, tzinfo=UTC),
    )
    head = raw.split(b"\r\n\r\n", 1)[0]
    assert not any((b < 32 and b not in (9, 10, 13)) or b == 127 for b in head)
    subject = str(message_from_bytes(raw, policy=policy.default)["Subject"])
    assert subject == "Quarto Board 101 \ufffdcarol \ufffd[31m\ufffd"
