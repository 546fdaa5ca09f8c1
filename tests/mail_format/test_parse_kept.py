"""A message is parsed when it is stored and again when it is processed: the last few
small ones are kept (pbm.mail.inbound), bounded in number and in size, and a kept parse
is the parse. Seen from outside: a kept parse is handed out again (the same object), one
not kept is made anew."""

from __future__ import annotations

from pbm.mail.inbound import parse_message

KEPT_MESSAGES = 64  # the last 64 messages parsed are kept
KEPT_BYTES = 64 * 1024  # if they are at most 64 KiB


def mail(name: str, body: str = "help") -> bytes:
    return (
        f"From: {name}@players.example\r\nTo: pbm@example.org\r\nSubject: help\r\n"
        f"Message-ID: <{name}@players.example>\r\n\r\n{body}\r\n"
    ).encode()


def test_the_same_bytes_are_parsed_once_and_read_the_same() -> None:
    raw = mail("once")
    first = parse_message(raw)
    again = parse_message(bytes(bytearray(raw)))  # another bytes object, as from the store
    assert again is first and again.sender == "once@players.example"


def test_at_most_a_bounded_number_of_small_messages_are_kept() -> None:
    # The first of 64 is kept; the first of 65 no longer, and is parsed anew, alike.
    for others, kept in ((KEPT_MESSAGES - 1, True), (KEPT_MESSAGES, False)):
        first = parse_message(mail(f"first{others}"))
        for n in range(others):
            parse_message(mail(f"other{others}.{n}"))
        again = parse_message(mail(f"first{others}"))
        assert (again is first) is kept and again == first
    # A message of 64 KiB is kept, a larger one never is.
    largest = mail("largest")
    largest = mail("largest", "x" * (KEPT_BYTES - len(largest) + len("help")))
    assert len(largest) == KEPT_BYTES
    assert parse_message(largest) is parse_message(largest)
    big = mail("big", "x" * KEPT_BYTES)
    first = parse_message(big)
    assert first.sender == "big@players.example"
    assert parse_message(big) is not first and parse_message(big) == first
