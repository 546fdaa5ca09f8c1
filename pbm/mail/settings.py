"""The mail transport's settings, as `pbm serve` uses them.

They are part of the one configuration model (pbm.config: the [mail] tables and
[limits] max_message_bytes); this module only gathers them for the transport, with the
passwords named by `password_env` read from the environment, in `mail_settings`. With
nothing configured pbm listens for SMTP on 127.0.0.1:2525 and writes outgoing mail into
the Maildir `<data_dir>/outbox/`; an [mail.imap] table adds IMAP intake, an [mail.relay]
table sends through an SMTP relay instead of the Maildir.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pbm.config import (
    Config,
    ConfigError,
    DkimSettings,
    Endpoint,
    ImapSettings,
    RelaySettings,
    parse_endpoint,
)


@dataclass(frozen=True)
class MailSettings:
    imap: ImapSettings | None
    relay: RelaySettings | None
    # signs outgoing mail when set (pbm.mail.dkim)
    dkim: DkimSettings | None
    smtp_listen: Endpoint | None
    lmtp_listen: Endpoint | None
    outbox_maildir: Path
    # largest message the listeners accept (the pipeline ignores larger ones, too)
    max_message_bytes: int
    # how often `pbm serve` logs its health line
    health_seconds: float


def mail_settings(config: Config) -> MailSettings:
    """The transport's settings from `config`; ConfigError when a password named by
    `password_env` is not in the environment."""
    try:
        imap = config.imap.with_password() if config.imap else None
    except ValueError as exc:
        raise ConfigError(f"[mail.imap] password_env: {exc}") from None
    try:
        relay = config.relay.with_password() if config.relay else None
    except ValueError as exc:
        raise ConfigError(f"[mail.relay] password_env: {exc}") from None
    return MailSettings(
        imap=imap,
        relay=relay,
        dkim=config.dkim,
        smtp_listen=config.smtp_listen,
        lmtp_listen=config.lmtp_listen,
        outbox_maildir=config.outbox_maildir,
        max_message_bytes=config.max_message_bytes,
        health_seconds=config.health_seconds,
    )


__all__ = [
    "DkimSettings",
    "Endpoint",
    "ImapSettings",
    "MailSettings",
    "RelaySettings",
    "mail_settings",
    "parse_endpoint",
]
