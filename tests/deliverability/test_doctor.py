"""`pbm mail doctor` against a real DNS server (dnsmasq on loopback): a complete zone
passes every check (exit 0); each record missing or wrong fails its own check, named,
with the record to publish (exit 1), and only that one."""

from __future__ import annotations

import dataclasses
import json
import re
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pbm.cli import app
from pbm.mail.dkim import make_key, public_key_der, record_text, write_key
from pbm.mail.doctor import aligned
from tests.deliverability.conftest import DnsServer, Zone

DOMAIN = "example.org"
RELAY = f"mail.{DOMAIN}"
SELECTOR = "pbm1"
runner = CliRunner()

StartDns = Callable[[Zone, list[str]], DnsServer]


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """pbm's key file, its record's text, and the text of another key's record."""
    path = tmp_path_factory.mktemp("keys") / "dkim.pem"
    pem = make_key()
    write_key(path, pem)
    return path, record_text(public_key_der(pem)), record_text(public_key_der(make_key()))


def complete_zone(dkim_text: str) -> Zone:
    return Zone(
        txt={
            DOMAIN: ["v=spf1 include:_spf.example.org -all"],
            f"_spf.{DOMAIN}": ["v=spf1 ip4:127.0.0.0/8 mx -all"],
            f"{SELECTOR}._domainkey.{DOMAIN}": [dkim_text],
            f"_dmarc.{DOMAIN}": [f"v=DMARC1; p=quarantine; rua=mailto:postmaster@{DOMAIN}"],
            # an include that includes itself: counted, not followed for ever
            f"loop.{DOMAIN}": [f"v=spf1 include:loop.{DOMAIN} -all"],
        },
        mx=[(DOMAIN, RELAY, 10)],
        hosts=[(RELAY, "127.0.0.1")],
    )


def doctor(
    tmp_path: Path, dns: DnsServer, key_file: Path, *extra: str
) -> tuple[int, dict[str, dict[str, str]], str]:
    """Run `pbm mail doctor` (its JSON, then its text) with [mail.relay] and [mail.dkim]
    set; returns the exit status, the checks by name and the text output."""
    config = tmp_path / "pbm.toml"
    config.write_text(
        f'[server]\naddress = "pbm@{DOMAIN}"\ndata_dir = "{tmp_path}"\n'
        f'[mail]\nnameserver = "{dns.address}"\n'
        f'[mail.relay]\nhost = "{RELAY}"\n'
        f'[mail.dkim]\ndomain = "{DOMAIN}"\nselector = "{SELECTOR}"\nkey_file = "{key_file}"\n'
    )
    base = ["--config", str(config), "mail", "doctor", *extra]
    as_json = runner.invoke(app, [*base, "--json"])
    text = runner.invoke(app, base)
    assert as_json.exit_code == text.exit_code
    checks = {c["name"]: c for c in json.loads(as_json.stdout)["checks"]}
    return as_json.exit_code, checks, text.output


def test_a_complete_zone_passes_every_check(
    tmp_path: Path, dns_server: StartDns, keys: tuple[Path, str, str]
) -> None:
    key_file, dkim_text, _ = keys
    dns = dns_server(complete_zone(dkim_text), [DOMAIN])
    status, checks, text = doctor(tmp_path, dns, key_file)
    assert status == 0, text
    assert {name: c["verdict"] for name, c in checks.items()} == {
        "mx": "pass",
        "spf": "pass",
        "dkim": "pass",
        "dmarc": "pass",
        "ptr": "pass",
    }
    assert "pass  spf    v=spf1 include:_spf.example.org -all (allows mail.example.org)" in text
    assert "pass  ptr    127.0.0.1 -> mail.example.org" in text
    assert "publish" not in text


def without(zone: Zone, name: str) -> Zone:
    return dataclasses.replace(zone, txt={k: v for k, v in zone.txt.items() if k != name})


def with_txt(zone: Zone, name: str, *texts: str) -> Zone:
    return dataclasses.replace(zone, txt={**zone.txt, name: list(texts)})


# (the check that fails, what changes in the zone, what the problem says, what to publish)
BROKEN: dict[str, tuple[str, Callable[[Zone, str], Zone], str, str]] = {
    "no MX": (
        "mx",
        lambda z, _: dataclasses.replace(z, mx=[]),
        "no MX record for example.org",
        "example.org. IN MX 10 mail.example.org.",
    ),
    "no SPF": (
        "spf",
        lambda z, _: without(z, DOMAIN),
        "publish one",
        'example.org. IN TXT "v=spf1 ip4:127.0.0.1 -all"',
    ),
    "SPF without the relay": (
        "spf",
        lambda z, _: with_txt(z, DOMAIN, "v=spf1 ip4:192.0.2.0/24 ~all"),
        "does not allow the relay mail.example.org: 127.0.0.1 (softfail)",
        'example.org. IN TXT "v=spf1 ip4:127.0.0.1 -all"',
    ),
    "two SPF records": (
        "spf",
        lambda z, _: with_txt(z, DOMAIN, "v=spf1 mx -all", "v=spf1 a -all"),
        "more than one SPF record",
        'example.org. IN TXT "v=spf1 ip4:127.0.0.1 -all"',
    ),
    "SPF past its lookup limit": (
        "spf",
        lambda z, _: with_txt(z, DOMAIN, "v=spf1 include:loop.example.org -all"),
        "more than 10 DNS lookups",
        'example.org. IN TXT "v=spf1 ip4:127.0.0.1 -all"',
    ),
    "no DKIM key": (
        "dkim",
        lambda z, _: without(z, f"{SELECTOR}._domainkey.{DOMAIN}"),
        "publish it",
        'pbm1._domainkey.example.org. IN TXT ( "v=DKIM1; k=rsa; p=',
    ),
    "another DKIM key": (
        "dkim",
        lambda z, other: with_txt(z, f"{SELECTOR}._domainkey.{DOMAIN}", other),
        "the published key is not the public half of key_file",
        'pbm1._domainkey.example.org. IN TXT ( "v=DKIM1; k=rsa; p=',
    ),
    "no DMARC": (
        "dmarc",
        lambda z, _: without(z, f"_dmarc.{DOMAIN}"),
        "publish one",
        '_dmarc.example.org. IN TXT "v=DMARC1; p=quarantine; rua=mailto:postmaster@example.org"',
    ),
    "a DMARC policy that is none of the three": (
        "dmarc",
        lambda z, _: with_txt(z, f"_dmarc.{DOMAIN}", "v=DMARC1; p=maybe"),
        "p= must be none, quarantine or reject",
        "_dmarc.example.org. IN TXT",
    ),
    "no PTR": (
        "ptr",
        lambda z, _: dataclasses.replace(z, hosts=[], addresses=[(RELAY, "127.0.0.1")]),
        "127.0.0.1 has no PTR",
        "1.0.0.127.in-addr.arpa. IN PTR mail.example.org.",
    ),
    "a PTR that does not lead back": (
        "ptr",
        lambda z, _: dataclasses.replace(
            z,
            hosts=[],
            addresses=[(RELAY, "127.0.0.1")],
            pointers=[("1.0.0.127.in-addr.arpa", "elsewhere.example.org")],
        ),
        "127.0.0.1's name elsewhere.example.org does not lead back to it",
        "1.0.0.127.in-addr.arpa. IN PTR mail.example.org.",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_each_missing_or_wrong_record_fails_its_check(
    case: str, tmp_path: Path, dns_server: StartDns, keys: tuple[Path, str, str]
) -> None:
    key_file, dkim_text, other_text = keys
    name, breaking, problem, publish = BROKEN[case]
    dns = dns_server(breaking(complete_zone(dkim_text), other_text), [DOMAIN])
    status, checks, text = doctor(tmp_path, dns, key_file)
    assert status == 1, text
    assert checks[name]["verdict"] == "fail", checks[name]
    assert problem in checks[name]["problem"]
    assert publish in checks[name]["publish"]
    assert f"fail  {name:<6}" in text and f"publish: {publish}" in text
    # a zone file takes TXT strings of at most 255 octets: the DKIM key comes in two
    assert all(len(piece) <= 255 for piece in re.findall(r'"([^"]*)"', checks[name]["publish"]))
    others = {n: c["verdict"] for n, c in checks.items() if n != name}
    assert set(others.values()) == {"pass"}, others


def test_dmarc_none_only_warns_and_no_dkim_in_pbm_is_said(
    tmp_path: Path, dns_server: StartDns, keys: tuple[Path, str, str]
) -> None:
    _, dkim_text, _ = keys
    zone = with_txt(complete_zone(dkim_text), f"_dmarc.{DOMAIN}", "v=DMARC1; p=none")
    dns = dns_server(zone, [DOMAIN])
    config = tmp_path / "pbm.toml"
    config.write_text(f'[server]\naddress = "pbm@{DOMAIN}"\ndata_dir = "{tmp_path}"\n')
    result = runner.invoke(
        app,
        ["--config", str(config), "mail", "doctor", "--nameserver", dns.address, "--relay", RELAY],
    )
    assert result.exit_code == 0, result.output  # warnings are no failure
    assert "warn  dkim   pbm signs nothing (no [mail.dkim])" in result.output
    assert "warn  dmarc  v=DMARC1; p=none" in result.output
    assert "pass  spf" in result.output and "pass  ptr" in result.output


def test_a_nameserver_that_is_no_address_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "pbm.toml"
    config.write_text(f'[server]\naddress = "pbm@{DOMAIN}"\ndata_dir = "{tmp_path}"\n')
    result = runner.invoke(
        app, ["--config", str(config), "mail", "doctor", "--nameserver", "dns.example:53"]
    )
    assert result.exit_code == 2
    assert "write an address, IP or IP:PORT" in result.output


def test_a_nameserver_that_does_not_answer_is_said_in_one_short_line(tmp_path: Path) -> None:
    # dnspython's text, three tries' timeouts in one line of 300 columns, was printed
    # after a check line that ended in blanks ("fail  mx     ").
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:
        silent.bind(("127.0.0.1", 0))  # takes the queries and answers none
        port = silent.getsockname()[1]
        config = tmp_path / "pbm.toml"
        config.write_text(f'[server]\naddress = "pbm@{DOMAIN}"\ndata_dir = "{tmp_path}"\n')
        result = runner.invoke(
            app, ["--config", str(config), "mail", "doctor", "--nameserver", f"127.0.0.1:{port}"]
        )
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[1:3] == [
        "fail  mx",
        f"             wrong: the DNS lookup failed: MX {DOMAIN}: "
        f"no answer from 127.0.0.1:{port} within 5 s",
    ]
    assert all(line == line.rstrip() for line in lines)
    assert "timed out" not in result.output


@pytest.mark.parametrize(
    ("a", "b", "strict", "expected"),
    [
        ("games.example.co.uk", "mail.example.co.uk", False, True),
        # two organisations under one public suffix: the last two labels alone (co.uk)
        # judged these aligned
        ("example.co.uk", "other.co.uk", False, False),
        ("alice.github.io", "bob.github.io", False, False),
        ("mail.example.org", "example.org", False, True),
        ("mail.example.org", "example.org", True, False),
        ("Example.ORG.", "example.org", True, True),
        ("mail.bücher.de", "xn--bcher-kva.de", False, True),
    ],
)
def test_dmarc_alignment_follows_the_public_suffix_list(
    a: str, b: str, strict: bool, expected: bool
) -> None:
    assert aligned(a, b, strict) is expected
    assert aligned(b, a, strict) is expected
