"""Reply tokens: plus-addresses, our Message-IDs, and finding them in replies."""

from __future__ import annotations

import re

import pytest

from pbm.mail.addressing import (
    FoundToken,
    message_id_for,
    reply_address,
    token_in_message_id,
    tokens_in,
)
from pbm.mail.inbound import InboundMail, parse_message

TOKEN = "k3q9z7m2p4x8"
SERVER = "pbm@example.org"


def test_reply_address() -> None:
    assert reply_address("pbm@example.org", TOKEN) == f"pbm+{TOKEN}@example.org"
    assert reply_address("Richard's PBeM Server <PBM@Example.org>", "ABCDEFGH") == (
        "pbm+abcdefgh@example.org"
    )
    assert reply_address("pbm+old@example.org", TOKEN) == f"pbm+{TOKEN}@example.org"


@pytest.mark.parametrize("bad", ["short", "has-dash1", "x" * 41, "", "tok en123"])
def test_bad_tokens_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        reply_address(SERVER, bad)
    with pytest.raises(ValueError):
        message_id_for(bad, "example.org")


def test_message_id_for_carries_the_token_and_is_fresh() -> None:
    first = message_id_for(TOKEN, "example.org")
    second = message_id_for(TOKEN, "example.org")
    assert re.fullmatch(rf"<pbm\.{TOKEN}\.[a-z0-9]+@example\.org>", first)
    assert first != second
    assert token_in_message_id(first) == FoundToken(TOKEN, first)


def test_message_id_without_token() -> None:
    ident = message_id_for(None, "example.org")
    assert re.fullmatch(r"<pbm\.[a-z0-9]+@example\.org>", ident)
    assert token_in_message_id(ident) is None


def test_message_id_for_refuses_a_bad_host() -> None:
    with pytest.raises(ValueError):
        message_id_for(TOKEN, "a b")


def token_names(mail: InboundMail) -> list[str]:
    return [found.token for found in tokens_in(mail, SERVER)]


def reply(headers: str) -> bytes:
    return (
        "From: bob@example.net\nSubject: Re: Quadrature Board 101 bob\n" + headers + "\ng7-g6\n"
    ).encode()


@pytest.mark.parametrize(
    "header",
    [
        f"To: pbm+{TOKEN}@example.org\n",
        f"To: Server <PBM+{TOKEN.upper()}@EXAMPLE.ORG>\n",
        f"To: someone@else.example\nCc: pbm+{TOKEN}@example.org\n",
        f"To: pbm@example.org\nDelivered-To: pbm+{TOKEN}@example.org\n",
        f"To: games@example.org\nX-Original-To: pbm+{TOKEN}@example.org\n",
        f"In-Reply-To: <pbm.{TOKEN}.0a1b2c3d@example.org>\n",
        f"References: <other@example.net> <pbm.{TOKEN}.0a1b2c3d@example.org>\n",
        f"In-Reply-To: <pbm.{TOKEN}.0A1B2C3D@EXAMPLE.ORG>\n",
    ],
)
def test_token_found_in_each_place(header: str) -> None:
    assert token_names(parse_message(reply(header))) == [TOKEN]


@pytest.mark.parametrize(
    "header",
    [
        f"To: pbm+{TOKEN}@example.com\n",  # another domain
        f"To: pbmx+{TOKEN}@example.org\n",  # another local part
        "To: pbm+short@example.org\n",  # not a token
        "To: pbm@example.org\n",
        f"In-Reply-To: <xpbm.{TOKEN}.0a1b@example.org>\n",
        "In-Reply-To: <pbm.0a1b2c3d4e5f@example.org>\n",  # our id without a token
        # Our shape at another host is not an id pbm issued.
        f"In-Reply-To: <pbm.{TOKEN}.x@evil.host>\n",
        f"References: <pbm.{TOKEN}.0a1b2c3d@mail.example.org>\n",
        f"In-Reply-To: <pbm.{TOKEN}.0a1b@example.org.evil.host>\n",
        f"In-Reply-To: <pbm.{TOKEN}.0a1b@evil.example.org>\n",
        # Not exactly our shape.
        f"In-Reply-To: <pbm.{TOKEN}.0a1b.extra@example.org>\n",
        f"In-Reply-To: <pbm.{TOKEN}.0a-1b@example.org>\n",
        f"In-Reply-To: <pbm.{TOKEN}@example.org>\n",
        f"In-Reply-To: <pbm.{TOKEN}.0a1b@example.org@evil.host>\n",
        f"To: pbm+{TOKEN}@evil.host\n",
    ],
)
def test_no_token(header: str) -> None:
    assert tokens_in(parse_message(reply(header)), SERVER) == []


def test_recipient_tokens_come_first_then_newest_reference() -> None:
    headers = (
        "To: pbm+recipient1@example.org\n"
        "In-Reply-To: <pbm.inreplyto1.aa@example.org>\n"
        "References: <pbm.oldestref1.aa@example.org> <pbm.newestref1.bb@example.org>\n"
        " <pbm.recipient1.cc@example.org>\n"
    )
    assert tokens_in(parse_message(reply(headers)), SERVER) == [
        FoundToken("recipient1", None),
        FoundToken("inreplyto1", "<pbm.inreplyto1.aa@example.org>"),
        FoundToken("newestref1", "<pbm.newestref1.bb@example.org>"),
        FoundToken("oldestref1", "<pbm.oldestref1.aa@example.org>"),
    ]


def test_message_id_tokens_say_which_id_carried_them() -> None:
    ident = message_id_for(TOKEN, "example.org")
    found = tokens_in(parse_message(reply(f"In-Reply-To: {ident}\n")), SERVER)
    assert found == [FoundToken(TOKEN, ident)]


def test_the_server_domain_is_the_only_message_id_host() -> None:
    mail = parse_message(
        reply(
            f"In-Reply-To: <pbm.{TOKEN}.aa@evil.host>\n"
            f"References: <pbm.other0001.bb@evil.host> <pbm.{TOKEN}.cc@example.org>\n"
        )
    )
    assert tokens_in(mail, "PBeM Server <PBM@Example.ORG>") == [
        FoundToken(TOKEN, f"<pbm.{TOKEN}.cc@example.org>")
    ]


def test_token_in_message_id_with_a_host() -> None:
    ident = f"<pbm.{TOKEN}.0a1b@example.org>"
    assert token_in_message_id(ident, "Example.Org") == FoundToken(TOKEN, ident)
    assert token_in_message_id(ident, "evil.host") is None
    assert token_in_message_id(ident) == FoundToken(TOKEN, ident)  # no host given: shape only


def test_a_move_count_in_the_reply_address_and_the_message_id() -> None:
    assert reply_address(SERVER, TOKEN, 9) == f"pbm+{TOKEN}.9@example.org"
    assert reply_address(SERVER, TOKEN, 0) == f"pbm+{TOKEN}.0@example.org"
    ident = message_id_for(TOKEN, "example.org", 12)
    assert re.fullmatch(rf"<pbm\.{TOKEN}\.12\.[0-9a-f]{{20}}@example\.org>", ident)
    assert token_in_message_id(ident, "example.org") == FoundToken(TOKEN, ident, 12)
    for bad in (-1, 10**9):
        with pytest.raises(ValueError):
            reply_address(SERVER, TOKEN, bad)
        with pytest.raises(ValueError):
            message_id_for(TOKEN, "example.org", bad)


@pytest.mark.parametrize(
    ("header", "found"),
    [
        (f"To: pbm+{TOKEN}.9@example.org\n", FoundToken(TOKEN, None, 9)),
        (f"To: PBM+{TOKEN.upper()}.0@Example.org\n", FoundToken(TOKEN, None, 0)),
        (
            f"In-Reply-To: <pbm.{TOKEN}.9.0a1b2c@example.org>\n",
            FoundToken(TOKEN, f"<pbm.{TOKEN}.9.0a1b2c@example.org>", 9),
        ),
        # The formats before the move count: still tokens, with no count.
        (f"To: pbm+{TOKEN}@example.org\n", FoundToken(TOKEN, None, None)),
        (
            f"In-Reply-To: <pbm.{TOKEN}.0123456789@example.org>\n",
            FoundToken(TOKEN, f"<pbm.{TOKEN}.0123456789@example.org>", None),
        ),
    ],
)
def test_the_move_count_is_read_back(header: str, found: FoundToken) -> None:
    assert tokens_in(parse_message(reply(header)), SERVER) == [found]


@pytest.mark.parametrize(
    "header",
    [
        f"To: pbm+{TOKEN}.x9@example.org\n",
        f"To: pbm+{TOKEN}.1234567890@example.org\n",  # more than 9 digits
        f"To: pbm+{TOKEN}.9.9@example.org\n",
        f"To: pbm+{TOKEN}.@example.org\n",
        f"In-Reply-To: <pbm.{TOKEN}.9.9.0a1b@example.org>\n",
        f"In-Reply-To: <pbm.{TOKEN}.9.0a1b@evil.host>\n",
    ],
)
def test_malformed_move_counts_carry_no_token(header: str) -> None:
    assert tokens_in(parse_message(reply(header)), SERVER) == []


def test_a_token_counts_once_with_the_count_of_its_first_place() -> None:
    headers = (
        f"To: pbm+{TOKEN}.7@example.org\n"
        f"In-Reply-To: <pbm.{TOKEN}.3.aa@example.org>\n"
        f"References: <pbm.{TOKEN}.1.bb@example.org>\n"
    )
    assert tokens_in(parse_message(reply(headers)), SERVER) == [FoundToken(TOKEN, None, 7)]
