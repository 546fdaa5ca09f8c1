"""A message is parsed when it is stored and again when it is processed: the last few
small ones are kept (pbm.mail.inbound), bounded in number and in size, and a kept parse
is the parse."""

from __future__ import annotations

from pbm.mail import inbound
from pbm.mail.inbound import parse_message


def mail(n: int, body: str = "help") -> bytes:
    return (
        f"From: p{n}@players.example\r\nTo: pbm@example.org\r\nSubject: help\r\n"
        f"Message-ID: <m{n}@players.example>\r\n\r\n{body}\r\n"
    ).encode()


def test_the_same_bytes_are_parsed_once_and_read_the_same() -> None:
    raw = mail(1)
    first = parse_message(raw)
    hits = inbound._parse_kept.cache_info().hits
    again = parse_message(bytes(bytearray(raw)))  # another bytes object, as from the store
    assert again == first and again.sender == "p1@players.example"
    assert inbound._parse_kept.cache_info().hits == hits + 1


def test_at_most_a_bounded_number_of_small_messages_are_kept() -> None:
    for n in range(3 * inbound._KEPT_MESSAGES):
        parse_message(mail(n))
    assert inbound._parse_kept.cache_info().currsize == inbound._KEPT_MESSAGES
    big = mail(10_000, "x" * (inbound._KEPT_BYTES + 1))
    misses = inbound._parse_kept.cache_info().misses
    assert parse_message(big).sender == "p10000@players.example"
    assert inbound._parse_kept.cache_info().misses == misses  # never looked up, never kept
