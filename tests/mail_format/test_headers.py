"""Header reading: one way for every header (raw value, 8-bit bytes read as UTF-8 or
cp1252, unfolded, read by `policy.default`'s header class), agreeing with the email
package's full parser, with fallbacks that never raise."""

from __future__ import annotations

from email import message_from_bytes, policy
from email.headerregistry import HeaderRegistry, UniqueUnstructuredHeader

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbm.mail.headers import HEADER_CLASSES, Headers, _HeaderClasses, decode_encoded_word
from pbm.mail.inbound import parse_message


def from_header(value: str) -> tuple[str, str]:
    mail = parse_message(f"From: {value}\nSubject: x\n\nbody\n".encode())
    return mail.sender_name, mail.sender


def full_parser(value: str) -> tuple[str, str]:
    header = policy.default.header_factory("from", value)
    address = header.addresses[0]
    return address.display_name, address.addr_spec.lower()


@pytest.mark.parametrize(
    "value",
    [
        "alice@example.com",
        "<alice@example.com>",
        "Alice Example <Alice@Example.com>",
        "Richard's PBeM Server <pbm+k3q9z7m2p4x8@example.org>",
        "Frank Q. Sample <frank@corp.example>",
        '"Sample, Frank" <frank@corp.example>',
        '"alice@example.org" <mallory@evil.example>',
        "=?utf-8?Q?Gaston_L=C3=A9ger?= <gaston@example.fr>",
        "alice@example.com (Alice Example)",
    ],
)
def test_sender_matches_the_full_rfc5322_parser(value: str) -> None:
    assert from_header(value) == full_parser(value)


atext = st.sampled_from("abcXYZ019!#$%&'*+/=?^_`{|}~-")
word = st.text(atext, min_size=1, max_size=6)


@given(
    local=word,
    domain=st.lists(st.text("abc09-", min_size=1, max_size=5), min_size=1, max_size=3),
    name=st.lists(word, max_size=3),
)
def test_plain_senders_read_as_the_full_parser_reads_them(
    local: str, domain: list[str], name: list[str]
) -> None:
    address = f"{local}@{'.'.join(domain)}"
    value = f"{' '.join(name)} <{address}>" if name else address
    if "=?" in value:
        return  # an encoded word here is another case (decoded, or refused by mailbox.py)
    expected = full_parser(value)
    assert from_header(value) == expected


def test_repeated_headers_keep_their_order() -> None:
    msg = message_from_bytes(
        b"Received: one\nTo: a@x.example\nReceived: two\nTO: b@y.example\n\n",
        policy=policy.compat32,
    )
    headers = Headers(msg)
    assert headers.raw("received") == ["one", "two"]
    assert [addr for _, addr in headers.addresses("To")] == ["a@x.example", "b@y.example"]


def headers_of(raw: bytes) -> Headers:
    return Headers(message_from_bytes(raw, policy=policy.compat32))


@given(
    local=word,
    domain=st.lists(st.text("abc09-", min_size=1, max_size=5), min_size=1, max_size=3),
    name=st.lists(word, max_size=3),
    count=st.integers(min_value=1, max_value=3),
)
def test_recipients_read_as_the_full_parser_reads_them(
    local: str, domain: list[str], name: list[str], count: int
) -> None:
    address = f"{local}@{'.'.join(domain)}"
    value = ", ".join([f"{' '.join(name)} <{address}>" if name else address] * count)
    if "=?" in value:
        return
    expected = [
        (a.display_name, a.addr_spec.lower())
        for a in policy.default.header_factory("to", value).addresses
    ]
    assert headers_of(f"To: {value}\n\n".encode()).addresses("To") == expected


def test_eight_bit_header_bytes_are_read_as_utf8_else_cp1252() -> None:
    headers = headers_of(
        b"Subject: gr\xc3\xbc\xc3\x9fe =?utf-8?q?J=C3=B6rg?=\n"
        b"Precedence: caf\xe9 \x93quoted\x94\n"
        b"To: J\xc3\xb6rg <jorg@b\xc3\xbccher.example>, Al <al@x.example>\n"
        b"Cc: caf\xe9 <c@x.example>\n\n"
    )
    assert headers.text("Subject") == "grüße Jörg"
    assert headers.text("Precedence") == "café \u201cquoted\u201d"
    assert headers.addresses("To") == [("Jörg", "jorg@bücher.example"), ("Al", "al@x.example")]
    assert headers.addresses("Cc") == [("café", "c@x.example")]


def test_unknown_charsets_and_broken_words_never_raise() -> None:
    headers = headers_of(
        b"Subject: =?x-unknown?q?caf=C3=A9?= =?utf-8?b?!!!?= =?utf-8?q?ok?=\n"
        b"To: =?bogus?b??==a@[ , <\n"
        b"Cc: <<a@@b>>, real@example.org\n\n"
    )
    subject = headers.text("Subject")
    assert subject is not None and subject.startswith("café") and subject.endswith("ok")
    headers.addresses("To")  # the address class raises on this; the fallbacks read it
    assert ("", "real@example.org") in headers.addresses("Cc")
    for value in [subject, *(a for pair in headers.addresses("Cc") for a in pair)]:
        value.encode("utf-8")  # no surrogate escapes


def test_values_past_the_parser_limit_are_kept_undecoded_and_cheap() -> None:
    long_subject = "=?utf-8?q?J=C3=B6rg?= " * 20_000  # 440 KB: seconds and gigabytes for the parser
    headers = headers_of(f"Subject: {long_subject}\nTo: {'a@b.example, ' * 2_000}\n\n".encode())
    assert headers.text("Subject") == long_subject.strip()
    assert len(headers.addresses("To")) == 2_000


def test_header_classes_are_the_stock_classes_put_together_once() -> None:
    stock = HeaderRegistry()
    for name in ("Subject", "To", "from", "Date", "Message-ID", "Content-Type", "X-Other"):
        ours = HEADER_CLASSES[name]
        assert ours is HEADER_CLASSES[name.upper()]
        assert ours.__bases__ == stock[name].__bases__
        assert ours.max_count == stock[name].max_count
    registry = _HeaderClasses()
    before = registry["X-Game"]
    # typeshed wants a BaseHeader here, but the registry maps names to the parser classes
    # it mixes BaseHeader into (as typeshed's own `registry` attribute says).
    registry.map_to_type("x-game", UniqueUnstructuredHeader)  # type: ignore[arg-type]
    assert registry["X-Game"] is not before  # a later mapping still applies


@pytest.mark.parametrize(
    ("word", "decoded"),
    [
        ("=?utf-8?q?Gaston_L=C3=A9ger?=", "Gaston Léger"),
        ("=?UTF-8?B?R2FzdG9uIEzDqWdlcg==?=", "Gaston Léger"),
        ("=?utf-8?b?R2FzdG9uIEzDqWdlcg?=", "Gaston Léger"),  # padding left out
        ("=?iso-8859-1?q?caf=E9?=", "café"),
        ("=?x-unknown?q?caf=C3=A9?=", "café"),  # unknown charset: UTF-8, else cp1252
        ("=?utf-8*en?q?hi?=", "hi"),  # RFC 2231 language suffix
        ("=?utf-8?b?!!!?=", ""),  # no base64 characters: nothing
        ("=?utf-8?b?w 6k?=", "=?utf-8?b?w 6k?="),  # not one word: as it is
        ("plain", "plain"),
        ("=?utf-8?q?a?=b", "=?utf-8?q?a?=b"),  # not one encoded word
    ],
)
def test_decode_encoded_word(word: str, decoded: str) -> None:
    assert decode_encoded_word(word) == decoded
