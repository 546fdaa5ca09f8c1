"""Who sent it: From is read strictly, and nothing guessed from junk names a sender."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime
from email import policy
from email.utils import parseaddr

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbm.mail.inbound import InboundMail, is_from_self, parse_message, quotable_original
from pbm.mail.mailbox import AddressError, check_addr_spec, parse_mailbox

NOT_ONE = "From is not exactly one valid address: "


def mail_from(*froms: str, extra: str = "") -> InboundMail:
    head = "".join(f"From: {value}\n" for value in froms)
    raw = head + "To: pbm@example.org\nSubject: help\n" + extra + "\nbody\n"
    return parse_message(raw.encode("utf-8", "surrogateescape"))


@pytest.mark.parametrize(
    ("value", "name", "sender"),
    [
        ("alice@a.test", "", "alice@a.test"),
        ("<alice@a.test>", "", "alice@a.test"),
        ("Alice Example <Alice@A.Test>", "Alice Example", "alice@a.test"),
        ('"Smith, Al" <al@a.test>', "Smith, Al", "al@a.test"),
        ("alice@a.test (Alice)", "", "alice@a.test"),
        ("Alice (at work) <alice@a.test>", "Alice", "alice@a.test"),
        ("Frank Q. Sample <frank@corp.example>", "Frank Q. Sample", "frank@corp.example"),
        ("=?utf-8?Q?Gaston_L=C3=A9ger?= <gaston@example.fr>", "Gaston Léger", "gaston@example.fr"),
        ("=?utf-8?q?G=C3=BC?= =?utf-8?q?nter?= <g@example.de>", "Günter", "g@example.de"),
        ("=?iso-8859-1?Q?M=FCller=2C_Hans?= <hans@example.de>", "Müller, Hans", "hans@example.de"),
        ('"=?utf-8?Q?J=C3=B6rg?=" <jorg@example.de>', "Jörg", "jorg@example.de"),
        ("Jörg Schmücker <jörg@bücher.example>", "Jörg Schmücker", "jörg@bücher.example"),
        ("用户 <用户@例子.测试>", "用户", "用户@例子.测试"),
        ("<pbm+k3q9z7m2p4x8@example.org>", "", "pbm+k3q9z7m2p4x8@example.org"),
        ('"alice"@a.test', "", "alice@a.test"),
        ('"john smith"@a.test', "", '"john smith"@a.test'),
        ("  Alice\t <alice@a.test>  ", "Alice", "alice@a.test"),
        ("Alice\n <alice@a.test>", "Alice", "alice@a.test"),  # folded
        ("o'brien@a.test", "", "o'brien@a.test"),
        ("pbm@localhost", "", "pbm@localhost"),
        # Decided: a quoted name is only a name, whatever it holds; the address is
        # unambiguous to every reader (docs/mail-format.md, "The sender").
        ('"alice@a.test" <attacker@evil.test>', "alice@a.test", "attacker@evil.test"),
    ],
)
def test_ordinary_forms_are_read(value: str, name: str, sender: str) -> None:
    mail = mail_from(value)
    assert (mail.sender_name, mail.sender) == (name, sender)
    assert mail.robot is None


@pytest.mark.parametrize(
    ("value", "why"),
    [
        # CVE-2023-27043 shapes: lenient parsers read alice, mail programs the other.
        ("alice@a.test <attacker@evil.test>", "an unquoted name that holds an address"),
        ("alice@a.test)<attacker@evil.test>", "stray ')'"),
        ("alice@a.test<attacker@evil.test>", "an unquoted name that holds an address"),
        ("<alice@a.test> <attacker@evil.test>", "more than one angle-bracketed address"),
        ("<alice@a.test>attacker@evil.test", "text after the angle-bracketed address"),
        ("Alice <alice@a.test> attacker@evil.test", "text after the angle-bracketed address"),
        ("alice@a.test, attacker@evil.test", "more than one address"),
        ("alice@a.test,", "more than one address"),
        ("Alice <alice@a.test>, Mallory <attacker@evil.test>", "more than one address"),
        ("=?utf-8?q?alice=40a=2Etest?= <attacker@evil.test>", "an encoded word in the name"),
        ("=?utf-8?q?=3Calice=40a.test=3E?= <attacker@evil.test>", "an encoded word in the name"),
        ("=?utf-8?b?YWxpY2VAYS50ZXN0?= <attacker@evil.test>", "an encoded word in the name"),
        ("=?utf-8?q?alice?=@a.test", "an encoded word in the address"),
        ("x@y.test (alice@a.test)", "a comment that looks like an address"),
        ("Alice (<alice@a.test>) <x@y.test>", "a comment that looks like an address"),
        # Groups, routes, garbage.
        ("undisclosed-recipients:;", "a group or a route"),
        ("friends: alice@a.test;", "a group or a route"),
        ("Alice <@relay.test:alice@a.test>", "a group or a route"),
        ("a@b@c.test", "more than one '@'"),
        ("alice", "no '@'"),
        ("<>", "empty address"),
        ("Alice <>", "empty address"),
        ("@a.test", "local part is neither a dot-atom nor a quoted string"),
        ("alice.@a.test", "local part is neither a dot-atom nor a quoted string"),
        (".alice@a.test", "local part is neither a dot-atom nor a quoted string"),
        ("al..ice@a.test", "local part is neither a dot-atom nor a quoted string"),
        ("alice@", "bad domain"),
        ("alice@a..test", "bad domain"),
        ("alice@a.test.", "bad domain"),
        ("alice@[192.0.2.1]", "domain literal"),
        ("alice@a_b.test", "bad domain"),
        ("alice@a!b.test", "bad domain"),
        ("alice @a.test", "space or comment inside the address"),
        ("alice@a.test>", "more than one angle-bracketed address"),
        ("<alice@a.test", "more than one angle-bracketed address"),
        ('"Alice <alice@a.test>', "unterminated quoted string"),
        ("Alice (x <alice@a.test>", "unterminated comment"),
        ('""@a.test', "empty quoted local part"),
        ("x" * 65 + "@a.test", "local part longer than 64 octets"),
        ("alice@" + "a" * 64 + ".test", "bad domain"),
        ("Alice [x] <alice@a.test>", "unexpected '['"),
        ("Alice\\ <alice@a.test>", "stray '\\\\'"),
        # Controls, bidi and invisible characters in the address.
        ("alice@a.test\x00evil@x.y", "control character '\\x00'"),
        ("Alice\x01 <alice@a.test>", "control character '\\x01'"),
        ("alice\x7f@a.test", "control character '\\x7f'"),
        ("alice\x85@a.test", "control character '\\x85'"),
        ('"ali\\\x00ce"@a.test', "control character '\\x00'"),
        ("ali\u202ece@a.test", "character '\\u202e' in the local part"),
        ("ali\u200bce@a.test", "character '\\u200b' in the local part"),
        ("alice@a\u00a0b.test", "unexpected character '\\xa0'"),
        ("alice@a.test\ufffd", "bytes that are not UTF-8 in the domain (U+FFFD)"),
        ("=?utf-8?q?alice=40a.test?= <attacker@evil.test>", "an encoded word in the name"),
        ("A" * 5000 + " <alice@a.test>", "header too long"),
    ],
)
def test_refused_forms_name_nobody(value: str, why: str) -> None:
    mail = mail_from(value)
    assert mail.sender == "" and mail.sender_name == ""
    assert mail.robot is not None and mail.robot.startswith(NOT_ONE)
    assert why in mail.robot


def test_more_than_one_from_header() -> None:
    mail = mail_from("Alice <alice@a.test>", "Mallory <attacker@evil.test>")
    assert mail.sender == ""
    assert mail.robot == NOT_ONE + "2 From headers"
    # Even the same address twice: the header is not what RFC 5322 allows.
    assert mail_from("alice@a.test", "alice@a.test").sender == ""


@pytest.mark.parametrize("value", ["", "   ", "\t"])
def test_empty_from_is_no_sender(value: str) -> None:
    mail = mail_from(value)
    assert mail.sender == "" and mail.robot == "no sender address"


def test_raw_8bit_names_are_read() -> None:
    raw = b"From: J\xc3\xb6rg <jorg@example.de>\nSubject: x\n\nbody\n"
    assert parse_message(raw).sender_name == "Jörg"
    latin1 = b"From: J\xf6rg <jorg@example.de>\nSubject: x\n\nbody\n"
    assert parse_message(latin1).sender_name == "Jörg"


def test_fallback_guesses_never_make_a_sender() -> None:
    # Each of these made the old lenient fallbacks guess an address.
    for value in ('"unterminated <a@b.c>', "<<a@@b>>", "a@b.c (comment", "x <a@b> <c@d>"):
        assert mail_from(value).sender == "", value


def test_reply_to_and_recipients_never_hold_control_characters() -> None:
    extra = (
        "Reply-To: alice@a.test\x00evil@x.y\n"
        "Cc: bob@b.test, carol\x01@c.test, pbm+k3q9z7m2p4x8@example.org\x00x@y.z\n"
        "Delivered-To: dave@d.test\x7f\n"
    )
    mail = mail_from("Alice <alice@a.test>", extra=extra)
    assert mail.reply_to is None
    assert mail.recipients == ("pbm@example.org", "bob@b.test")
    for address in (*mail.recipients, mail.reply_to or ""):
        assert not any(unicodedata.category(c) == "Cc" for c in address)


def test_reply_to_still_read_when_valid() -> None:
    mail = mail_from("Alice <alice@a.test>", extra="Reply-To: Alice Home <Alice@Home.test>\n")
    assert mail.reply_to == "alice@home.test"
    assert mail.sender == "alice@a.test"


def test_is_from_self_with_a_strict_sender() -> None:
    mail = mail_from("PBeM Server <pbm+abc12345@example.org>")
    assert is_from_self(mail, ["Richard's PBeM Server <pbm@example.org>"])
    assert not is_from_self(mail_from("pbm@example.org <x@y.test>"), ["pbm@example.org"])


def test_mailbox_api() -> None:
    box = parse_mailbox("Alice <Alice@A.test>")
    assert (box.name, box.address) == ("Alice", "alice@a.test")
    with pytest.raises(AddressError, match="more than one address"):
        parse_mailbox("a@a.test, b@b.test")
    assert check_addr_spec("Bob@B.Test") == "bob@b.test"
    with pytest.raises(AddressError):
        check_addr_spec("Bob <bob@b.test>")


fragments = st.sampled_from(
    [
        "alice@a.test", "attacker@evil.test", "x.y", "Alice", "é", "用户", "<", ">", " ",
        ",", ";", ":", '"', "(", ")", "@", ".", "\\", "[", "]", "\t", "\x00", "\u202e",
        '"alice@a.test"', "(c)", "=?utf-8?q?alice=40a.test?=", "=?utf-8?q?Al?=", "+tag",
    ]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(fragments, min_size=1, max_size=8))
def test_an_accepted_from_means_the_same_to_every_reader(parts: list[str]) -> None:
    """When pbm names a sender, the lenient and the modern Python parsers name the same
    one: there is no second reading for a mail program or a DMARC checker to take."""
    value = "".join(parts)
    mail = mail_from(value)
    if not mail.sender:
        assert mail.robot is not None
        return
    assert check_addr_spec(mail.sender) == mail.sender
    assert not any(unicodedata.category(c) in ("Cc", "Cf") for c in mail.sender)
    assert parseaddr(value)[1].lower() == mail.sender
    addresses = policy.default.header_factory("from", value).addresses
    assert [a.addr_spec.lower() for a in addresses] == [mail.sender]


def test_quote_is_capped_at_4_kb_of_utf8() -> None:
    huge_subject = parse_message(
        ("From: a@example.com\nSubject: " + "x" * 100_000 + "\n\nbody\n").encode()
    )
    quoted = quotable_original(huge_subject)
    assert len(quoted.encode("utf-8")) <= 4096
    assert quoted.startswith("From: a@example.com\nSubject: xxx")
    assert quoted.endswith("\n[...]")

    wide = parse_message(("From: a@example.com\nSubject: " + "é€😀" * 20_000 + "\n\nb\n").encode())
    quoted = quotable_original(wide)
    assert 4000 < len(quoted.encode("utf-8")) <= 4096
    assert quoted.endswith("😀\n[...]") or quoted.endswith("é\n[...]") or "€\n[...]" in quoted
    assert "\ufffd" not in quoted  # cut between characters, never inside one

    long_lines = ("é€😀" * 150 + "\n") * 20
    wide_body = parse_message(("From: a@example.com\nSubject: s\n\n" + long_lines).encode())
    quoted = quotable_original(wide_body)
    assert len(quoted.encode("utf-8")) <= 4096
    assert quoted.endswith("é€😀\n[...]")  # cut at the end of a whole line

    many_lines = parse_message(
        ("From: a@example.com\nSubject: s\n\n" + "a line of a long body\n" * 199).encode()
    )
    quoted = quotable_original(many_lines)
    assert len(quoted.encode("utf-8")) <= 4096
    body_lines = quoted.split("\n")[3:-1]
    assert body_lines and all(line == "a line of a long body" for line in body_lines)


def test_quote_with_a_huge_name_and_date() -> None:
    mail = InboundMail(
        message_id=None,
        sender="a@example.com",
        sender_name="N" * 50_000,
        subject="S" * 50_000,
        command_subject="",
        text="t\n" * 10,
        fresh_text="",
        recipients=(),
        in_reply_to=(),
        references=(),
        robot=None,
        date=datetime(2026, 12, 7, tzinfo=UTC),
    )
    quoted = quotable_original(mail)
    assert len(quoted.encode("utf-8")) <= 4096
    assert quoted.startswith("From: NNN") and quoted.endswith("\n[...]")


def test_short_quote_is_unchanged() -> None:
    mail = parse_message(b"From: a@example.com\nSubject: s\n\nmove b2\n")
    assert quotable_original(mail) == "From: a@example.com\nSubject: s\n\nmove b2"
