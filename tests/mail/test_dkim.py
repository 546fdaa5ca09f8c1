"""pbm.mail.dkim and the SPF evaluation of pbm.mail.doctor on their own: which headers are
signed, the key and its DNS record, and SPF terms against records held in a dict (the
real DNS server and OpenDKIM are in tests/deliverability)."""

from __future__ import annotations

import ipaddress
import re
from datetime import UTC, datetime

import dkim
import pytest
from cryptography.hazmat.primitives import serialization

from pbm.mail.compose import compose
from pbm.mail.dkim import DkimSigner, dns_record, headers_to_sign, make_key, public_key_der
from pbm.mail.doctor import Dns, SpfEvaluation, SpfLimit


def a_mail(**headers: str) -> bytes:
    raw = compose(
        sender="PBeM Server <pbm@example.org>",
        to=["alice@players.example"],
        subject="Quarto Board 101 bob",
        body="Summary of Quarto Board 101\n",
        message_id="<m1@example.org>",
        in_reply_to="<c1@players.example>",
        date=datetime(2026, 11, 22, 2, 41, tzinfo=UTC),
    )
    extra = "".join(f"{name.replace('_', '-')}: {value}\r\n" for name, value in headers.items())
    return extra.encode() + raw


def test_the_signed_headers_are_those_present_list_ones_included_from_subject_twice() -> None:
    raw = a_mail(List_Id="<quarto-101.boards.example.org>", List_Unsubscribe="<mailto:u@x.org>")
    names = headers_to_sign(raw)
    assert names.count("from") == 2 and names.count("subject") == 2
    assert {"list-id", "list-unsubscribe", "to", "date", "message-id", "in-reply-to"} <= set(names)
    assert "mime-version" in names and "content-type" in names
    assert "received" not in names and "x-auto-response-suppress" not in names


def test_a_signed_mail_verifies_with_the_published_key_and_not_after_a_change() -> None:
    pem = make_key()
    record = dns_record("pbm1", "example.org", public_key_der(pem))
    text = "".join(re.findall(r'"([^"]*)"', record)).encode()

    def published(name: bytes, timeout: int = 5) -> bytes:
        return text if name == b"pbm1._domainkey.example.org." else b""

    signed = DkimSigner("example.org", "pbm1", pem).sign(a_mail(List_Id="<b.example.org>"))
    assert signed.startswith(b"DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed;")
    assert dkim.verify(signed, dnsfunc=published)
    assert not dkim.verify(
        signed.replace(b"<b.example.org>", b"<c.example.org>"), dnsfunc=published
    )


def test_the_key_is_2048_bits_and_its_record_strings_fit_in_255_octets() -> None:
    pem = make_key()
    key = serialization.load_pem_private_key(pem, password=None)
    assert key.key_size == 2048  # type: ignore[union-attr]
    record = dns_record("pbm1", "example.org", public_key_der(pem))
    assert record.startswith('pbm1._domainkey.example.org. IN TXT ( "v=DKIM1; k=rsa; p=')
    strings = re.findall(r'"([^"]*)"', record)
    assert len(strings) == 2 and all(len(s) <= 255 for s in strings)


class Records(Dns):
    """DNS answers from a dict: (name, type) -> texts."""

    def __init__(self, records: dict[tuple[str, str], list[str]]) -> None:
        self.records = records

    def texts(self, name: str, rdtype: str) -> list[str]:
        return self.records.get((name, rdtype), [])


ZONE = {
    ("example.org", "TXT"): [
        "v=spf1 a/24 mx:mx.example.org ip6:2001:db8::/32 redirect=_s.example.org"
    ],
    ("example.org", "A"): ["192.0.2.10"],
    ("mx.example.org", "MX"): ["10 relay.example.org."],
    ("relay.example.org", "A"): ["198.51.100.7"],
    ("_s.example.org", "TXT"): ["v=spf1 ip4:203.0.113.0/24 ~all"],
}


@pytest.mark.parametrize(
    ("ip", "result"),
    [
        ("192.0.2.200", "pass"),  # a/24
        ("198.51.100.7", "pass"),  # mx of another name
        ("2001:db8::25", "pass"),  # ip6
        ("203.0.113.9", "pass"),  # through the redirect
        ("192.0.3.1", "softfail"),  # the redirect's ~all
    ],
)
def test_spf_terms(ip: str, result: str) -> None:
    evaluation = SpfEvaluation(Records(ZONE))
    assert evaluation.result("example.org", ipaddress.ip_address(ip)) == result


def test_spf_counts_its_lookups() -> None:
    looping = Records({("example.org", "TXT"): ["v=spf1 include:example.org -all"]})
    with pytest.raises(SpfLimit):
        SpfEvaluation(looping).result("example.org", ipaddress.ip_address("192.0.2.1"))
