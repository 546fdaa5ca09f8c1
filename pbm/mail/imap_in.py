"""IMAP intake (aioimaplib): take every unseen message, store it, then file it away.

Order matters for "never lose, never double": a message is fetched with BODY.PEEK[] (it
stays unseen), stored (the store commits; a Message-ID already stored is a no-op), and
only then moved to the processed folder (COPY + \\Deleted + EXPUNGE where MOVE is
missing, or flagged \\Seen when no folder is configured). A crash in between leaves it
in the inbox, and the next pass stores it again harmlessly. A store that fails (the
database locked, full, gone) leaves the whole fetched batch unseen and unmoved; the
intake logs `imap_store_failed`, lets the connection go and tries again after the
reconnect backoff. New mail is awaited with
IDLE, re-issued before the server's timeout, with polling where IDLE is missing; a lost
connection is re-established with exponential backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import aioimaplib

from pbm.logfmt import kv
from pbm.mail.settings import ImapSettings

log = logging.getLogger(__name__)

# Stores one raw message durably (committed when it returns); raises on failure.
StoreFn = Callable[[bytes], Awaitable[object]]
# Stores several in one go (one commit); used for a fetched batch when given.
StoreManyFn = Callable[[list[bytes]], Awaitable[object]]

_UID = re.compile(rb"\bUID (\d+)")


class ImapFailure(Exception):
    """The server answered NO/BAD to a command the intake needs, or the link broke."""


class StoreFailed(Exception):
    """Fetched messages could not be stored; they stay unseen in the folder."""


@dataclass
class ImapState:
    """What the intake is doing, for the daemon's status file."""

    connected: bool = False
    idle_supported: bool | None = None
    move_supported: bool | None = None
    stored: int = 0
    idle_cycles: int = 0
    reconnects: int = 0
    last_error: str | None = None
    capabilities: list[str] = field(default_factory=list)


class _Protocol(aioimaplib.IMAP4ClientProtocol):
    """Remembers that the server announced new mail (`* n EXISTS`) outside IDLE.

    Dovecot reports mail that arrived during a command (e.g. the SEARCH that found nothing)
    in that command's untagged responses, which aioimaplib drops; IDLE would then wait for
    a change that was already announced, until the next poll."""

    exists_seen = False

    def _untagged_response(self, line: bytes) -> aioimaplib.Command:
        if line.endswith(b" EXISTS"):
            self.exists_seen = True
        return super()._untagged_response(line)


class _Client(aioimaplib.IMAP4):
    protocol: _Protocol

    def create_client(
        self,
        host: str,
        port: int,
        loop: asyncio.AbstractEventLoop | None,
        conn_lost_cb: Callable[[Exception | None], None] | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        local_loop = loop or asyncio.get_running_loop()
        self.protocol = _Protocol(local_loop, conn_lost_cb)
        self._client_task = local_loop.create_task(
            local_loop.create_connection(lambda: self.protocol, host, port, ssl=ssl_context)
        )


def fetched_messages(lines: list[bytes | bytearray]) -> list[tuple[int | None, bytes]]:
    """(uid, raw) per message of a FETCH response: the literal is the only bytearray."""
    out: list[tuple[int | None, bytes]] = []
    for i, item in enumerate(lines):
        if isinstance(item, bytearray):
            meta = bytes(lines[i - 1]) if i else b""
            match = _UID.search(meta)
            out.append((int(match.group(1)) if match else None, bytes(item)))
    return out


class ImapIntake:
    """Runs until `stop` is set: connect, drain the folder, wait for mail, repeat."""

    def __init__(
        self,
        settings: ImapSettings,
        store: StoreFn,
        *,
        stop: asyncio.Event,
        ssl_context: ssl.SSLContext | None = None,
        store_many: StoreManyFn | None = None,
    ) -> None:
        self.settings = settings
        self._store = store
        self._store_many = store_many
        self._stop = stop
        self._ssl_context = ssl_context
        self._lost = asyncio.Event()
        self._established = False  # whether the current session got past its log-in
        self.state = ImapState()

    async def run(self) -> None:
        delay = self.settings.reconnect_min_seconds
        while not self._stop.is_set():
            self._established = False
            try:
                await self._session()
                delay = self.settings.reconnect_min_seconds
            except Exception as exc:
                # a server gone away, a refused command or a store that failed: the
                # messages stay unseen in the folder and the next session takes them
                if self._established:
                    # The session worked before it failed: a new outage, whose backoff
                    # starts over rather than where the last outage's ended.
                    delay = self.settings.reconnect_min_seconds
                self.state.connected = False
                self.state.last_error = f"{type(exc).__name__}: {exc}"
                self.state.reconnects += 1
                event = "imap_store_failed" if isinstance(exc, StoreFailed) else "imap_disconnected"
                log.warning(kv(event, error=self.state.last_error, retry_in=delay))
                await self._sleep(delay)
                delay = min(delay * 2, self.settings.reconnect_max_seconds)
        self.state.connected = False

    async def _session(self) -> None:
        client = await self._connect()
        try:
            await self._prepare(client)
            self._established = True
            self.state.connected = True
            self.state.last_error = None
            log.info(kv("imap_connected", host=self.settings.host, user=self.settings.user))
            while not self._stop.is_set():
                await self.drain(client)
                if self._stop.is_set():
                    break
                await self._wait_for_mail(client)
                if self._lost.is_set():
                    raise ImapFailure("connection lost")
        finally:
            self.state.connected = False
            await self._close(client)

    async def _connect(self) -> _Client:
        s = self.settings
        self._lost = asyncio.Event()

        def lost(exc: Exception | None) -> None:
            self._lost.set()

        context = None
        if s.ssl:
            context = self._ssl_context or ssl.create_default_context()
        client = _Client(
            host=s.host, port=s.port, timeout=s.timeout, conn_lost_cb=lost, ssl_context=context
        )
        await client.wait_hello_from_server()
        if s.starttls:
            await self._starttls(client)
        return client

    async def _starttls(self, client: aioimaplib.IMAP4) -> None:
        # aioimaplib has no STARTTLS; the command is plain and the upgrade is asyncio's own
        response = await asyncio.wait_for(
            client.protocol.simple_command("STARTTLS"), self.settings.timeout
        )
        _check(response, "STARTTLS")
        loop = asyncio.get_running_loop()
        context = self._ssl_context or ssl.create_default_context()
        protocol = client.protocol
        protocol.transport = await loop.start_tls(
            protocol.transport, protocol, context, server_hostname=self.settings.host
        )

    async def _prepare(self, client: aioimaplib.IMAP4) -> None:
        s = self.settings
        _check(await client.login(s.user, s.password), "LOGIN")
        self.state.capabilities = sorted(client.protocol.capabilities)
        self.state.idle_supported = client.has_capability("IDLE")
        self.state.move_supported = client.has_capability("MOVE")
        if s.processed_folder:
            # CREATE answers NO when the folder exists; that is fine
            await client.create(s.processed_folder)
        _check(await client.select(s.folder), f"SELECT {s.folder}")

    async def drain(self, client: _Client) -> int:
        """Store and file away every unseen message of the folder; returns how many."""
        total = 0
        while not self._stop.is_set():
            client.protocol.exists_seen = False
            response = await client.uid_search("UNSEEN", charset=None)
            _check(response, "UID SEARCH UNSEEN")
            uids = response.lines[0].decode().split() if response.lines else []
            if not uids:
                if client.protocol.exists_seen:
                    continue  # mail came in during the SEARCH: look again before IDLE
                return total
            batch = uids[: self.settings.batch]
            fetch = await client.uid("fetch", ",".join(batch), "(UID BODY.PEEK[])")
            _check(fetch, "UID FETCH")
            messages = fetched_messages(fetch.lines)
            try:
                if self._store_many is not None:
                    await self._store_many([raw for _, raw in messages])
                else:
                    for _, raw in messages:
                        await self._store(raw)
            except Exception as exc:
                # nothing is filed away: every message of the batch stays unseen
                raise StoreFailed(str(exc) or repr(exc)) from exc
            self.state.stored += len(messages)
            done = [str(uid) for uid, _ in messages if uid is not None]
            if not done:
                return total
            await self._file_away(client, ",".join(done))
            total += len(done)
            log.info(kv("imap_stored", count=len(done)))
        return total

    async def _file_away(self, client: aioimaplib.IMAP4, uid_set: str) -> None:
        folder = self.settings.processed_folder
        if folder and self.state.move_supported:
            response = await client.uid("move", uid_set, folder)
            if not _taken_meanwhile(response):
                _check(response, "UID MOVE")
            return
        if folder:
            response = await client.uid("copy", uid_set, folder)
            if response.result == "OK":
                _check(await client.uid("store", uid_set, "+FLAGS.SILENT", r"(\Deleted)"), "STORE")
                if client.has_capability("UIDPLUS"):
                    await client.uid("expunge", uid_set)
                else:
                    await client.expunge()
                return
            if _taken_meanwhile(response):
                return
            log.warning(kv("imap_copy_failed", folder=folder, answer=_text(response)))
        _check(await client.uid("store", uid_set, "+FLAGS.SILENT", r"(\Seen)"), "STORE")

    async def _wait_for_mail(self, client: aioimaplib.IMAP4) -> None:
        if not self.state.idle_supported:
            await self._sleep(self.settings.poll_seconds)
            await client.noop()
            return
        idle = await client.idle_start(timeout=self.settings.idle_seconds)
        self.state.idle_cycles += 1
        try:
            while not (self._stop.is_set() or self._lost.is_set()):
                push = await self._next_push(client)
                if push is None or push == aioimaplib.STOP_WAIT_SERVER_PUSH:
                    break
                if any(line.endswith(b" EXISTS") for line in push if isinstance(line, bytes)):
                    break
        finally:
            if not self._lost.is_set():
                client.idle_done()
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait_for(idle, self.settings.timeout)

    async def _next_push(self, client: aioimaplib.IMAP4) -> list[bytes] | None:
        """The next IDLE push, or None when stopping, the link broke or polling is due."""
        push = asyncio.ensure_future(client.wait_server_push(timeout=self.settings.poll_seconds))
        stop = asyncio.ensure_future(self._stop.wait())
        lost = asyncio.ensure_future(self._lost.wait())
        try:
            await asyncio.wait({push, stop, lost}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (stop, lost):
                task.cancel()
        if not push.done():
            push.cancel()
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await push
            return None
        try:
            return push.result()
        except TimeoutError:
            return None  # poll_seconds without a push: drain again as a safety net

    async def _close(self, client: aioimaplib.IMAP4) -> None:
        if not self._lost.is_set():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.logout(), 5)
        # the socket is closed even when LOGOUT failed or was never answered
        transport = client.protocol.transport
        if transport is not None and not transport.is_closing():
            transport.close()
        await asyncio.sleep(0)  # let the transport finish closing before the loop moves on

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), seconds)


def _check(response: aioimaplib.Response, what: str) -> None:
    if response.result != "OK":
        raise ImapFailure(f"{what}: {response.result} {_text(response)}")


def _taken_meanwhile(response: aioimaplib.Response) -> bool:
    """NO [EXPUNGEISSUED] (RFC 9051, 7.1): another client of the mailbox, such as another
    pbm daemon on a shared mailbox, filed some of the batch away first. Every message of
    it is stored already; whatever the server left in the folder is still unseen, and
    the next pass takes it again (a copy stored again is a no-op), so this is no failure
    of the connection."""
    taken = response.result == "NO" and "[EXPUNGEISSUED]" in _text(response)
    if taken:
        log.info(kv("imap_taken_meanwhile", answer=_text(response)))
    return taken


def _text(response: aioimaplib.Response) -> str:
    return b" ".join(bytes(x) for x in response.lines[-1:]).decode("utf-8", "replace")
