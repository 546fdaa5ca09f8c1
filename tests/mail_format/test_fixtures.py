"""parse_message on real mails as mail programs write them (tests/data/mail/*.eml)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from pbm.mail.addressing import tokens_in
from pbm.mail.inbound import InboundMail, first_command_line, parse_message, quotable_original

DATA = Path(__file__).resolve().parent.parent / "data" / "mail"
SERVER = "pbm@example.org"
BOARD_ROW_MARKERS = (". . . .", ", , , ,", "a b c d e f g h i j k", "Summary of")


def load(name: str) -> InboundMail:
    return parse_message((DATA / name).read_bytes())


def assert_no_board(mail: InboundMail) -> None:
    for marker in BOARD_ROW_MARKERS:
        assert marker not in mail.fresh_text, marker


def test_every_fixture_parses_and_is_covered() -> None:
    names = {path.name for path in DATA.glob("*.eml")}
    assert names == set(COVERED), "each fixture needs its own expectations below"
    for name in names:
        assert isinstance(load(name), InboundMail)


def test_thunderbird_plain_flowed_signature() -> None:
    mail = load("thunderbird_plain.eml")
    assert mail.sender == "alice@example.com"
    assert mail.sender_name == "Alice Example"
    assert mail.subject == "quadrature move 101 alice s3cret e3-e4"
    assert mail.command_subject == mail.subject
    assert mail.message_id == "<5f3c9a1e-7d2b-4c1e-9a8f-2b6d0e4c1a77@example.com>"
    assert mail.date == datetime(2026, 11, 22, 3, 12, 40, tzinfo=UTC)
    assert mail.robot is None
    # format=flowed: the soft break after "long " is joined again.
    assert mail.fresh_text == (
        "Good luck, Bob! I have been looking forward to this game for a long "
        "while, so do not let me win too easily."
    )
    assert "Alice Example\nhttps://" in mail.text  # the signature is in text...
    assert "alice.example.com" not in mail.fresh_text  # ...but not in fresh_text


def test_thunderbird_reply_with_quoted_board_and_signature() -> None:
    mail = load("thunderbird_reply_quoted_board.eml")
    assert mail.sender == "bob@example.net"  # lower-cased from Bob@Example.NET
    assert mail.command_subject == "Quadrature Board 101 bob **"
    assert first_command_line(mail) == "f6-f5"
    assert mail.fresh_text == "f6-f5\n\nNice opening. Let us see how you handle this one."
    assert_no_board(mail)
    assert "> 11  . . . . , , , . . . .  11" in mail.text
    assert mail.in_reply_to == ("<pbm.k3q9z7m2p4x8.3f9a0c2e7b5d1e4f6a8c@example.org>",)
    assert [f.token for f in tokens_in(mail, SERVER)] == ["k3q9z7m2p4x8"]
    assert "pbm+k3q9z7m2p4x8@example.org" in mail.recipients


def test_thunderbird_multiple_keeps_indented_comments_and_drops_signoff() -> None:
    mail = load("thunderbird_multiple.eml")
    lines = mail.fresh_text.split("\n")
    assert lines[0] == "quadrature move 101 carol pw e3-e4"
    assert lines[1].startswith(" ") and lines[1].strip() == "Your move, Bob."
    assert lines[2] == "quarto move 7 carol pw b2 SDQF"
    assert [line.strip() for line in lines[3:5]] == ["That piece is", "poison."]
    assert all(line.startswith(" ") for line in lines[3:5])
    assert lines[5:] == ["quadrature show 102"]  # "Cheers,\nCarol" is not a command


def test_gmail_alternative_prefers_plain_and_drops_wrapped_attribution() -> None:
    mail = load("gmail_alternative.eml")
    assert mail.sender == "alice.example@gmail.com"
    assert mail.command_subject == "Quadrature Board 101 alice"
    assert mail.message_id == "<CAF=x1q7Gm+vKq0N8tXkH2y7Zp0aB9cD8eF7gH6iJ5kL4mN3o@mail.gmail.com>"
    assert "<div" not in mail.text and "&#39;" not in mail.text
    assert mail.fresh_text == (
        "e3-e4\n\nYour turn again :) Let's see if you spot the trap this time."
    )
    assert_no_board(mail)
    assert "wrote:" not in mail.fresh_text
    assert mail.references == (
        "<pbm.k3q9z7m2p4x8.3f9a0c2e7b5d1e4f6a8c@example.org>",
        "<pbm.k3q9z7m2p4x8.9d8c7b6a5f4e3d2c1b0a@example.org>",
    )
    assert [f.token for f in tokens_in(mail, SERVER)] == ["k3q9z7m2p4x8"]


def test_outlook_html_only_top_post() -> None:
    mail = load("outlook_html_topost.eml")
    assert mail.robot is None  # X-Auto-Response-Suppress alone is ordinary Outlook mail
    assert mail.sender == "erin@corp.example"
    assert mail.command_subject == "Quadrature Board 102 erin"  # "RE:" stripped
    assert first_command_line(mail) == "move c7-c6"
    # Entities unescaped, "&nbsp;" paragraph kept as a blank line, style text gone.
    assert (
        mail.fresh_text == "move c7-c6\n\nSorry for the delay – I was travelling & had no laptop."
    )
    assert "font-family" not in mail.text and "Cambria" not in mail.text
    assert "11  . . . . , , , . . . .  11" in mail.text  # <pre> keeps its spacing
    assert_no_board(mail)
    assert [f.token for f in tokens_in(mail, SERVER)] == ["z8y7x6w5v4u3"]


def test_outlook_plain_original_message_block() -> None:
    mail = load("outlook_original_message.eml")
    assert mail.sender_name == "Frank Q. Sample"
    assert first_command_line(mail) == "quarto move 7 frank hunter2 b2 SDQF"
    assert mail.fresh_text == "quarto move 7 frank hunter2 b2 SDQF\n\nFrank"
    assert "Original Message" not in mail.fresh_text
    assert "Summary of Quarto" in mail.text


def test_apple_mail_quoted_printable_and_iphone_footer() -> None:
    mail = load("apple_mail_qp.eml")
    assert mail.sender_name == "Gaston Léger"
    assert mail.subject == "Re: Quadrature Board 103 gaston"
    assert mail.command_subject == "Quadrature Board 103 gaston"
    assert first_command_line(mail) == "d4-d5"
    # The soft line breaks ("=\n") of quoted-printable are joined; UTF-8 decoded.
    assert mail.fresh_text == (
        "d4-d5\n\nCoup joué. J’espère que ça te plaît, le plateau devient vraiment "
        "intéressant maintenant que les coins sont pris."
    )
    assert "iPhone" not in mail.fresh_text
    assert [f.token for f in tokens_in(mail, SERVER)] == ["m1n2b3v4c5x6"]


def test_base64_body() -> None:
    mail = load("base64_body.eml")
    assert first_command_line(mail) == "quadrature move 104 heike geheim g7-g6"
    assert "Schöne Grüße aus Köln – der Zug ist endlich da!" in mail.fresh_text
    assert mail.date == datetime(2026, 11, 22, 12, 0, tzinfo=timezone(timedelta(hours=1)))


def test_rfc2047_utf8_subject_in_base64_and_q_words() -> None:
    mail = load("rfc2047_utf8_subject.eml")
    assert mail.sender_name == "Jörg Schmücker"
    assert mail.subject == "quarto move 8 jörg geheim b2 SDQF – glück auf"
    assert mail.fresh_text == "Next piece for you: the tall dark square hollow one."


def test_rfc2047_latin1_subject_and_8bit_latin1_body() -> None:
    mail = load("rfc2047_latin1_subject.eml")
    assert mail.sender_name == "Françoise Bérangère"
    # ISO-8859-1 "Re\xa0:" (French typography) still counts as a reply prefix.
    assert mail.subject == "Re : Quadrature Board 105 françoise"
    assert mail.command_subject == "Quadrature Board 105 françoise"
    # The two-line French attribution "Le ... a écrit :" goes with the quote.
    assert mail.fresh_text == "h5-h4\n\nTrès bien joué, mais ce coup-ci je prends le centre."


def test_postfix_bounce_is_a_robot() -> None:
    mail = load("postfix_bounce.eml")
    assert mail.robot is not None
    assert mail.sender == "mailer-daemon@mx.example.org"
    # The returned message is not the body; the notification text is.
    assert mail.text.startswith("This is the mail system at host mx.example.org.")
    assert "Summary of Quadrature Board 106" not in mail.text


def test_postfix_bounce_is_a_robot_by_structure_alone() -> None:
    raw = (DATA / "postfix_bounce.eml").read_bytes()
    for header in (b"Return-Path: <>\n", b"Auto-Submitted: auto-replied\n"):
        raw = raw.replace(header, b"", 1)
    raw = raw.replace(
        b"From: MAILER-DAEMON@mx.example.org (Mail Delivery System)",
        b"From: Mail Delivery System <mail@mx.example.org>",
    )
    mail = parse_message(raw)
    assert mail.sender == "mail@mx.example.org"
    assert mail.robot is not None and "delivery" in mail.robot


def test_vacation_auto_reply_is_a_robot() -> None:
    mail = load("vacation_autoreply.eml")
    assert mail.robot == "Auto-Submitted: auto-replied"
    assert [f.token for f in tokens_in(mail, SERVER)] == [
        "k3q9z7m2p4x8"
    ]  # carries a token, still ignored


def test_exchange_out_of_office_is_a_robot() -> None:
    mail = load("exchange_out_of_office.eml")
    assert mail.robot == "Auto-Submitted: auto-generated"


def test_exchange_out_of_office_subject_alone_marks_a_robot() -> None:
    raw = (DATA / "exchange_out_of_office.eml").read_bytes()
    raw = raw.replace(b"Auto-Submitted: auto-generated\r\n", b"")
    assert parse_message(raw).robot == "auto-reply subject"


def test_mailing_list_mail_is_a_robot() -> None:
    mail = load("mailing_list.eml")
    assert mail.robot is not None
    assert mail.command_subject == "quadrature challenge dave alice"  # "[games]" tag gone
    assert "games mailing list" not in mail.fresh_text  # list footer after "____"


def test_mailing_list_headers_alone_mark_a_robot() -> None:
    raw = (DATA / "mailing_list.eml").read_bytes().replace(b"Precedence: list\n", b"")
    assert parse_message(raw).robot == "mailing list mail (List-Id)"


def test_malformed_mail_without_sender_degrades() -> None:
    mail = load("malformed_no_sender.eml")
    assert mail.sender == ""
    assert mail.robot == "no sender address"
    assert mail.message_id is None  # "no brackets here" is not a message id
    assert mail.date is None  # 32 November at 25:61 is no date
    assert mail.subject.startswith("quadrature show 101")
    assert mail.recipients[0] == "pbm@example.org"
    mail.fresh_text.encode("utf-8")  # nothing undecodable leaks out


def test_undeclared_8bit_headers_and_unknown_charset() -> None:
    mail = load("bad_charset_8bit.eml")
    assert mail.robot is None
    assert mail.sender_name == "Ivan Èvan"
    assert mail.subject == "quadrature show 101 à la carte"
    assert mail.fresh_text == "quadrature show 101\nTrès bien à vous."


def test_thunderbird_read_receipt_is_a_robot() -> None:
    mail = load("thunderbird_read_receipt.eml")
    assert mail.sender == "alice@example.com"  # a person's address, yet a machine's mail
    assert mail.robot == "delivery or disposition report (disposition-notification)"


def test_yahoo_original_below_an_unquoted_attribution() -> None:
    mail = load("yahoo_unquoted_original.eml")
    assert mail.robot is None
    assert first_command_line(mail) == "g7-g6"
    assert mail.fresh_text.strip() == "g7-g6\n\nSorry, I was away. Your move!"
    assert_no_board(mail)
    assert [f.token for f in tokens_in(mail, SERVER)] == ["k3q9z7m2p4x8"]


def test_yahoo_html_alternative_alone_gives_the_same_fresh_text() -> None:
    raw = (DATA / "yahoo_unquoted_original.eml").read_bytes()
    plain_start = raw.index(b"Content-Type: text/plain")
    html_start = raw.index(b"------=_Part", plain_start)
    mail = parse_message(
        raw[:plain_start]
        + raw[html_start + len(b"------=_Part_123456_789012345.1795760000000\n") :]
    )
    assert "<div" not in mail.text
    assert mail.fresh_text == "g7-g6\n\nSorry, I was away. Your move!"


COVERED = {
    "thunderbird_read_receipt.eml",
    "yahoo_unquoted_original.eml",
    "thunderbird_plain.eml",
    "thunderbird_reply_quoted_board.eml",
    "thunderbird_multiple.eml",
    "gmail_alternative.eml",
    "outlook_html_topost.eml",
    "outlook_original_message.eml",
    "apple_mail_qp.eml",
    "base64_body.eml",
    "rfc2047_utf8_subject.eml",
    "rfc2047_latin1_subject.eml",
    "postfix_bounce.eml",
    "vacation_autoreply.eml",
    "exchange_out_of_office.eml",
    "mailing_list.eml",
    "malformed_no_sender.eml",
    "bad_charset_8bit.eml",
}


@pytest.mark.parametrize("name", sorted(COVERED))
def test_fixture_text_is_clean_unicode_with_newlines(name: str) -> None:
    mail = load(name)
    for value in (mail.text, mail.fresh_text, mail.subject, mail.sender_name):
        value.encode("utf-8")  # no surrogate escapes
        assert "\r" not in value


def test_latin1_label_with_windows_1252_quotes() -> None:
    raw = (
        b"From: a@example.com\nContent-Type: text/plain; charset=iso-8859-1\n"
        b"Content-Transfer-Encoding: 8bit\n\n\x93Nice\x94 move \x80 caf\xe9\n"
    )
    assert parse_message(raw).text == "\u201cNice\u201d move \u20ac café\n"


def test_byte_order_mark_does_not_hide_the_first_command() -> None:
    raw = "From: a@example.com\nContent-Type: text/plain; charset=utf-8\n\n\ufeffe3-e4\n"
    assert first_command_line(parse_message(raw.encode())) == "e3-e4"


def test_quotable_original_has_headers_and_a_bounded_body() -> None:
    quoted = quotable_original(load("thunderbird_plain.eml"))
    assert quoted.startswith(
        "From: Alice Example <alice@example.com>\n"
        "Subject: quadrature move 101 alice s3cret e3-e4\n"
        "Date: Sun, 22 Nov 2026 04:12:40 +0100\n\nGood luck, Bob!"
    )
    huge = parse_message(b"From: a@example.com\nSubject: x\n\n" + b"line\n" * 5000)
    quoted_lines = quotable_original(huge).split("\n")
    assert len(quoted_lines) < 210 and quoted_lines[-1] == "[...]"
