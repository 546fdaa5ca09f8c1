"""Reply tokens in plus-addresses and Message-IDs.

Every board mail carries a per-player secret token twice: in its Reply-To address
(`pbm+TOKEN@host`) and in its Message-ID (`<pbm.TOKEN.RANDOM@host>`), so a reply
can be matched to its board whether the player's mail program answers to the
Reply-To address or only threads by In-Reply-To/References. This module only finds
tokens; whether a token is valid is for the caller to check.
"""

from __future__ import annotations

import re
import secrets
from email.utils import parseaddr
from functools import lru_cache

from pbm.mail.inbound import InboundMail

TOKEN_PATTERN = re.compile(r"^[a-z0-9]{8,40}$")
# Our Message-IDs: "<pbm.TOKEN.RANDOM@host>"; "<pbm.RANDOM@host>" carries no token.
_OUR_MESSAGE_ID = re.compile(r"^<pbm\.([a-z0-9]{8,40})\.[a-z0-9]+@[^<>@\s]+>$", re.IGNORECASE)
_RANDOM_BYTES = 10


@lru_cache(maxsize=256)  # mostly the server's own address, on every reply
def _split(address: str) -> tuple[str, str]:
    """(local part, domain) of a bare or display-name address, lower-cased."""
    _, addr = parseaddr(address)
    addr = (addr or address).strip().lower()
    local, at, domain = addr.rpartition("@")
    if not at or not local or not domain:
        raise ValueError(f"not a mail address: {address!r}")
    return local, domain


def _check_token(token: str) -> str:
    normal = token.lower()
    if not TOKEN_PATTERN.match(normal):
        raise ValueError(f"a token is 8 to 40 letters a-z and digits, not {token!r}")
    return normal


def reply_address(server_address: str, token: str) -> str:
    """`pbm+TOKEN@host` for server address `pbm@host` (any "+tag" already on it is replaced)."""
    local, domain = _split(server_address)
    return f"{local.split('+', 1)[0]}+{_check_token(token)}@{domain}"


def message_id_for(token: str | None, host: str) -> str:
    """A fresh Message-ID `<pbm.TOKEN.RANDOM@host>`, or `<pbm.RANDOM@host>` without token."""
    host = host.strip().lower()
    if not host or any(c in host for c in "<>@ \t\r\n"):
        raise ValueError(f"not a host name for a Message-ID: {host!r}")
    random = secrets.token_hex(_RANDOM_BYTES)
    if token is None:
        return f"<pbm.{random}@{host}>"
    return f"<pbm.{_check_token(token)}.{random}@{host}>"


def token_in_message_id(message_id: str) -> str | None:
    """The token in one of our Message-IDs, or None."""
    match = _OUR_MESSAGE_ID.match(message_id.strip())
    return match.group(1).lower() if match else None


def tokens_in(mail: InboundMail, server_address: str) -> list[str]:
    """Tokens a reply carries: plus-addressed recipients first, then thread ids.

    Recipients count when their local part (case-insensitive) is the server's local
    part plus "+TOKEN" and their domain is the server's. Message ids count in the
    order In-Reply-To, then References from newest to oldest, whatever their host
    (a token is a secret the caller checks, so the host adds nothing).
    """
    base, domain = _split(server_address)
    base = base.split("+", 1)[0]
    found: list[str] = []
    for recipient in mail.recipients:
        try:
            local, recipient_domain = _split(recipient)
        except ValueError:
            continue
        prefix, plus, tag = local.partition("+")
        ours = plus and prefix == base and recipient_domain == domain
        if ours and TOKEN_PATTERN.match(tag) and tag not in found:
            found.append(tag)
    for message_id in (*mail.in_reply_to, *reversed(mail.references)):
        token = token_in_message_id(message_id)
        if token is not None and token not in found:
            found.append(token)
    return found
