"""The relay sender's STARTTLS, implicit TLS and AUTH, against aiosmtpd servers on loopback
with a throw-away certificate (Postfix in the test stack speaks plain SMTP only)."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
from pathlib import Path

import pytest
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session

from pbm.mail.settings import RelaySettings
from pbm.mail.smtp_out import OutboxSender, OutgoingMail, SendOutcome, SmtpRelay
from tests.tools import missing

from .conftest import free_ports

RAW = b"From: pbm@example.test\r\nTo: alice@example.test\r\nSubject: tls\r\n\r\nhello\r\n"


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if not shutil.which("openssl"):
        missing("needs openssl (to make the test certificate)")
    d = tmp_path_factory.mktemp("cert")
    key, cert = d / "key.pem", d / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost"),
            *("-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


class Recorder:
    """Accepts mail only from an authenticated session over TLS."""

    def __init__(self) -> None:
        self.received: list[tuple[str, list[str], bool]] = []

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if not session.authenticated:
            return "530 5.7.0 authentication required"
        # At DATA a connection is open and MAIL FROM was given.
        assert server.transport is not None and envelope.mail_from is not None
        encrypted = server.transport.get_extra_info("ssl_object") is not None
        self.received.append((envelope.mail_from, list(envelope.rcpt_tos), encrypted))
        return "250 2.0.0 ok"


def authenticator(server, session, envelope, mechanism, auth_data) -> AuthResult:
    ok = isinstance(auth_data, LoginPassword) and auth_data == (b"pbm", b"right")
    return AuthResult(success=ok)


def contexts(cert: Path, key: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert, key)
    client = ssl.create_default_context(cafile=str(cert))
    return server, client


async def send_through(
    relay: RelaySettings, client_ctx: ssl.SSLContext, implicit: bool, server_ctx: ssl.SSLContext
) -> tuple[Recorder, SendOutcome]:
    recorder = Recorder()

    def protocol() -> SMTP:
        if implicit:
            return SMTP(recorder, authenticator=authenticator, auth_require_tls=False)
        return SMTP(
            recorder,
            tls_context=server_ctx,
            require_starttls=True,
            authenticator=authenticator,
            auth_required=True,
        )

    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        protocol, "127.0.0.1", relay.port, ssl=server_ctx if implicit else None
    )
    transport = SmtpRelay(relay, tls_context=client_ctx)
    try:
        mail = OutgoingMail(1, "pbm@example.test", ("alice@example.test",), RAW, attempts=0)
        outcome = await OutboxSender(queue=None, transport=transport).send_one(mail)  # type: ignore[arg-type]
    finally:
        await transport.close()
        server.close()
        await server.wait_closed()
    return recorder, outcome


@pytest.mark.parametrize("implicit", [False, True], ids=["starttls", "ssl"])
def test_tls_and_auth(certificate: tuple[Path, Path], implicit: bool) -> None:
    server_ctx, client_ctx = contexts(*certificate)
    (port,) = free_ports(1)
    relay = RelaySettings(
        host="127.0.0.1",
        port=port,
        ssl=implicit,
        starttls=not implicit,
        user="pbm",
        password="right",
        timeout_seconds=10,
    )
    recorder, outcome = asyncio.run(send_through(relay, client_ctx, implicit, server_ctx))
    assert outcome.kind == "sent", outcome
    assert recorder.received == [("pbm@example.test", ["alice@example.test"], True)]


def test_refused_login_defers_the_mail(certificate: tuple[Path, Path]) -> None:
    server_ctx, client_ctx = contexts(*certificate)
    (port,) = free_ports(1)
    relay = RelaySettings(
        host="127.0.0.1", port=port, starttls=True, user="pbm", password="wrong", timeout_seconds=3
    )
    recorder, outcome = asyncio.run(send_through(relay, client_ctx, False, server_ctx))
    # a bad password is a setup problem: the mail waits for the fix instead of failing
    assert outcome.kind == "retry" and (outcome.error or "").startswith("connect:")
    assert recorder.received == []
