"""LMTP and SMTP intake (aiosmtpd): the MTA delivers to pbm, pbm stores and answers.

The handler only stores the message (the shape GNU Mailman uses): it answers 250 after
the store has committed and 451 on any failure (a database locked, full, gone, replaced),
never a 5xx, so the MTA keeps the message and retries; nothing is ever bounced here. The
store function logs what went wrong; the handler logs one warning line per refusal.
Processing happens later, from the store. Plus-addressed recipients (`pbm+TOKEN@host`)
need nothing special here: the raw message keeps its headers and the envelope
recipient is recorded in a `Delivered-To` header when the MTA did not add one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from aiosmtpd.lmtp import LMTP
from aiosmtpd.smtp import SMTP, Envelope, Session

from pbm.logfmt import kv
from pbm.mail.settings import Endpoint

log = logging.getLogger(__name__)

# Stores one raw message durably (committed when it returns); raises on failure.
StoreFn = Callable[[bytes], Awaitable[object]]


class StoringHandler:
    """aiosmtpd handler: accept any recipient, store the message once, answer per recipient."""

    def __init__(self, store: StoreFn, *, lmtp: bool) -> None:
        self._store = store
        self._lmtp = lmtp

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        if b"\ndelivered-to:" not in b"\n" + raw[: raw.find(b"\r\n\r\n") + 2].lower():
            # keep the envelope recipients, which carry plus-address tokens
            added = "".join(f"Delivered-To: {r}\r\n" for r in envelope.rcpt_tos)
            raw = added.encode("utf-8", "replace") + raw
        try:
            await self._store(raw)
        except Exception as exc:
            log.warning(kv("intake_store_failed", via=self.via, error=str(exc) or repr(exc)))
            return self._answer(envelope, "451 4.3.0 temporary failure, try again later")
        log.info(kv("intake_stored", via=self.via, bytes=len(raw), rcpts=len(envelope.rcpt_tos)))
        return self._answer(envelope, "250 2.0.0 stored")

    @property
    def via(self) -> str:
        return "lmtp" if self._lmtp else "smtp"

    def _answer(self, envelope: Envelope, status: str) -> str:
        # LMTP (RFC 2033) answers DATA once per accepted recipient
        if self._lmtp:
            return "\r\n".join(status for _ in envelope.rcpt_tos) or status
        return status


async def start_listener(
    endpoint: Endpoint, store: StoreFn, *, lmtp: bool, max_bytes: int
) -> asyncio.Server:
    """Listen on `endpoint` for LMTP (or SMTP) deliveries; close the server to stop."""
    handler = StoringHandler(store, lmtp=lmtp)
    protocol: type[SMTP] = LMTP if lmtp else SMTP
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: protocol(handler, data_size_limit=max_bytes, hostname="pbm", ident="pbm"),
        host=endpoint.host,
        port=endpoint.port,
    )
    log.info(kv("listening", protocol="lmtp" if lmtp else "smtp", address=str(endpoint)))
    return server
