"""A sender address pbm would have to guess is never answered: the message is logged
and marked ignored, with the reason kept on its row (issue 21, point 8)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlmodel import select

from pbm.store.engine import session_for
from pbm.store.models import InboundMessage
from tests.server.conftest import Server

ATTACKS = Path(__file__).resolve().parent.parent / "data" / "mail" / "attacks"


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("from_latin1_bytes_address.eml", "bytes that are not UTF-8 in the local part"),
        ("from_latin1_bytes_domain.eml", "bytes that are not UTF-8 in the domain"),
        ("from_encoded_word_in_addr_spec.eml", "an encoded word in the address"),
    ],
)
def test_a_guessed_sender_is_never_answered(
    server: Server, caplog: pytest.LogCaptureFixture, name: str, reason: str
) -> None:
    with caplog.at_level(logging.INFO):
        assert server.process((ATTACKS / name).read_bytes()) == "ignored"
    assert server.outbox() == []
    assert any(reason in r.getMessage() for r in caplog.records)
    with session_for(server.engine) as session:
        [row] = session.exec(select(InboundMessage))
        assert row.status == "ignored"
        assert row.error is not None and reason in row.error  # kept, for mydata and export


@pytest.mark.parametrize("byte", [b"\xe9", b"\xff", b"\x80", b"\xc3"])
def test_any_undecodable_byte_in_the_address_refuses_it(server: Server, byte: bytes) -> None:
    raw = server.raw("placeholder@players.example", "help").replace(
        b"From: placeholder@", b"From: pl" + byte + b"ceholder@"
    )
    assert server.process(raw) == "ignored"
    assert server.outbox() == []


def test_raw_bytes_in_the_name_alone_still_get_an_answer(server: Server) -> None:
    assert server.process((ATTACKS / "from_latin1_bytes_name_only.eml").read_bytes()) == "done"
    [reply] = server.outbox()
    assert reply.to == ["rene@a.test"]
