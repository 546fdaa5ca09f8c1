"""Robot screening: each rule on its own, and ordinary mail that must pass."""

from __future__ import annotations

import pytest

from pbm.mail.inbound import is_from_self, parse_message

BASE_HEADERS = (
    "From: Alice <alice@example.com>\n"
    "To: pbm@example.org\n"
    "Subject: quadrature show 101\n"
    "Date: Sun, 22 Nov 2026 04:00:00 +0000\n"
    "Message-ID: <base@example.com>\n"
)


def mail_with(extra: str = "", *, body: str = "hello\n", headers: str = BASE_HEADERS) -> bytes:
    return (headers + extra + "\n" + body).encode()


def test_ordinary_mail_is_not_a_robot() -> None:
    assert parse_message(mail_with()).robot is None


@pytest.mark.parametrize(
    "header",
    [
        "Auto-Submitted: no\n",
        "Auto-Submitted: No (person)\n",
        "X-Auto-Response-Suppress: All\n",
        "X-Auto-Response-Suppress: DR, RN, NRN, OOF, AutoReply\n",
        "Precedence: first-class\n",
        "Return-Path: <alice@example.com>\n",
    ],
)
def test_headers_that_do_not_make_a_robot(header: str) -> None:
    assert parse_message(mail_with(header)).robot is None


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ("Auto-Submitted: auto-replied\n", "Auto-Submitted: auto-replied"),
        ("Auto-Submitted: Auto-Generated\n", "Auto-Submitted: auto-generated"),
        ("Auto-Submitted: auto-notified; owner-email=x@y\n", "Auto-Submitted: auto-notified"),
        ("Precedence: bulk\n", "Precedence: bulk"),
        ("Precedence: junk\n", "Precedence: junk"),
        ("Precedence: list\n", "Precedence: list"),
        ("X-Autoreply: yes\n", "auto-reply header X-Autoreply"),
        ("X-Autorespond: Out of office\n", "auto-reply header X-Autorespond"),
        ("List-Id: <games.lists.example.com>\n", "mailing list mail (List-Id)"),
        (
            "List-Unsubscribe: <mailto:leave@lists.example.com>\n",
            "mailing list mail (List-Unsubscribe)",
        ),
        ("Return-Path: <>\n", "empty Return-Path (bounce or notification)"),
        ("Return-Path: < >\n", "empty Return-Path (bounce or notification)"),
    ],
)
def test_each_robot_header_alone(header: str, reason: str) -> None:
    assert parse_message(mail_with(header)).robot == reason


@pytest.mark.parametrize(
    "sender",
    [
        "MAILER-DAEMON@mx.example.org",
        "postmaster@example.com",
        "Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
        "noreply@example.com",
        "no-reply@example.com",
    ],
)
def test_robot_senders(sender: str) -> None:
    headers = BASE_HEADERS.replace("Alice <alice@example.com>", sender)
    assert parse_message(mail_with(headers=headers)).robot is not None


def test_missing_from_is_unanswerable() -> None:
    headers = BASE_HEADERS.replace("From: Alice <alice@example.com>\n", "")
    mail = parse_message(mail_with(headers=headers))
    assert mail.sender == ""
    assert mail.robot == "no sender address"


def test_reply_to_is_not_the_identity() -> None:
    mail = parse_message(mail_with("Reply-To: Mallory <mallory@example.net>\n"))
    assert mail.sender == "alice@example.com"
    assert mail.reply_to == "mallory@example.net"


REPORT = (
    "MIME-Version: 1.0\n"
    'Content-Type: multipart/report; report-type={kind}; boundary="b"\n'
    "\n--b\nContent-Type: text/plain\n\nYour message was {what}.\n"
    "\n--b\nContent-Type: message/{kind}\n\nReporting-MTA: dns; mx.example.com\n"
    "\n--b--\n"
)


@pytest.mark.parametrize(
    ("kind", "what"),
    [("delivery-status", "not delivered"), ("disposition-notification", "displayed")],
)
def test_reports_are_robots_even_from_an_ordinary_sender(kind: str, what: str) -> None:
    raw = (BASE_HEADERS + REPORT.format(kind=kind, what=what)).encode()
    reason = parse_message(raw).robot
    assert reason is not None and kind in reason


def test_bounce_subject_alone_is_not_a_robot() -> None:
    headers = BASE_HEADERS.replace("quadrature show 101", "Delivery Status Notification (Failure)")
    assert parse_message(mail_with(headers=headers)).robot is None


def test_bounce_subject_with_returned_message_is_a_robot() -> None:
    headers = BASE_HEADERS.replace("quadrature show 101", "failure notice")
    body = (
        "Hi. This is the qmail-send program at example.com.\n"
        "--- Below this line is a copy of the message.\n\nReturn-Path: <pbm@example.org>\n"
    )
    reason = parse_message(mail_with(headers=headers, body=body)).robot
    assert reason == "bounce (delivery failure subject with the returned message)"


def test_bounce_subject_with_attached_message_is_a_robot() -> None:
    headers = BASE_HEADERS.replace("quadrature show 101", "Undeliverable: Quadrature Board 101")
    body = (
        "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n--b\n"
        "Content-Type: text/plain\n\nDelivery has failed.\n--b\n"
        "Content-Type: message/rfc822\n\nFrom: pbm@example.org\nSubject: x\n\nboard\n--b--\n"
    )
    raw = (headers + body).encode()
    assert parse_message(raw).robot is not None


@pytest.mark.parametrize(
    "subject",
    ["Automatic reply: Quadrature Board 101", "Out of Office: away", "Abwesenheitsnotiz: x"],
)
def test_auto_reply_subjects(subject: str) -> None:
    headers = BASE_HEADERS.replace("quadrature show 101", subject)
    assert parse_message(mail_with(headers=headers)).robot == "auto-reply subject"


@pytest.mark.parametrize(
    ("sender", "expected"),
    [
        ("pbm@example.org", True),
        ("PBM@Example.ORG", True),
        ("pbm+k3q9z7m2p4x8@example.org", True),
        ("Richard's PBeM Server <pbm+abc12345@example.org>", True),
        ("pbmx@example.org", False),
        ("pbm@example.com", False),
        ("alice@example.org", False),
    ],
)
def test_is_from_self(sender: str, expected: bool) -> None:
    headers = BASE_HEADERS.replace("Alice <alice@example.com>", sender)
    mail = parse_message(mail_with(headers=headers))
    assert is_from_self(mail, ["Richard's PBeM Server <pbm@example.org>"]) is expected


def test_is_from_self_without_sender() -> None:
    headers = BASE_HEADERS.replace("From: Alice <alice@example.com>\n", "")
    assert not is_from_self(parse_message(mail_with(headers=headers)), ["pbm@example.org"])
