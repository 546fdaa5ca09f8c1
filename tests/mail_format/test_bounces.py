"""Reading bounces and complaints (pbm.mail.bounces) from real-shaped fixture mails, and
the VERP and stop addresses."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbm.mail.bounces import (
    BounceKind,
    parse_report,
    tag_for,
    verp_address,
    verp_parts,
)
from pbm.mail.streams import MailReason, Stream, board_list_id, feedback_id, stream_of

BOUNCES = Path(__file__).resolve().parents[1] / "data" / "mail" / "bounces"


def fixture(name: str) -> bytes:
    return (BOUNCES / name).read_bytes()


def test_postfix_dsn_is_a_hard_bounce_with_its_original() -> None:
    report = parse_report(fixture("postfix_hard.eml"))
    assert report is not None
    assert report.kind is BounceKind.HARD
    assert report.recipients == ("gone@example.com",)
    assert report.status == "5.1.1"
    assert report.original_message_id == "<pbm.abcdefgh12345678.4.0011223344556677aabb@example.org>"


def test_delay_warning_is_a_soft_bounce() -> None:
    report = parse_report(fixture("postfix_delayed.eml"))
    assert report is not None
    assert (report.kind, report.recipients, report.status) == (
        BounceKind.SOFT,
        ("full@example.net",),
        "4.2.2",
    )


def test_a_global_dsn_names_an_internationalised_recipient() -> None:
    """RFC 6533: a mail to an address in UTF-8 comes back as message/global-delivery-
    status with the address raw in a `utf-8;` field and the original's headers as
    message/global-headers."""
    report = parse_report(fixture("postfix_global_utf8.eml"))
    assert report is not None
    assert (report.kind, report.recipients, report.status) == (
        BounceKind.HARD,
        ("jörg@bücher.example",),
        "5.1.1",
    )
    assert report.original_message_id == "<pbm.abcdefgh12345678.5.0011223344556677aabb@example.org>"


def test_non_standard_bounce_is_read_by_flufl_bounce() -> None:
    report = parse_report(fixture("exim_nonstandard.eml"))
    assert report is not None
    assert report.kind is BounceKind.HARD
    assert report.recipients == ("nosuch@example.net",)


def test_arf_report_is_a_complaint_naming_the_recipient_and_original() -> None:
    report = parse_report(fixture("arf_complaint.eml"))
    assert report is not None
    assert report.kind is BounceKind.COMPLAINT
    assert report.recipients == ("annoyed@example.com",)
    assert report.original_message_id == "<pbm.abcdefgh12345678.6.2011223344556677aabb@example.org>"


@pytest.mark.parametrize("name", ["delivered_report.eml"])
def test_a_report_of_delivery_is_no_bounce(name: str) -> None:
    assert parse_report(fixture(name)) is None


def test_a_persons_mail_is_no_bounce() -> None:
    raw = b"From: alice@example.org\r\nTo: pbm@example.org\r\nSubject: help\r\n\r\nhelp\r\n"
    assert parse_report(raw) is None


def test_verp_address_round_trip() -> None:
    address = verp_address("pbm-bounces@example.org", 17, "0a1b2c3d4e5f6071")
    assert address == "pbm-bounces+17-0a1b2c3d4e5f6071@example.org"
    tag = tag_for([address.upper()], "pbm-bounces", "example.org")
    assert tag is not None and verp_parts(tag) == (17, "0a1b2c3d4e5f6071")
    # Without a code (a row queued before VERP) the plain address is kept.
    assert verp_address("pbm-bounces@example.org", 17, None) == "pbm-bounces@example.org"


@pytest.mark.parametrize(
    "address",
    ["pbm-bounces@example.org", "pbm-bounces+17-x@other.example", "pbm+17-abcdefgh@example.org"],
)
def test_other_addresses_are_no_verp_address(address: str) -> None:
    tag = tag_for([address], "pbm-bounces", "example.org")
    assert tag is None or verp_parts(tag) is None


def test_headers_by_stream() -> None:
    assert board_list_id("quarto", "101", "example.org") == "<quarto-101.boards.example.org>"
    assert feedback_id(MailReason.YOUR_MOVE, "quarto", "example.org") == (
        "your-move:quarto:pbm:example.org"
    )
    assert stream_of(MailReason.OPPONENT_MOVED) is Stream.BOARDS
    assert stream_of(MailReason.ANSWER) is None
