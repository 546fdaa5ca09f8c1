"""Reply tokens in plus-addresses and Message-IDs.

Every board mail carries a per-player secret token twice: in its Reply-To address
(`pbm+TOKEN.MOVE@host`) and in its Message-ID (`<pbm.TOKEN.MOVE.RANDOM@host>`), so a
reply can be matched to its board whether the player's mail program answers to the
Reply-To address or only threads by In-Reply-To/References. MOVE is the number of
moves the board had when the mail was sent, so a move answering an older board mail
can be told from one answering the newest; mails sent before that number existed
(`pbm+TOKEN@host`, `<pbm.TOKEN.RANDOM@host>`) carry none and still count. A token counts only
where pbm put it: in a recipient `pbm+TOKEN@` at the server's own domain, or in a
Message-ID of exactly pbm's shape at the server's own domain. This module only finds
tokens; whether a token is valid, whether pbm recorded that Message-ID, and whether
the sender is the token's player, is for the caller to check.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from functools import lru_cache

from pbm.mail.inbound import InboundMail
from pbm.mail.mailbox import bare_address

TOKEN_PATTERN = re.compile(r"^[a-z0-9]{8,40}$")
# A plus-address tag: "TOKEN" or "TOKEN.MOVE" (a move count of at most 9 digits).
_TAG = re.compile(r"^([a-z0-9]{8,40})(?:\.([0-9]{1,9}))?$")
# Our Message-IDs: "<pbm.TOKEN.MOVE.RANDOM@host>" or, before move numbers,
# "<pbm.TOKEN.RANDOM@host>"; "<pbm.RANDOM@host>" carries no token.
_OUR_MESSAGE_ID = re.compile(
    r"^<pbm\.([a-z0-9]{8,40})(?:\.([0-9]{1,9}))?\.[a-z0-9]+@([^<>@\s]+)>$", re.IGNORECASE
)
_RANDOM_BYTES = 10


@dataclass(frozen=True)
class FoundToken:
    """A reply token and where it was: `message_id` is the Message-ID (as written in
    In-Reply-To/References) that carried it, None when it came in a recipient address
    `pbm+TOKEN[.MOVE]@host`; `move` is the board's move count when that mail was sent
    (None for a mail of the older format, which carried none)."""

    token: str
    message_id: str | None
    move: int | None = None


@lru_cache(maxsize=256)  # mostly the server's own address, on every reply
def _split(address: str) -> tuple[str, str]:
    """(local part, domain) of a bare or display-name address, lower-cased."""
    addr = bare_address(address)
    local, at, domain = addr.rpartition("@")
    if not at or not local or not domain:
        raise ValueError(f"not a mail address: {address!r}")
    return local, domain


def _check_token(token: str) -> str:
    normal = token.lower()
    if not TOKEN_PATTERN.match(normal):
        raise ValueError(f"a token is 8 to 40 letters a-z and digits, not {token!r}")
    return normal


def _move_part(move: int | None) -> str:
    """`.MOVE` for a move count, nothing without one."""
    if move is None:
        return ""
    if not 0 <= move < 10**9:
        raise ValueError(f"a move count is 0 to 9 digits, not {move!r}")
    return f".{move}"


def reply_address(server_address: str, token: str, move: int | None = None) -> str:
    """`pbm+TOKEN.MOVE@host` for server address `pbm@host` (any "+tag" already on it is
    replaced); `pbm+TOKEN@host` without a move count."""
    local, domain = _split(server_address)
    return f"{local.split('+', 1)[0]}+{_check_token(token)}{_move_part(move)}@{domain}"


def message_id_for(token: str | None, host: str, move: int | None = None) -> str:
    """A fresh Message-ID `<pbm.TOKEN.MOVE.RANDOM@host>` (`<pbm.TOKEN.RANDOM@host>`
    without a move count), or `<pbm.RANDOM@host>` without token."""
    host = host.strip().lower()
    if not host or any(c in host for c in "<>@ \t\r\n"):
        raise ValueError(f"not a host name for a Message-ID: {host!r}")
    random = secrets.token_hex(_RANDOM_BYTES)
    if token is None:
        return f"<pbm.{random}@{host}>"
    return f"<pbm.{_check_token(token)}{_move_part(move)}.{random}@{host}>"


def token_in_message_id(message_id: str, host: str | None = None) -> FoundToken | None:
    """The token (and move count) in one of our Message-IDs `<pbm.TOKEN[.MOVE].RANDOM@HOST>`,
    or None.

    With `host`, the id's host must be it (case-insensitive): any other host's id is
    not one pbm issued, whatever it looks like.
    """
    match = _OUR_MESSAGE_ID.match(message_id.strip())
    if match is None:
        return None
    if host is not None and match.group(3).lower() != host.strip().lower():
        return None
    move = match.group(2)
    return FoundToken(match.group(1).lower(), message_id, None if move is None else int(move))


def tokens_in(mail: InboundMail, server_address: str) -> list[FoundToken]:
    """Tokens a reply carries, where pbm put them: plus-addressed recipients first, then
    Message-IDs in In-Reply-To, then References newest first; each token once, with the
    move count of the first place that carried it.

    Recipients count when their local part (case-insensitive) is the server's local
    part plus "+TOKEN" or "+TOKEN.MOVE" and their domain is the server's. A Message-ID
    counts only when it is exactly `<pbm.TOKEN[.MOVE].RANDOM@HOST>` with HOST the
    server address's domain (`<pbm.TOKEN.x@evil.host>` yields nothing). The caller
    still checks that pbm recorded that Message-ID and that the sender is the token's
    player.
    """
    base, domain = _split(server_address)
    base = base.split("+", 1)[0]
    found: dict[str, FoundToken] = {}
    for recipient in mail.recipients:
        try:
            local, recipient_domain = _split(recipient)
        except ValueError:
            continue
        prefix, plus, tag = local.partition("+")
        match = _TAG.match(tag) if plus and prefix == base and recipient_domain == domain else None
        if match is not None and match.group(1) not in found:
            move = match.group(2)
            found[match.group(1)] = FoundToken(
                match.group(1), None, None if move is None else int(move)
            )
    for message_id in (*mail.in_reply_to, *reversed(mail.references)):
        in_id = token_in_message_id(message_id, domain)
        if in_id is not None and in_id.token not in found:
            found[in_id.token] = in_id
    return list(found.values())
