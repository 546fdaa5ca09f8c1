"""Header reading: the fast path for plain addresses agrees with the full parser."""

from __future__ import annotations

from email import message_from_bytes, policy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbm.mail import parse_message
from pbm.mail.headers import Headers


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
def test_fast_path_agrees_with_full_parser(local: str, domain: list[str], name: list[str]) -> None:
    address = f"{local}@{'.'.join(domain)}"
    value = f"{' '.join(name)} <{address}>" if name else address
    if "=?" in value:
        return  # encoded words always take the full parser
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
