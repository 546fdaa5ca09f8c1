"""parse_message never raises, whatever the bytes, and returns clean text."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbm.mail.addressing import tokens_in
from pbm.mail.inbound import InboundMail, first_command_line, parse_message

DATA = Path(__file__).resolve().parent.parent / "data" / "mail"
FIXTURES = sorted(path.read_bytes() for path in DATA.rglob("*.eml"))  # attacks/ too


def assert_well_formed(mail: InboundMail) -> None:
    for value in (mail.sender, mail.sender_name, mail.subject, mail.command_subject):
        value.encode("utf-8")
        assert "\n" not in value and "\r" not in value
    for value in (mail.text, mail.fresh_text):
        value.encode("utf-8")
        assert "\r" not in value
    assert mail.sender == mail.sender.lower()
    assert mail.sender == "" or "@" in mail.sender
    for address in (mail.sender, *mail.recipients, mail.reply_to or ""):
        assert not any(unicodedata.category(c) in ("Cc", "Cf") for c in address), address
    if not mail.sender:
        assert mail.robot is not None
    tokens_in(mail, "pbm@example.org")
    first_command_line(mail)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_arbitrary_bytes(raw: bytes) -> None:
    assert_well_formed(parse_message(raw))


header_names = st.sampled_from(
    [
        "From", "To", "Cc", "Subject", "Date", "Message-ID", "In-Reply-To", "References",
        "Reply-To", "Content-Type", "Content-Transfer-Encoding", "Auto-Submitted",
        "Return-Path", "Delivered-To", "MIME-Version", "Content-Disposition",
    ]
)  # fmt: skip
header_values = st.one_of(
    st.binary(max_size=120),
    st.sampled_from(
        [
            b"", b"<>", b",,,", b"<<a@@b>>", b"=?utf-8?q?\xff?=", b"=?bogus?B?!!!?=",
            b"multipart/mixed", b"multipart/alternative; boundary=", b"text/plain; charset=",
            b"text/html; charset=utf-7", b"base64", b"quoted-printable", b"x-uuencode",
            b"\"unterminated <a@b.c>", b"a@b.c (comment", b"Sun, 99 Foo 9999 99:99:99 +9999",
            b"message/rfc822", b"multipart/report; report-type=delivery-status",
        ]
    ),
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(header_names, header_values), max_size=12),
    st.binary(max_size=600),
)
def test_hostile_headers(headers: list[tuple[str, bytes]], body: bytes) -> None:
    raw = b"".join(name.encode() + b": " + value + b"\n" for name, value in headers)
    assert_well_formed(parse_message(raw + b"\n" + body))


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(FIXTURES),
    st.lists(st.tuples(st.integers(min_value=0), st.binary(max_size=8)), min_size=1, max_size=6),
)
def test_mutated_fixtures(raw: bytes, edits: list[tuple[int, bytes]]) -> None:
    data = bytearray(raw)
    for position, replacement in edits:
        at = position % (len(data) + 1)
        data[at : at + len(replacement)] = replacement
    assert_well_formed(parse_message(bytes(data)))


@pytest.mark.parametrize("cut", [10, 100, 400, 900, 1500])
def test_truncated_fixtures(cut: int) -> None:
    for raw in FIXTURES:
        assert_well_formed(parse_message(raw[:cut]))


def test_deeply_nested_multipart() -> None:
    depth = 60
    head = "".join(
        f'Content-Type: multipart/mixed; boundary="b{n}"\n\n--b{n}\n' for n in range(depth)
    )
    tail = "".join(f"\n--b{n}--\n" for n in reversed(range(depth)))
    raw = ("From: a@b.example\n" + head + "Content-Type: text/plain\n\ndeep move\n" + tail).encode()
    mail = parse_message(raw)
    assert_well_formed(mail)
    assert first_command_line(mail) == "deep move"


def test_empty_input() -> None:
    mail = parse_message(b"")
    assert mail.robot == "no sender address"
    assert mail.text == "" and mail.fresh_text == ""
