"""What every response carries and every client is held to: a strict
Content-Security-Policy (nothing from other hosts, no inline script or style; the pages
need none), no framing, no referrer, and a request rate per client address (a token
bucket: `burst` at once, then `rate` a second; past it, 429 with Retry-After)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pbm.texts import phrase

CSP = (
    "default-src 'none'; img-src 'self'; style-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]
# Client addresses whose buckets are kept; the oldest go first past it, so a flood of
# addresses costs bounded memory.
MAX_CLIENTS = 10_000


class Buckets:
    """One token bucket per client address."""

    def __init__(self, burst: int, rate: float, clock: Callable[[], float] = time.monotonic):
        self.burst, self.rate, self.clock = burst, rate, clock
        self._held: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, client: str) -> float:
        """Take one request for `client`: 0 when allowed, else the seconds to wait."""
        now = self.clock()
        with self._lock:
            tokens, then = self._held.pop(client, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - then) * self.rate)
            wait = 0.0 if tokens >= 1 else (1 - tokens) / self.rate
            self._held[client] = (tokens - 1 if wait == 0 else tokens, now)
            while len(self._held) > MAX_CLIENTS:
                self._held.popitem(last=False)
        return wait


class Guard:
    """The ASGI middleware around the pages: the headers, and the rate bound."""

    def __init__(self, app: ASGIApp, buckets: Buckets) -> None:
        self.app, self.buckets = app, buckets

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = (scope.get("client") or ("?", 0))[0]
        wait = self.buckets.take(client)
        if wait:
            await send(
                {
                    "type": "http.response.start",
                    "status": 429,
                    "headers": [
                        *HEADERS,
                        (b"content-type", b"text/plain; charset=utf-8"),
                        (b"retry-after", str(max(1, round(wait))).encode()),
                    ],
                }
            )
            body = phrase("web_too_many") + "\n"
            await send({"type": "http.response.body", "body": body.encode()})
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        await self.app(scope, receive, with_headers)
