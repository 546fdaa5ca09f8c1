"""Authentication-Results (RFC 8601): parsing, and the verdict of trusted producers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbm.mail.authresults import (
    AuthResult,
    SenderVerdict,
    parse_authentication_results,
    sender_verdict,
)
from pbm.mail.inbound import parse_message

TRUSTED = ["mx.example.org"]


def test_parse_a_full_header() -> None:
    parsed = parse_authentication_results(
        "mx.example.org 1; dkim=pass (2048-bit key) header.d=a.test header.i=@a.test"
        ' header.b="AbC/dE+f="; spf=pass (sender SPF authorized) smtp.mailfrom=alice@a.test;'
        ' dmarc=fail reason="policy; says no" (p=reject dis=none) header.from=a.test'
    )
    assert parsed is not None
    assert (parsed.authserv_id, parsed.version) == ("mx.example.org", "1")
    assert parsed.results == (
        AuthResult(
            "dkim",
            "pass",
            None,
            (("header.d", "a.test"), ("header.i", "@a.test"), ("header.b", "AbC/dE+f=")),
        ),
        AuthResult("spf", "pass", None, (("smtp.mailfrom", "alice@a.test"),)),
        AuthResult("dmarc", "fail", "policy; says no", (("header.from", "a.test"),)),
    )


@pytest.mark.parametrize(
    ("value", "authserv_id", "methods"),
    [
        ("mx.example.org; none", "mx.example.org", []),
        ('"mx.example.org"; dkim=pass', "mx.example.org", [("dkim", "pass")]),
        ("MX.Example.ORG;DKIM = Fail header.d=a.test", "MX.Example.ORG", [("dkim", "fail")]),
        ("mx.example.org (comment; semicolon); dmarc=pass", "mx.example.org", [("dmarc", "pass")]),
        ("mx.example.org; dkim/1=pass", "mx.example.org", [("dkim", "pass")]),
        ("mx.example.org; ; junk; =; dmarc=fail", "mx.example.org", [("dmarc", "fail")]),
        ("mx.example.org; dkim=pass (unclosed comment", "mx.example.org", [("dkim", "pass")]),
        ('mx.example.org; dkim=pass header.b="unterminated', "mx.example.org", [("dkim", "pass")]),
        # No authserv-id, as some providers write it: results read, id empty.
        ("spf=pass smtp.mailfrom=a.test; dmarc=fail header.from=a.test", "",
         [("spf", "pass"), ("dmarc", "fail")]),
    ],
)  # fmt: skip
def test_parse_odd_headers(value: str, authserv_id: str, methods: list[tuple[str, str]]) -> None:
    parsed = parse_authentication_results(value)
    assert parsed is not None
    assert parsed.authserv_id == authserv_id
    assert [(r.method, r.result) for r in parsed.results] == methods


@pytest.mark.parametrize(
    "value", ["", "   ", ";;;", "(only a comment)", "= ; dkim=pass", "<mx@example.org>; dkim=pass"]
)
def test_junk_names_nothing(value: str) -> None:
    assert parse_authentication_results(value) is None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_parsing_never_raises(value: str) -> None:
    parse_authentication_results(value)
    verdict = sender_verdict([value, value], TRUSTED)
    assert isinstance(verdict, SenderVerdict)


@pytest.mark.parametrize(
    ("values", "failed", "reason"),
    [
        (["mx.example.org; dmarc=fail header.from=a.test"], True, "dmarc=fail"),
        (["mx.example.org; dkim=fail header.d=a.test"], True, "dkim=fail"),
        (["mx.example.org; dkim=permerror header.d=a.test"], True, "dkim=permerror"),
        (["mx.example.org; dkim=fail header.d=x.test; dkim=pass header.d=a.test"], False,
         "dkim=fail, dkim=pass"),
        (["mx.example.org; dkim=pass header.d=a.test; dmarc=fail header.from=a.test"], True,
         "dmarc=fail"),
        (["mx.example.org; dkim=temperror; dmarc=temperror"], False,
         "dkim=temperror, dmarc=temperror"),
        (["mx.example.org; dkim=none; spf=fail smtp.mailfrom=a.test"], False, "dkim=none"),
        (["mx.example.org; spf=pass smtp.mailfrom=a.test"], False, "no dmarc or dkim result"),
        (["mx.example.org; dmarc=pass; dkim=pass"], False, "dmarc=pass, dkim=pass"),
    ],
)  # fmt: skip
def test_verdicts(values: list[str], failed: bool, reason: str) -> None:
    verdict = sender_verdict(values, TRUSTED)
    assert verdict == SenderVerdict(failed, "mx.example.org", reason, True)


def test_only_the_topmost_header_of_a_trusted_id_counts() -> None:
    # The sender wrote the lower header himself; the MTA added the top one last.
    forged_pass_below = ["mx.example.org; dmarc=fail", "mx.example.org; dmarc=pass; dkim=pass"]
    assert sender_verdict(forged_pass_below, TRUSTED).failed
    forged_fail_below = ["mx.example.org; dmarc=pass", "mx.example.org; dmarc=fail"]
    assert not sender_verdict(forged_fail_below, TRUSTED).failed


def test_authserv_id_is_compared_case_insensitively() -> None:
    verdict = sender_verdict(["MX.EXAMPLE.ORG; dmarc=fail"], ["Mx.Example.Org"])
    assert verdict.failed and verdict.checked and verdict.authserv_id == "MX.EXAMPLE.ORG"


def test_untrusted_ids_are_ignored_entirely() -> None:
    values = ["evil.test; dmarc=fail", "mx.example.org.evil.test; dkim=fail", "; dmarc=fail"]
    verdict = sender_verdict(values, TRUSTED)
    assert verdict == SenderVerdict(False, None, "no Authentication-Results of a trusted id", False)
    # An untrusted header on top does not hide the trusted one below it.
    values = ["evil.test; dmarc=pass", "mx.example.org; dmarc=fail"]
    assert sender_verdict(values, TRUSTED).failed


def test_any_trusted_id_that_fails_decides() -> None:
    values = ["mx1.example.org; dmarc=pass", "mx2.example.org; dkim=fail"]
    verdict = sender_verdict(values, ["mx1.example.org", "mx2.example.org"])
    assert verdict == SenderVerdict(True, "mx2.example.org", "dkim=fail", True)
    verdict = sender_verdict(values, ["mx1.example.org"])
    assert verdict == SenderVerdict(False, "mx1.example.org", "dmarc=pass", True)


def test_no_trusted_ids_nothing_fails() -> None:
    verdict = sender_verdict(["mx.example.org; dmarc=fail"], [])
    assert verdict == SenderVerdict(False, None, "no trusted authserv-id configured", False)
    assert not sender_verdict(["mx.example.org; dmarc=fail"], ["", "  "]).checked


def test_inbound_mail_keeps_the_values_topmost_first_and_unfolded() -> None:
    raw = (
        b"Authentication-Results: mx.example.org;\n"
        b"\tdkim=fail header.d=a.test;\n"
        b"\tdmarc=fail header.from=a.test\n"
        b"Received: from x by mx.example.org; Mon, 07 Dec 2026 09:00:00 +0000\n"
        b"Authentication-Results: mx.example.org; dmarc=pass\n"
        b"From: alice@a.test\nSubject: b2 SDQF\n\nbody\n"
    )
    mail = parse_message(raw)
    assert mail.authentication_results == (
        "mx.example.org;\tdkim=fail header.d=a.test;\tdmarc=fail header.from=a.test",
        "mx.example.org; dmarc=pass",
    )
    verdict = sender_verdict(mail.authentication_results, TRUSTED)
    assert verdict.failed and verdict.reason == "dmarc=fail"
    assert parse_message(b"From: a@a.test\n\nx\n").authentication_results == ()
