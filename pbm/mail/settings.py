"""The mail transport settings, read from the `[mail]` table of the configuration.

With nothing configured pbm listens for SMTP on 127.0.0.1:2525 and writes outgoing mail
into the Maildir `<data_dir>/outbox/` (the embedded default); an `[mail.imap]` table adds
IMAP intake, an `[mail.relay]` table sends through an SMTP relay instead of the Maildir.
See config/pbm.example.toml ([mail] sections) for every key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pbm.config import Config, ConfigError

DEFAULT_LISTEN = "127.0.0.1:2525"


@dataclass(frozen=True)
class ImapSettings:
    """Where pbm takes its incoming mail from over IMAP."""

    host: str
    user: str
    password: str
    port: int = 993
    ssl: bool = True
    starttls: bool = False
    folder: str = "INBOX"
    # "" means: no folder, flag handled messages \Seen instead of moving them
    processed_folder: str = "Processed"
    # RFC 2177: servers may drop an IDLE after 30 minutes, so it is re-issued sooner
    idle_seconds: float = 25 * 60
    # used when the server has no IDLE, and as a safety net between IDLE wake-ups
    poll_seconds: float = 60.0
    timeout: float = 30.0
    batch: int = 50
    reconnect_min_seconds: float = 1.0
    reconnect_max_seconds: float = 300.0


@dataclass(frozen=True)
class RelaySettings:
    """The SMTP server pbm hands its outgoing mail to."""

    host: str
    port: int = 587
    ssl: bool = False
    starttls: bool = True
    user: str = ""
    password: str = ""
    # messages per second; 0 means no limit
    rate: float = 20.0
    timeout: float = 30.0
    # temporary failures are retried after base * 2**attempts seconds, capped at max
    retry_base_seconds: float = 60.0
    retry_max_seconds: float = 6 * 3600.0
    max_attempts: int = 12


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class MailSettings:
    imap: ImapSettings | None
    relay: RelaySettings | None
    smtp_listen: Endpoint | None
    lmtp_listen: Endpoint | None
    outbox_maildir: Path
    # largest message the listeners accept
    max_message_bytes: int = 10_000_000
    # how often `pbm serve` logs its health line
    health_seconds: float = 60.0


def mail_settings(config: Config) -> MailSettings:
    """The `[mail]` settings of `config`; raises ConfigError on a bad value."""
    table = _table(config.raw.get("mail", {}), "mail")
    listen = _table(table.get("listen", {}), "mail.listen")
    imap = table.get("imap")
    relay = table.get("relay")
    outbox = table.get("outbox_maildir")
    try:
        return MailSettings(
            imap=_imap(_table(imap, "mail.imap")) if imap else None,
            relay=_relay(_table(relay, "mail.relay")) if relay else None,
            smtp_listen=parse_endpoint(str(listen.get("smtp", DEFAULT_LISTEN))),
            lmtp_listen=parse_endpoint(str(listen.get("lmtp", ""))),
            outbox_maildir=Path(str(outbox)) if outbox else config.data_dir / "outbox",
            max_message_bytes=int(table.get("max_message_bytes", config.max_message_bytes)),
            health_seconds=float(table.get("health_seconds", 60.0)),
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"bad [mail] setting: {exc}") from exc


def parse_endpoint(text: str) -> Endpoint | None:
    """`host:port` -> Endpoint; an empty string means "off"."""
    text = text.strip()
    if not text:
        return None
    host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise ValueError(f"{text!r} is not host:port")
    return Endpoint(host.strip("[]"), int(port))


def _imap(t: dict[str, Any]) -> ImapSettings:
    ssl = bool(t.get("ssl", True))
    starttls = bool(t.get("starttls", False))
    if ssl and starttls:
        raise ValueError("mail.imap: ssl and starttls exclude each other")
    defaults = ImapSettings(host="", user="", password="")
    return ImapSettings(
        host=_required(t, "host", "mail.imap"),
        user=_required(t, "user", "mail.imap"),
        password=_password(t, "mail.imap"),
        port=int(t.get("port", 993 if ssl else 143)),
        ssl=ssl,
        starttls=starttls,
        folder=str(t.get("folder", defaults.folder)),
        processed_folder=str(t.get("processed_folder", defaults.processed_folder)),
        idle_seconds=float(t.get("idle_minutes", defaults.idle_seconds / 60)) * 60,
        poll_seconds=float(t.get("poll_seconds", defaults.poll_seconds)),
        timeout=float(t.get("timeout_seconds", defaults.timeout)),
        batch=int(t.get("batch", defaults.batch)),
        reconnect_min_seconds=float(t.get("reconnect_min_seconds", defaults.reconnect_min_seconds)),
        reconnect_max_seconds=float(t.get("reconnect_max_seconds", defaults.reconnect_max_seconds)),
    )


def _relay(t: dict[str, Any]) -> RelaySettings:
    ssl = bool(t.get("ssl", False))
    starttls = bool(t.get("starttls", not ssl))
    if ssl and starttls:
        raise ValueError("mail.relay: ssl and starttls exclude each other")
    defaults = RelaySettings(host="")
    user = str(t.get("user", ""))
    return RelaySettings(
        host=_required(t, "host", "mail.relay"),
        port=int(t.get("port", 465 if ssl else 587)),
        ssl=ssl,
        starttls=starttls,
        user=user,
        password=_password(t, "mail.relay") if user else "",
        rate=float(t.get("rate", defaults.rate)),
        timeout=float(t.get("timeout_seconds", defaults.timeout)),
        retry_base_seconds=float(t.get("retry_base_seconds", defaults.retry_base_seconds)),
        retry_max_seconds=float(t.get("retry_max_seconds", defaults.retry_max_seconds)),
        max_attempts=int(t.get("max_attempts", defaults.max_attempts)),
    )


def _password(t: dict[str, Any], where: str) -> str:
    """`password`, else the environment variable named by `password_env`."""
    if "password" in t:
        return str(t["password"])
    env = t.get("password_env")
    if env:
        value = os.environ.get(str(env))
        if value is None:
            raise ValueError(f"{where}: environment variable {env} is not set")
        return value
    raise ValueError(f"{where}: needs password or password_env")


def _required(t: dict[str, Any], key: str, where: str) -> str:
    value = t.get(key)
    if not value:
        raise ValueError(f"{where}: {key} is required")
    return str(value)


def _table(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"[{where}] must be a table")
    return value
