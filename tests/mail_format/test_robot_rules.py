"""Robot screening for issue #11: auto-replies in many languages, lists, loops, reports."""

from __future__ import annotations

import pytest

from pbm.mail.inbound import parse_message

BASE = (
    "From: Alice <alice@a.test>\n"
    "To: pbm@example.org\n"
    "Subject: {subject}\n"
    "Date: Mon, 07 Dec 2026 09:00:00 +0000\n"
    "Message-ID: <base@a.test>\n"
)


def robot(subject: str = "quarto show 101", extra: str = "", body: str = "hello\n") -> str | None:
    raw = BASE.format(subject=subject) + extra + "\n" + body
    return parse_message(raw.encode()).robot


AUTO_REPLY_SUBJECTS = [
    # English
    "Automatic reply: Quarto Board 101 alice",
    "Auto-Reply: Quarto Board 101 alice",
    "AutoReply",
    "Auto Response: your mail",
    "Out of Office: back on Monday",
    "Out of the office",
    "Out-of-office reply",
    # German
    "Automatische Antwort: Quarto Board 101 alice",
    "Abwesenheitsnotiz: Quarto Board 101 alice",
    "Abwesend bis 20.12.",
    "Abwesenheit",
    # French
    "Réponse automatique : Quarto Board 101 alice",
    "Absent du bureau",
    "Absence du 7 au 20 décembre",
    # Spanish
    "Respuesta automática: Quarto Board 101 alice",
    "Fuera de la oficina",
    # Italian
    "Risposta automatica: Quarto Board 101 alice",
    "Fuori sede fino al 20",
    # Portuguese
    "Resposta automática: Quarto Board 101 alice",
    "Ausente do escritório",
    # Dutch
    "Automatisch antwoord: Quarto Board 101 alice",
    "Afwezig: Quarto Board 101 alice",
    # Swedish, Norwegian, Danish, Finnish
    "Autosvar: Quarto Board 101 alice",
    "Frånvaro: Quarto Board 101 alice",
    "Frånvaromeddelande",
    "Fravær",
    "Automaattinen vastaus: Quarto Board 101 alice",
    # Polish, Czech
    "Odpowiedź automatyczna: Quarto Board 101 alice",
    "Automatyczna odpowiedź",
    "Automatická odpověď: Quarto Board 101 alice",
    # Russian, Ukrainian
    "Автоматический ответ: Quarto Board 101 alice",
    "Автоответ: Quarto Board 101 alice",
    "автоответ",
    "Автоматична відповідь: Quarto Board 101 alice",
    # Chinese
    "自动回复: Quarto Board 101 alice",
    "自动回复：Quarto Board 101 alice",
    "自動回覆: Quarto Board 101 alice",
    "自動回復",
    "自动答复",
    # Japanese
    "自動応答: Quarto Board 101 alice",
    "自動返信: Quarto Board 101 alice",
    "自動応答メッセージ",
    "不在のお知らせ",
    # Korean
    "부재중: Quarto Board 101 alice",
    "자동 응답: Quarto Board 101 alice",
    "자동회신",
    # After reply markers and list tags
    "Re: Automatic reply: Quarto Board 101 alice",
    "AW: Automatische Antwort: Quarto Board 101 alice",
    "RE: [EXTERNAL] Out of Office: x",
    "回复: 自动回复: Quarto Board 101 alice",
    "答复: 自動応答",
    "Отв: Автоответ",
]


@pytest.mark.parametrize("subject", AUTO_REPLY_SUBJECTS)
def test_auto_reply_subjects_in_many_languages(subject: str) -> None:
    assert robot(subject) == "auto-reply subject"


@pytest.mark.parametrize("subject", AUTO_REPLY_SUBJECTS[:6])
def test_encoded_auto_reply_subjects(subject: str) -> None:
    encoded = "=?UTF-8?B?" + __import__("base64").b64encode(subject.encode()).decode() + "?="
    assert robot(encoded) == "auto-reply subject"


@pytest.mark.parametrize(
    "subject",
    [
        "quarto move 101 alice secret b2 SDQF",
        "vacation on",  # a pbm command, never an out-of-office subject
        "vacation 14 alice secret",
        "help",
        "Re: Quarto Board 101 alice",
        "signup absent secret",
        "quarto challenge alice bob",
        "multiple",
        "Absentee players in board 101",
        "Autoresponder test for my mailbox",
        "Reply to the automatic reply, please",
        "My out of office: ignore it",
        "Quarto Board 101: Automatic reply",
        "Why did I get an auto-reply?",
        "自分の手: b2",
        "",
    ],
)
def test_people_subjects_are_not_robots(subject: str) -> None:
    assert robot(subject) is None


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ("X-Mailman-Version: 2.1.39\n", "mailing list mail (X-Mailman-Version)"),
        ("List-Id: <pbm-list.lists.test>\n", "mailing list mail (List-Id)"),
        ("List-Unsubscribe: <mailto:x-leave@lists.test>\n", "mailing list mail (List-Unsubscribe)"),
        ("List-Archive: <https://lists.test/x>\n", "mailing list mail (List-Archive)"),
        ("List-Help: <mailto:x-request@lists.test>\n", "mailing list mail (List-Help)"),
        ("List-Subscribe: <mailto:x-join@lists.test>\n", "mailing list mail (List-Subscribe)"),
        ("List-Owner: <mailto:x-owner@lists.test>\n", "mailing list mail (List-Owner)"),
        ("List-Post: NO\n", "mailing list mail (List-Post)"),
        ("LIST-SOFTWARE: Something 1.0\n", "mailing list mail (LIST-SOFTWARE)"),
        ("X-BeenThere: pbm-list@lists.test\n", "mailing list mail (X-BeenThere)"),
        ("X-Mailing-List: <pbm-list@lists.test>\n", "mailing list mail (X-Mailing-List)"),
        ("Mailing-List: list pbm-list@lists.test; contact x-help@lists.test\n",
         "mailing list mail (Mailing-List)"),
        ("X-Loop: alice@a.test\n", "mail loop header X-Loop"),
        ("X-MS-Exchange-Inbox-Rules-Loop: alice@a.test\n",
         "mail loop header X-MS-Exchange-Inbox-Rules-Loop"),
        ("X-Failed-Recipients: bob@b.test\n", "bounce header X-Failed-Recipients"),
    ],
)  # fmt: skip
def test_list_loop_and_bounce_headers(header: str, reason: str) -> None:
    assert robot(extra=header) == reason


@pytest.mark.parametrize(
    "header",
    [
        "Disposition-Notification-To: Alice <alice@a.test>\n",
        "Return-Receipt-To: alice@a.test\n",
        "X-Auto-Response-Suppress: All\n",
        "X-Auto-Response-Suppress: OOF, AutoReply\n",
        "Listing: not a list header\n",
        "X-List: nothing\n",
    ],
)
def test_not_robot_signs_on_their_own(header: str) -> None:
    assert robot(extra=header) is None


@pytest.mark.parametrize(
    ("sender", "reason"),
    [
        ("pbm-list-request@lists.test", "mailing list sender pbm-list-request@lists.test"),
        ("pbm-list-bounces@lists.test", "mailing list sender pbm-list-bounces@lists.test"),
        (
            "pbm-list-bounces+alice=a.test@lists.test",
            "mailing list sender pbm-list-bounces+alice=a.test@lists.test",
        ),
        ("pbm-list-owner@lists.test", "mailing list sender pbm-list-owner@lists.test"),
        ("owner-pbm-list@lists.test", "mailing list sender owner-pbm-list@lists.test"),
        ("Mailman <mailman@lists.test>", "mailing list sender mailman@lists.test"),
        ("majordomo@lists.test", "mailing list sender majordomo@lists.test"),
        ("bounces+srs=x@lists.test", "robot sender bounces+srs=x@lists.test"),
    ],
)
def test_list_senders(sender: str, reason: str) -> None:
    raw = BASE.format(subject="help").replace("Alice <alice@a.test>", sender) + "\nhelp\n"
    assert parse_message(raw.encode()).robot == reason


@pytest.mark.parametrize(
    "sender",
    ["requester@a.test", "owner@a.test", "request@a.test", "the-owners@a.test", "listowner@a.test"],
)
def test_people_senders(sender: str) -> None:
    raw = BASE.format(subject="help").replace("Alice <alice@a.test>", sender) + "\nhelp\n"
    assert parse_message(raw.encode()).robot is None


MDN_WITHOUT_REPORT_TYPE = (
    "MIME-Version: 1.0\n"
    'Content-Type: multipart/mixed; boundary="b"\n'
    "\n--b\nContent-Type: text/plain\n\nYour message was displayed.\n"
    "\n--b\nContent-Type: message/disposition-notification\n\n"
    "Final-Recipient: rfc822;alice@a.test\n"
    "Disposition: manual-action/MDN-sent-manually; displayed\n"
    "\n--b--\n"
)


def test_mdn_part_without_report_type_is_a_robot() -> None:
    raw = BASE.format(subject="Read: Quarto Board 101 alice") + MDN_WITHOUT_REPORT_TYPE
    reason = parse_message(raw.encode()).robot
    assert reason == "delivery or disposition report (disposition-notification)"


def test_dsn_part_without_report_type_is_a_robot() -> None:
    raw = BASE.format(subject="x") + MDN_WITHOUT_REPORT_TYPE.replace(
        "disposition-notification", "delivery-status"
    )
    assert parse_message(raw.encode()).robot == "delivery or disposition report (delivery-status)"


def test_a_mail_asking_for_a_receipt_is_answered() -> None:
    # Disposition-Notification-To asks for an MDN; it is ordinary mail, not one.
    extra = "Disposition-Notification-To: alice@a.test\n"
    assert robot("quarto show 101", extra=extra) is None
