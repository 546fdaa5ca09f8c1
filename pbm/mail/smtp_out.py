"""The outbox sender: drains queued mail over a few reused SMTP connections, or into a
Maildir.

A mail is marked sent only after the server accepted it, and right then, before its
connection takes the next mail: a crash in between sends again at most the mails in
flight, one per connection, never zero times. Two mails to one address go out one after
the other, in the order they were queued. Temporary failures (4xx answers, a lost or
refused connection, a timeout) are retried with exponential backoff; a permanent
refusal (5xx) marks the mail failed, where `pbm mail outbox` shows it. Sending never
touches game state: the only thing the sender writes is the outbox row's delivery
status.
"""

from __future__ import annotations

import asyncio
import logging
import mailbox
import ssl
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Literal, Protocol

import aiosmtplib

from pbm.logfmt import kv
from pbm.mail.settings import RelaySettings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OutgoingMail:
    id: int
    envelope_from: str
    recipients: tuple[str, ...]
    raw: bytes
    attempts: int
    message_id: str = ""


@dataclass(frozen=True)
class SendOutcome:
    mail_id: int
    kind: Literal["sent", "retry", "failed"]
    error: str | None = None
    delay: timedelta | None = None


class OutboxQueue(Protocol):
    """Where the sender takes mail from and records what became of it."""

    async def due(self, limit: int, held: frozenset[int] = frozenset()) -> list[OutgoingMail]:
        """Claim up to `limit` due mails, none of `held` (the sender's, in hand)."""
        ...

    async def record(self, outcomes: Sequence[SendOutcome]) -> None: ...


class TemporaryFailure(Exception):
    """Try again later: 4xx, connection refused or lost, timeout."""


class PermanentFailure(Exception):
    """Never try again: every recipient or the message itself was refused with 5xx."""


class Transport(Protocol):
    # How many mails it takes at once: the sender keeps that many in flight.
    lanes: int

    async def send(self, mail: OutgoingMail) -> dict[str, str]:
        """Deliver `mail`; returns refused recipients (address -> answer) when some were."""
        ...

    async def close(self) -> None: ...


class MaildirTransport:
    """The embedded default: each mail becomes a file in a local Maildir."""

    lanes = 1  # mailbox.Maildir names its files from a counter that threads would share

    def __init__(self, path: Path) -> None:
        self.path = path
        self._box: mailbox.Maildir | None = None

    async def send(self, mail: OutgoingMail) -> dict[str, str]:
        await asyncio.to_thread(self._add, mail.raw)
        return {}

    def _add(self, raw: bytes) -> None:
        if self._box is None:
            # Maildir(create=True) skips tmp/new/cur when the directory already exists
            for sub in ("tmp", "new", "cur"):
                (self.path / sub).mkdir(parents=True, exist_ok=True)
            self._box = mailbox.Maildir(self.path, create=False)
        # Written to tmp/ and renamed into new/: a reader never sees half a message. A
        # Maildir holds messages with the local line end (LF), as mutt and other
        # readers expect; the CRLF of the wire format would show as ^M.
        self._box.add(raw.replace(b"\r\n", b"\n"))

    async def close(self) -> None:
        self._box = None


class SmtpRelay:
    """Up to `settings.connections` SMTP connections, each opened on first use and kept
    for the next mails: one connection waits for the relay's answer to each mail (and
    for the outcome to be recorded) before the next, so a few side by side keep the
    relay busy."""

    def __init__(self, settings: RelaySettings, tls_context: ssl.SSLContext | None = None) -> None:
        self.settings = settings
        self.lanes = settings.connections
        self._tls_context = tls_context
        self._idle: list[aiosmtplib.SMTP] = []  # open and between mails

    async def _connection(self) -> tuple[aiosmtplib.SMTP, bool]:
        """An open connection and whether it was reused. The sender never has more than
        `lanes` mails in flight, so no more connections than that are ever open."""
        while self._idle:
            smtp = self._idle.pop()
            if smtp.is_connected:
                return smtp, True
        s = self.settings
        smtp = aiosmtplib.SMTP(
            hostname=s.host,
            port=s.port,
            use_tls=s.ssl,
            start_tls=s.starttls,
            username=s.user or None,
            password=s.password or None,
            timeout=s.timeout,
            tls_context=self._tls_context,
        )
        try:
            await smtp.connect()
        except aiosmtplib.SMTPResponseException as exc:
            # includes a refused AUTH: a setup problem, so the mail waits rather than fails
            raise TemporaryFailure(f"connect: {exc.code} {exc.message}") from exc
        except (aiosmtplib.SMTPException, OSError) as exc:
            raise TemporaryFailure(f"connect: {exc}") from exc
        return smtp, False

    async def send(self, mail: OutgoingMail) -> dict[str, str]:
        # An internationalised address (bücher.test as written) goes only with SMTPUTF8.
        ascii_only = all(a.isascii() for a in (mail.envelope_from, *mail.recipients))
        options = [] if ascii_only else ["SMTPUTF8"]
        for _ in range(2):
            smtp, reused = await self._connection()
            try:
                errors, _reply = await smtp.sendmail(
                    mail.envelope_from, list(mail.recipients), mail.raw, mail_options=options
                )
            except aiosmtplib.SMTPRecipientsRefused as exc:
                await self._reset(smtp)
                answers = {r.recipient: f"{r.code} {r.message}" for r in exc.recipients}
                if all(r.code >= 500 for r in exc.recipients):
                    raise PermanentFailure(f"recipients refused: {answers}") from exc
                raise TemporaryFailure(f"recipients deferred: {answers}") from exc
            except aiosmtplib.SMTPNotSupported as exc:
                self._idle.append(smtp)  # refused before MAIL FROM: the session is clean
                raise PermanentFailure(f"an address needs SMTPUTF8: {exc}") from exc
            except aiosmtplib.SMTPResponseException as exc:
                await self._reset(smtp)
                if exc.code >= 500:
                    raise PermanentFailure(f"{exc.code} {exc.message}") from exc
                raise TemporaryFailure(f"{exc.code} {exc.message}") from exc
            except (aiosmtplib.SMTPException, OSError) as exc:
                await self._quit(smtp)
                if reused:
                    continue  # the server closed an idle connection: one fresh try
                raise TemporaryFailure(str(exc) or type(exc).__name__) from exc
            self._idle.append(smtp)
            return {addr: f"{code} {text}" for addr, (code, text) in errors.items()}
        raise TemporaryFailure("connection lost twice")

    async def _reset(self, smtp: aiosmtplib.SMTP) -> None:
        """After a refused mail: the connection is kept for the next one if RSET works."""
        try:
            await smtp.rset()
        except (aiosmtplib.SMTPException, OSError):
            await self._quit(smtp)
        else:
            self._idle.append(smtp)

    @staticmethod
    async def _quit(smtp: aiosmtplib.SMTP) -> None:
        try:
            if smtp.is_connected:
                await smtp.quit()
        except (aiosmtplib.SMTPException, OSError):
            smtp.close()

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        for smtp in idle:
            await self._quit(smtp)


class RateLimiter:
    """At most `rate` sends per second (0 = unlimited), evenly spaced, however many
    connections ask at once: each takes the next free slot before it sleeps."""

    def __init__(self, rate: float) -> None:
        self._interval = 1.0 / rate if rate > 0 else 0.0
        self._next = 0.0

    async def wait(self) -> None:
        if not self._interval:
            return
        now = time.monotonic()
        slot = max(now, self._next)
        self._next = slot + self._interval
        if slot > now:
            await asyncio.sleep(slot - now)


@dataclass(frozen=True)
class RetryPolicy:
    base_seconds: float = 60.0
    max_seconds: float = 6 * 3600.0
    max_attempts: int = 12

    def delay(self, attempts: int) -> timedelta:
        """Backoff before the next try, after `attempts` failed tries (1 = first failure)."""
        exponent = min(max(attempts - 1, 0), 30)
        return timedelta(seconds=min(self.base_seconds * 2**exponent, self.max_seconds))


# Mails claimed at a time: a batch's pictures are drawn before its first mail goes out,
# so a small one keeps the first replies of a busy moment from waiting for the last.
SEND_BATCH = 10


class _Stream:
    """The mails one drain sends, claimed a batch at a time as the lanes run low, and
    handed to the lanes in queue order, except that a mail to an address that has an
    earlier mail in flight or still waiting waits its turn. The next batch is claimed
    (and its pictures drawn) while the lanes send: none waits for the slowest mail of a
    batch, nor for drawing."""

    def __init__(
        self,
        claim: Callable[[int, frozenset[int]], Awaitable[list[OutgoingMail]]],
        batch: int,
        low: int,
        stop: asyncio.Event | None,
    ) -> None:
        self._claim = claim
        self._stop = stop  # a shutdown: the mails in flight finish, no other starts
        self._batch = batch
        self._low = low  # claim again once no more than this many mails wait
        self.waiting: list[OutgoingMail] = []
        self.in_flight: set[str] = set()  # recipients of the mails being sent
        self.in_hand: set[int] = set()  # claimed, outcome not recorded: never claimed again
        self.changed = asyncio.Condition()
        self.claiming: asyncio.Task[None] | None = None
        self.exhausted = False  # a claim found nothing: this drain claims no more
        self.failure: BaseException | None = None

    def _start_claim(self) -> None:
        if self.claiming is None and not self.exhausted and len(self.waiting) <= self._low:
            self.claiming = asyncio.ensure_future(self._claim_more())

    async def _claim_more(self) -> None:
        try:
            mails = await self._claim(self._batch, frozenset(self.in_hand))
        except BaseException as exc:
            mails = []
            self.failure = exc
        async with self.changed:
            self.claiming = None
            if mails:
                self.waiting.extend(mails)
                self.in_hand.update(mail.id for mail in mails)
            else:
                self.exhausted = True
            self.changed.notify_all()

    def _next(self) -> OutgoingMail | None:
        blocked = set(self.in_flight)
        for index, mail in enumerate(self.waiting):
            if blocked.isdisjoint(mail.recipients):
                del self.waiting[index]
                self.in_flight.update(mail.recipients)
                return mail
            blocked.update(mail.recipients)
        return None

    async def take(self) -> OutgoingMail | None:
        """The next mail that may go now, after waiting for one if need be; None when
        the drain is over (nothing more due, or stopped)."""
        async with self.changed:
            while self.failure is None and not (self._stop is not None and self._stop.is_set()):
                self._start_claim()
                mail = self._next()
                if mail is not None:
                    return mail
                if self.exhausted and not self.waiting:
                    return None
                await self.changed.wait()
            return None

    async def done(self, mail: OutgoingMail) -> None:
        async with self.changed:
            self.in_flight.difference_update(mail.recipients)
            self.in_hand.discard(mail.id)
            self.changed.notify_all()

    async def stop(self, failure: BaseException) -> None:
        """After `failure`, no further mail is taken: the mails in flight finish, the
        rest stay claimed by this daemon, whose next drain takes them again."""
        async with self.changed:
            self.exhausted = True
            self.waiting.clear()
            if self.failure is None:
                self.failure = failure
            self.changed.notify_all()

    async def finish(self) -> None:
        """Wait for a claim still running: its mails are this daemon's to send."""
        if self.claiming is not None:
            await asyncio.shield(self.claiming)


class OutboxSender:
    """Sends due mail (claimed in batches), as many mails at once as the transport has
    lanes, and records each outcome as soon as its SMTP transaction has ended."""

    def __init__(
        self,
        queue: OutboxQueue,
        transport: Transport,
        *,
        rate: float = 0.0,
        retry: RetryPolicy | None = None,
        batch: int = SEND_BATCH,
    ) -> None:
        self.queue = queue
        self.transport = transport
        self.retry = retry or RetryPolicy()
        self.batch = batch
        self._limiter = RateLimiter(rate)
        self.sent = 0
        self.deferred = 0
        self.failed = 0

    async def drain(self, stop: asyncio.Event | None = None) -> int:
        """Send everything due now; returns how many mails were handled. When the store
        fails (a claim or a record), the lanes finish the mails in hand and the failure
        is raised."""
        lanes = max(self.transport.lanes, 1)
        stream = _Stream(self.queue.due, self.batch, low=lanes, stop=stop)
        handled = 0

        async def lane() -> None:
            nonlocal handled
            while (mail := await stream.take()) is not None:
                try:
                    await self._limiter.wait()
                    outcome = await self.send_one(mail)
                    # Recorded before this lane takes its next mail: a crash (or SIGKILL)
                    # now sends again only the mails in flight, where recording a whole
                    # batch at its end sent every mail of it again.
                    await self.queue.record([outcome])
                except BaseException as exc:
                    await stream.stop(exc)
                    raise
                finally:
                    await stream.done(mail)
                handled += 1

        try:
            results = await asyncio.gather(*(lane() for _ in range(lanes)), return_exceptions=True)
        finally:
            await stream.finish()
        for result in results:
            if isinstance(result, BaseException):
                raise result
        if stream.failure is not None:
            raise stream.failure
        return handled

    async def send_one(self, mail: OutgoingMail) -> SendOutcome:
        try:
            refused = await self.transport.send(mail)
        except PermanentFailure as exc:
            self.failed += 1
            log.warning(kv("outbox_failed", id=mail.id, message_id=mail.message_id, error=exc))
            return SendOutcome(mail.id, "failed", str(exc))
        except TemporaryFailure as exc:
            attempts = mail.attempts + 1
            if attempts >= self.retry.max_attempts:
                self.failed += 1
                error = f"gave up after {attempts} attempts: {exc}"
                log.warning(
                    kv("outbox_failed", id=mail.id, message_id=mail.message_id, error=error)
                )
                return SendOutcome(mail.id, "failed", error)
            delay = self.retry.delay(attempts)
            self.deferred += 1
            log.info(
                kv("outbox_deferred", id=mail.id, attempts=attempts, retry_in=delay, error=exc)
            )
            return SendOutcome(mail.id, "retry", str(exc), delay)
        self.sent += 1
        if refused:
            # the others got it: sending again would double their copy, so it counts as sent
            log.warning(kv("outbox_partly_refused", id=mail.id, refused=refused))
        return SendOutcome(mail.id, "sent", f"refused: {refused}" if refused else None)
