"""The intake listeners: SMTP and LMTP servers on their endpoints, and the IMAP
intake, each storing what it takes in through the daemon's `store_for`."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable

from pbm.config import ConfigError
from pbm.mail.imap_in import ImapIntake
from pbm.mail.lmtp_in import start_listener
from pbm.mail.settings import MailSettings
from pbm.runners.base import Runner, Signals

Store = Callable[[bytes], Awaitable[int]]


class Listeners:
    """The SMTP and LMTP servers: `start` opens them, `stop` closes them (first, so that
    no mail comes in while the workers finish)."""

    def __init__(self, settings: MailSettings, store_for: Callable[[str], Store]) -> None:
        self.settings = settings
        self.store_for = store_for
        self.servers: list[asyncio.Server] = []

    async def start(self) -> None:
        s = self.settings
        for endpoint, lmtp in ((s.smtp_listen, False), (s.lmtp_listen, True)):
            if endpoint is None:
                continue
            kind = "lmtp" if lmtp else "smtp"
            try:
                server = await start_listener(
                    endpoint, self.store_for(kind), lmtp=lmtp, max_bytes=s.max_message_bytes
                )
            except OSError as exc:
                # a port in use (another daemon) is a setting to change, not a traceback
                await self.stop()
                why = os.strerror(exc.errno) if exc.errno else str(exc)
                raise ConfigError(
                    f"[mail.listen] {kind} {endpoint}: cannot listen there: {why}"
                ) from exc
            self.servers.append(server)

    async def stop(self) -> None:
        for server in self.servers:
            server.close()
        for server in self.servers:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(server.wait_closed(), 5)


class Imap(Runner):
    """The IMAP intake: fetches new mail until the daemon stops."""

    name = "imap"

    def __init__(self, signals: Signals, intake: ImapIntake) -> None:
        super().__init__(signals)
        self.intake = intake

    async def run(self) -> None:
        await self.intake.run()
