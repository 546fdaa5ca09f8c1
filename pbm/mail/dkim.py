"""DKIM signing (RFC 6376) of outgoing mail, as the last step before it leaves pbm.

`[mail.dkim]` names the signing domain, the selector and the private key file; with it,
`pbm serve` wraps its transport (SMTP relay or Maildir) in `SigningTransport`, so a mail
is signed after its HTML part was added and nothing changes it afterwards. Without it
nothing is signed, and an MTA may sign instead (docs/deliverability.md).

The signature is rsa-sha256 with relaxed/relaxed canonicalization (a relay that refolds
a header or trims trailing blanks keeps it valid) and covers the headers a reader sees
and a list manager relies on: From, To, Subject, Date, Message-ID, the threading
headers, the MIME headers and every `List-*` header present. From and Subject are
signed once more than they occur, so a header of that name added on the way breaks
the signature instead of being shown to the reader (oversigning).

`make_key` writes a new 2048-bit key (mode 0600) and `dns_record` the TXT record that
publishes its public half at `SELECTOR._domainkey.DOMAIN`.
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
from dataclasses import dataclass, replace
from email.parser import BytesHeaderParser
from pathlib import Path

import dkim
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from pbm.config import ConfigError, DkimSettings
from pbm.mail.smtp_out import OutgoingMail, Transport

KEY_BITS = 2048
# The headers signed whenever present, each as often as it occurs.
SIGNED_HEADERS = (
    "from",
    "to",
    "subject",
    "date",
    "message-id",
    "in-reply-to",
    "references",
    "mime-version",
    "content-type",
    "content-transfer-encoding",
)
# Signed one extra time, so that one added later does not pass for the signed one.
OVERSIGNED_HEADERS = ("from", "subject")
# A selector is one or more DNS labels (RFC 6376 section 3.1).
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
SELECTOR = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
# A TXT record's strings hold at most 255 octets each (RFC 1035 section 3.3.14).
TXT_STRING_OCTETS = 255


class DkimKeyError(ConfigError):
    """The configured key file is missing, unreadable or not an RSA private key."""


def headers_to_sign(raw: bytes) -> list[str]:
    """The `h=` list for `raw`: the signed headers present (with repeats), every
    `List-*` header, and the oversigned ones once more."""
    present = [name.lower() for name in BytesHeaderParser().parsebytes(raw)]
    chosen = [n for n in present if n in SIGNED_HEADERS or n.startswith("list-")]
    return chosen + [n for n in OVERSIGNED_HEADERS if n in present]


@dataclass(frozen=True)
class DkimSigner:
    """Signs mail for `domain` with the key published under `selector`."""

    domain: str
    selector: str
    private_key: bytes  # PEM

    def sign(self, raw: bytes) -> bytes:
        """`raw` with a DKIM-Signature header in front."""
        signature = dkim.sign(
            raw,
            self.selector.encode("ascii"),
            self.domain.encode("ascii"),
            self.private_key,
            canonicalize=(b"relaxed", b"relaxed"),
            signature_algorithm=b"rsa-sha256",
            include_headers=[h.encode("ascii") for h in headers_to_sign(raw)],
        )
        return signature + raw

    @property
    def public_key(self) -> bytes:
        """The DER SubjectPublicKeyInfo of the key, as the DNS record's `p=` holds it."""
        return public_key_der(self.private_key)


def load_signer(settings: DkimSettings) -> DkimSigner:
    """The signer `[mail.dkim]` describes; DkimKeyError says what is wrong with its key."""
    try:
        pem = settings.key_file.read_bytes()
    except OSError as exc:
        raise DkimKeyError(f"[mail.dkim] key_file {settings.key_file}: {exc.strerror}") from exc
    try:
        public_key_der(pem)
    except (ValueError, TypeError) as exc:
        raise DkimKeyError(
            f"[mail.dkim] key_file {settings.key_file} is not an RSA private key in PEM "
            "(make one with `pbm mail dkim-key`)"
        ) from exc
    if not SELECTOR.fullmatch(settings.selector):
        raise DkimKeyError(
            f"[mail.dkim] selector {settings.selector!r}: write DNS labels of letters, "
            "digits and hyphens, such as pbm1 or 2026-11"
        )
    domain = domain_name(settings.domain)
    if domain is None:
        raise DkimKeyError(f"[mail.dkim] domain {settings.domain!r} is no domain name")
    return DkimSigner(domain, settings.selector, pem)


def domain_name(text: str) -> str | None:
    """`text` as the d= of a signature (IDNA, ASCII), or None when it is no domain name:
    a signature or DNS record under "ex ample" or "https://x" verifies nowhere."""
    try:
        domain = text.encode("idna").decode("ascii")
    except UnicodeError:
        return None
    return domain if SELECTOR.fullmatch(domain) else None


def make_key() -> bytes:
    """A new 2048-bit RSA private key, PEM (PKCS#8)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def write_key(path: Path, pem: bytes) -> None:
    """Write `pem` to a new file readable by its owner only (an existing one is kept)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(pem)


def public_key_der(private_pem: bytes) -> bytes:
    """The public half of an RSA private key (PEM), as DER SubjectPublicKeyInfo; raises
    ValueError for anything else."""
    key = serialization.load_pem_private_key(private_pem, password=None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError("not an RSA key")
    return key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def record_text(public_der: bytes) -> str:
    """The TXT record's content: `v=DKIM1; k=rsa; p=...`."""
    return f"v=DKIM1; k=rsa; p={base64.b64encode(public_der).decode('ascii')}"


def record_name(selector: str, domain: str) -> str:
    return f"{selector}._domainkey.{domain}"


def dns_record(selector: str, domain: str, public_der: bytes) -> str:
    """The record in zone-file form, its text split into strings of at most 255 octets."""
    text = record_text(public_der)
    strings = [text[i : i + TXT_STRING_OCTETS] for i in range(0, len(text), TXT_STRING_OCTETS)]
    quoted = " ".join(f'"{s}"' for s in strings)
    return f"{record_name(selector, domain)}. IN TXT ( {quoted} )"


class SigningTransport:
    """A transport that signs each mail and hands it to the transport it wraps."""

    def __init__(self, inner: Transport, signer: DkimSigner) -> None:
        self.inner = inner
        self.lanes = inner.lanes
        self.signer = signer

    async def send(self, mail: OutgoingMail) -> dict[str, str]:
        # in a thread: dkimpy's RSA is pure Python and would stall the event loop
        raw = await asyncio.to_thread(self.signer.sign, mail.raw)
        return await self.inner.send(replace(mail, raw=raw))

    async def close(self) -> None:
        await self.inner.close()
