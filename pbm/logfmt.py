"""Structured log lines: `event=NAME key=value ...` (logfmt), one line per event."""

from __future__ import annotations

import logging
import time
from typing import Any


def kv(event: str, **fields: Any) -> str:
    """`event=NAME k=v ...`; values with spaces, quotes or `=` are quoted."""
    parts = [f"event={event}"]
    parts.extend(f"{key}={_value(value)}" for key, value in fields.items())
    return " ".join(parts)


def _value(value: Any) -> str:
    text = "" if value is None else str(value)
    if text and text.isprintable() and not any(c in text for c in ' "='):
        return text
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{_printable(escaped)}"'


def _printable(text: str) -> str:
    """`text` with every character a terminal would act on or hide (controls, ESC, bidi
    overrides, zero-width spaces: what player text may carry) written `\\uXXXX`."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else _escape(c) for c in text)


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


class LogfmtFormatter(logging.Formatter):
    """`ts=... level=... logger=... event=...`; a traceback follows as one quoted field."""

    # staticmethod: formatTime calls self.converter(secs), which must pass no self.
    converter = staticmethod(time.gmtime)

    def format(self, record: logging.LogRecord) -> str:
        ts = self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z"
        message = record.getMessage()
        if not message.startswith("event="):
            message = kv("log", msg=message)
        line = f"ts={ts} level={record.levelname.lower()} logger={record.name} {message}"
        if record.exc_info:
            line += f" exc={_value(self.formatException(record.exc_info))}"
        return line


def setup_logging(level: str = "INFO") -> None:
    """Send every pbm log record to stderr as logfmt lines."""
    handler = logging.StreamHandler()
    handler.setFormatter(LogfmtFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # aioimaplib logs every IMAP line at DEBUG/INFO; keep it to warnings
    logging.getLogger("aioimaplib").setLevel(logging.WARNING)
    logging.getLogger("mail.log").setLevel(logging.WARNING)
    # alembic announces its plugins and dialect at INFO on every start; pbm.store.schema logs
    # the one line that matters (event=schema_upgraded)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    # uvicorn says "Started server process" (and "Shutting down", "Finished server
    # process") at INFO once per server, the pages' and the metrics' alike: the same line
    # twice, where pbm.web logs web_started and web_stopped once; its errors still show
    logging.getLogger("uvicorn.error").setLevel(logging.WARNING)
