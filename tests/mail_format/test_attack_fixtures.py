"""The crafted attack mails of tests/data/mail/attacks through parse_message."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbm.mail.addressing import FoundToken, tokens_in
from pbm.mail.authresults import sender_verdict
from pbm.mail.inbound import InboundMail, parse_message, quotable_original

ATTACKS = Path(__file__).resolve().parent.parent / "data" / "mail" / "attacks"
SERVER = "pbm@example.org"
TOKEN = "aaaaaaaaaaaaaaaaaaaa"
NOT_ONE = "From is not exactly one valid address: "


def load(name: str) -> InboundMail:
    return parse_message((ATTACKS / name).read_bytes())


def test_every_attack_is_covered_and_listed_in_the_readme() -> None:
    names = {path.name for path in ATTACKS.glob("*.eml")}
    assert names == set(EXPECTED_ROBOT), "each attack needs its expectation below"
    readme = (ATTACKS / "README.md").read_text(encoding="utf-8")
    for name in names:
        assert f"| `{name}` |" in readme, name


# file: the robot reason parse_message gives (None for mail a person may have sent).
EXPECTED_ROBOT = {
    "forged_from_cve_2023_27043.eml": NOT_ONE + "an unquoted name that holds an address",
    "quoted_name_looks_like_address.eml": None,
    "from_two_addresses.eml": NOT_ONE + "more than one address",
    "from_two_bracketed_addresses.eml": NOT_ONE + "more than one angle-bracketed address",
    "two_from_headers.eml": NOT_ONE + "2 From headers",
    "from_double_at.eml": NOT_ONE + "more than one '@'",
    "from_nul_byte.eml": NOT_ONE + "control character '\\x00'",
    "from_encoded_word_address.eml": NOT_ONE + "an encoded word in the name decodes to an address",
    "from_encoded_word_in_addr_spec.eml": NOT_ONE + "an encoded word in the address",
    "from_latin1_bytes_address.eml": NOT_ONE
    + "bytes that are not UTF-8 in the local part (U+FFFD)",
    "from_latin1_bytes_domain.eml": NOT_ONE + "bytes that are not UTF-8 in the domain (U+FFFD)",
    "from_latin1_bytes_name_only.eml": None,
    "autoreply_chinese_subject.eml": "auto-reply subject",
    "autoreply_russian_subject.eml": "auto-reply subject",
    "mailman_digest.eml": "mailing list mail (X-Mailman-Version)",
    "announcement_list_id_only.eml": "mailing list mail (List-Id)",
    "dsn_exchange_ndr.eml": "delivery or disposition report (delivery-status)",
    "mdn_read_receipt.eml": "delivery or disposition report (disposition-notification)",
    "token_in_foreign_message_id.eml": None,
    "dmarc_fail_token_reply.eml": None,
    "consent_signups_at_victim.eml": None,
    "consent_tournament_for_victim.eml": None,
    "consent_message_500.eml": None,
    "consent_signup_5000_addresses.eml": None,
    "consent_forged_wrong_password.eml": None,
    "consent_variant_spelling.eml": None,
}


@pytest.mark.parametrize(("name", "reason"), sorted(EXPECTED_ROBOT.items()))
def test_robot_reason(name: str, reason: str | None) -> None:
    assert load(name).robot == reason


@pytest.mark.parametrize(
    "name", sorted(name for name, reason in EXPECTED_ROBOT.items() if reason and NOT_ONE in reason)
)
def test_garbled_from_names_nobody(name: str) -> None:
    mail = load(name)
    assert mail.sender == ""
    assert mail.sender_name == ""
    # Nothing that a lenient parser would have guessed survives anywhere else either.
    assert "alice@a.test" not in (mail.reply_to or "")


def test_cve_shape_is_not_read_as_alice() -> None:
    mail = load("forged_from_cve_2023_27043.eml")
    assert mail.sender != "alice@a.test"
    assert tokens_in(mail, SERVER) == [FoundToken(TOKEN, None)]  # the pipeline needs a sender


def test_quoted_name_is_only_a_name() -> None:
    mail = load("quoted_name_looks_like_address.eml")
    assert (mail.sender_name, mail.sender) == ("alice@a.test", "attacker@evil.test")
    assert quotable_original(mail).startswith('From: "alice@a.test" <attacker@evil.test>\n')


@pytest.mark.parametrize(
    ("name", "domain"), [("from_double_at.eml", "c.test"), ("from_nul_byte.eml", "x.y")]
)
def test_garbled_from_gives_no_address_at_the_last_domain(name: str, domain: str) -> None:
    mail = load(name)
    assert domain not in mail.sender
    assert mail.subject == "help"  # a command nobody will be answered for


def test_autoresponders_carry_alices_token_yet_are_robots() -> None:
    chinese = load("autoreply_chinese_subject.eml")
    assert chinese.subject == "自动回复: Quarto Board 101 alice"
    assert chinese.sender == "alice@a.test"
    assert [f.token for f in tokens_in(chinese, SERVER)] == [TOKEN]
    russian = load("autoreply_russian_subject.eml")
    assert russian.subject == "Автоматический ответ: Quarto Board 101 alice"
    assert [f.token for f in tokens_in(russian, SERVER)] == [TOKEN]


def test_mailman_digest_is_a_robot_by_its_sender_too() -> None:
    raw = (ATTACKS / "mailman_digest.eml").read_bytes()
    assert parse_message(raw).sender == "pbm-list-request@lists.test"
    without_header = raw.replace(b"X-Mailman-Version: 2.1.39\n", b"")
    reason = parse_message(without_header).robot
    assert reason == "mailing list sender pbm-list-request@lists.test"


def test_announcement_would_otherwise_ask_for_help() -> None:
    raw = (ATTACKS / "announcement_list_id_only.eml").read_bytes()
    assert parse_message(raw).command_subject.startswith("help")
    assert parse_message(raw.replace(b"List-Id:", b"X-Not-A-List:")).robot is None


def test_dsn_and_mdn_are_robots_by_structure_alone() -> None:
    # Neither sender nor Return-Path gives them away; only the report does.
    dsn = load("dsn_exchange_ndr.eml")
    assert dsn.sender.startswith("microsoftexchange")
    mdn = load("mdn_read_receipt.eml")
    assert mdn.sender == "alice@a.test"


def test_token_in_a_foreign_message_id_is_no_token() -> None:
    mail = load("token_in_foreign_message_id.eml")
    assert mail.sender == "alice@a.test"
    assert mail.in_reply_to == (f"<pbm.{TOKEN}.x@evil.host>",)
    assert tokens_in(mail, SERVER) == []


def test_dmarc_failure_of_the_topmost_trusted_header() -> None:
    mail = load("dmarc_fail_token_reply.eml")
    assert mail.robot is None and mail.sender == "alice@a.test"
    assert len(mail.authentication_results) == 2
    assert mail.authentication_results[0].startswith("mx.example.org; dkim=none")
    verdict = sender_verdict(mail.authentication_results, ["mx.example.org"])
    assert (verdict.failed, verdict.authserv_id, verdict.reason, verdict.checked) == (
        True,
        "mx.example.org",
        "dmarc=fail",
        True,
    )
    # The same mail where nobody is trusted: nothing failed, nothing checked.
    untrusted = sender_verdict(mail.authentication_results, [])
    assert not untrusted.failed and not untrusted.checked


def test_raw_bytes_only_in_the_name_are_shown_guessed_and_the_address_answered() -> None:
    mail = load("from_latin1_bytes_name_only.eml")
    assert (mail.sender, mail.sender_name) == ("rene@a.test", "Ren\u00e9 Dupont")
