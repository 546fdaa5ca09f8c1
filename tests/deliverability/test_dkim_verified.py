"""Every kind of mail pbm sends, signed by pbm's signer, passes OpenDKIM's verification
with the key `pbm mail dkim-key` made, looked up in a real DNS server (dnsmasq) on
loopback; List-* headers are inside the signature, and changing a signed header or
adding a From or Subject breaks it."""

from __future__ import annotations

import asyncio
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from email.parser import BytesHeaderParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pbm.cli import app
from pbm.config import Config, ConfigError, DkimSettings
from pbm.daemon import Daemon
from pbm.mail.dkim import (
    OVERSIGNED_HEADERS,
    SIGNED_HEADERS,
    SigningTransport,
    load_signer,
    make_key,
    write_key,
)
from pbm.mail.smtp_out import OutgoingMail
from pbm.store.engine import make_engine
from pbm.store.schema import init_db
from tests.deliverability.conftest import DnsServer, Zone, opendkim_verify, start_dns, stop_dns
from tests.deliverability.mail_kinds import KINDS, a_move, finished, fresh_server, make_mail
from tests.server.conftest import SERVER

DOMAIN = "example.org"
SELECTOR = "pbm1"
runner = CliRunner()


@dataclass(frozen=True)
class SigningSetup:
    settings: DkimSettings
    dns: DnsServer


def published_text(output: str) -> str:
    """The TXT record's text from `pbm mail dkim-key`'s output: its strings joined."""
    [line] = [line for line in output.splitlines() if "._domainkey." in line]
    return "".join(re.findall(r'"([^"]*)"', line))


@pytest.fixture(scope="module")
def signing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SigningSetup]:
    """The key pbm makes, and a DNS server publishing the record pbm printed for it."""
    directory = tmp_path_factory.mktemp("dkim")
    key_file = directory / "dkim.pem"
    config = directory / "pbm.toml"
    config.write_text(f'[server]\naddress = "{SERVER}"\ndata_dir = "{directory}"\n')
    result = runner.invoke(
        app,
        [
            "--config",
            str(config),
            "mail",
            "dkim-key",
            "--selector",
            SELECTOR,
            "--out",
            str(key_file),
        ],
    )
    assert result.exit_code == 0, result.output
    assert f"{SELECTOR}._domainkey.{DOMAIN}. IN TXT" in result.output
    zone = Zone(txt={f"{SELECTOR}._domainkey.{DOMAIN}": [published_text(result.output)]})
    dns = start_dns(zone, directory / "dns", [DOMAIN])
    try:
        yield SigningSetup(DkimSettings(domain=DOMAIN, selector=SELECTOR, key_file=key_file), dns)
    finally:
        stop_dns(dns)


class Captured:
    """A transport that keeps what it was handed (the bytes that would go over SMTP)."""

    lanes = 1

    def __init__(self) -> None:
        self.raw: list[bytes] = []

    async def send(self, mail: OutgoingMail) -> dict[str, str]:
        self.raw.append(mail.raw)
        return {}

    async def close(self) -> None:
        pass


def signed(raw: bytes, settings: DkimSettings) -> bytes:
    """`raw` as the daemon's signing transport hands it on."""
    captured = Captured()
    transport = SigningTransport(captured, load_signer(settings))
    asyncio.run(transport.send(OutgoingMail(1, SERVER, ("x@players.example",), raw, 0)))
    [out] = captured.raw
    return out


def signed_header_names(raw: bytes) -> list[str]:
    """The h= list of the mail's DKIM-Signature."""
    value = str(BytesHeaderParser().parsebytes(raw)["DKIM-Signature"])
    found = re.search(r"\bh=([^;]*)", value)
    assert found is not None
    return [name.strip().lower() for name in "".join(found.group(1).split()).split(":")]


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_of_mail_passes_opendkim(
    kind: str, signing: SigningSetup, tmp_path: Path
) -> None:
    raw = signed(make_mail(kind, tmp_path), signing.settings)
    results = opendkim_verify(raw, signing.dns, tmp_path / "verify")
    assert "dkim=pass" in results and f"header.d={DOMAIN}" in results, results
    names = signed_header_names(raw)
    present = [n.lower() for n in BytesHeaderParser().parsebytes(raw) if n != "DKIM-Signature"]
    for name in present:
        if name in SIGNED_HEADERS or name.startswith("list-"):
            assert names.count(name) >= present.count(name), name
    for name in OVERSIGNED_HEADERS:
        assert names.count(name) == present.count(name) + 1, name
    assert {"from", "to", "subject", "date", "message-id", "mime-version"} <= set(names)


def with_headers(raw: bytes, headers: list[tuple[str, str]]) -> bytes:
    """`raw` with `headers` put in front (as a header-adding step would)."""
    return b"".join(f"{name}: {value}\r\n".encode() for name, value in headers) + raw


LIST_HEADERS = [
    ("List-Id", "<quarto-101.boards.example.org>"),
    ("List-Unsubscribe", "<mailto:pbm+unsub-Zk3q@example.org>"),
    ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"),
]


def test_list_headers_are_signed_and_changing_one_fails(
    signing: SigningSetup, tmp_path: Path
) -> None:
    with fresh_server(tmp_path / "server") as server:
        raw = finished(server, a_move(server))
    raw = signed(with_headers(raw, LIST_HEADERS), signing.settings)
    assert {"list-id", "list-unsubscribe", "list-unsubscribe-post"} <= set(signed_header_names(raw))
    assert "dkim=pass" in opendkim_verify(raw, signing.dns, tmp_path / "good")
    changed = raw.replace(b"unsub-Zk3q", b"unsub-XXXX")
    assert changed != raw
    assert "dkim=fail" in opendkim_verify(changed, signing.dns, tmp_path / "changed")


@pytest.mark.parametrize("name", ["From", "Subject"])
def test_an_added_from_or_subject_breaks_the_signature(
    name: str, signing: SigningSetup, tmp_path: Path
) -> None:
    raw = signed(make_mail("message", tmp_path / "server"), signing.settings)
    # DKIM takes the last instance of a header first: the added one is what is shown
    head, _, body = raw.partition(b"\r\n\r\n")
    forged = head + f"\r\n{name}: someone-else@example.org".encode() + b"\r\n\r\n" + body
    assert "dkim=pass" in opendkim_verify(raw, signing.dns, tmp_path / "good")
    assert "dkim=fail" in opendkim_verify(forged, signing.dns, tmp_path / "forged")


def test_the_daemon_signs_what_it_writes_to_its_outbox(
    signing: SigningSetup, tmp_path: Path
) -> None:
    config = Config(
        data_dir=tmp_path,
        database_url=f"sqlite:///{tmp_path / 'pbm.sqlite3'}",
        server_address=SERVER,
        password_cost=4,
        dkim=signing.settings,
    )
    engine = make_engine(config.database_url)
    init_db(engine)
    engine.dispose()
    daemon = Daemon(config)
    with fresh_server(tmp_path) as server:
        server.config = config
        server.send("alice@players.example", "signup alice secret")
    try:
        assert asyncio.run(daemon.sender.drain()) == 1
    finally:
        daemon.engine.dispose()
    [path] = (tmp_path / "outbox" / "new").iterdir()
    raw = path.read_bytes()
    assert raw.startswith(b"DKIM-Signature: ")
    assert "dkim=pass" in opendkim_verify(raw, signing.dns, tmp_path / "verify")


def test_a_key_file_that_is_missing_or_no_key_is_a_configuration_error(tmp_path: Path) -> None:
    missing = DkimSettings(domain=DOMAIN, selector=SELECTOR, key_file=tmp_path / "none.pem")
    with pytest.raises(ConfigError, match=r"\[mail.dkim\] key_file .*none.pem"):
        load_signer(missing)
    bad = tmp_path / "bad.pem"
    bad.write_text("not a key\n")
    with pytest.raises(ConfigError, match=r"not an RSA private key in PEM .*pbm mail dkim-key"):
        load_signer(DkimSettings(domain=DOMAIN, selector=SELECTOR, key_file=bad))
    key_file = tmp_path / "key.pem"
    write_key(key_file, make_key())
    with pytest.raises(ConfigError, match="selector 'pbm 1': write DNS labels"):
        load_signer(DkimSettings(domain=DOMAIN, selector="pbm 1", key_file=key_file))
    # IDNA took "ex ample" as it was: every mail was signed for a domain no DNS has.
    with pytest.raises(ConfigError, match="domain 'ex ample' is no domain name"):
        load_signer(DkimSettings(domain="ex ample", selector=SELECTOR, key_file=key_file))


def test_dkim_key_writes_a_private_file_and_never_overwrites(tmp_path: Path) -> None:
    config = tmp_path / "pbm.toml"
    config.write_text(f'[server]\naddress = "{SERVER}"\ndata_dir = "{tmp_path}"\n')
    out = tmp_path / "key.pem"
    args = ["--config", str(config), "mail", "dkim-key", "--domain", "club.example", "--out"]
    first = runner.invoke(app, [*args, str(out)])
    assert first.exit_code == 0, first.output
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert "pbm1._domainkey.club.example. IN TXT" in first.output
    assert 'domain = "club.example"' in first.output
    key = out.read_bytes()
    again = runner.invoke(app, [*args, str(out)])
    assert again.exit_code == 1
    assert "exists; a new key goes in a new file" in again.output
    assert out.read_bytes() == key
    nowhere = runner.invoke(app, ["--config", str(config), "mail", "dkim-key"])
    assert nowhere.exit_code == 2 and "--out FILE" in nowhere.output
    # A record was printed for "https://club.example", which no DNS can publish.
    for bad in ("https://club.example", "club example"):
        wrong = runner.invoke(app, [*args[:-3], "--domain", bad, "--out", str(tmp_path / "k2.pem")])
        assert wrong.exit_code == 2
        assert f"--domain {bad!r}: write a domain name, such as example.org" in wrong.output
    assert not (tmp_path / "k2.pem").exists()
