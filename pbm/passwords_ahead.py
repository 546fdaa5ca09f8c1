"""The passwords a stored message names, checked before its transaction takes the lock.

scrypt is deliberately slow (about 0.1 s a check at the shipped cost, more on a busy
machine), and a command checks its password inside the message's transaction, which
on SQLite holds the daemon's one write lock: the intake storing mail, the sender
claiming and recording, and every other message waited for each check that missed
pbm.services.accounts.passwords' caches, that is each player's first command after a
start, and each wrong password. So the daemon's processor first reads the message
through its read-only engine, finds the (userid, password) pair each command line
names, and checks it there, outside the lock: the outcome lands in those caches, and
the check inside the transaction finds it. That check alone decides and counts a
failure (pbm.services.accounts.users.authenticate); a pair missed here is checked in
the transaction as before.

It must never cost what the password throttle spares, since its checks count no
failure: at most MAX_CHECKS a message, only of a command whose usage puts the userid
and password in one place (not a new account's), and none for an account whose
password a check ahead refuted within the failure window. So a stranger's guesses cost
at most one scrypt run more an account and window than before, and that run's outcome
spares the transaction its own.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from datetime import datetime, timedelta
from functools import cache

from sqlalchemy import bindparam
from sqlalchemy import select as sa_select
from sqlalchemy.engine import Engine

from pbm.commands.base import usage_forms
from pbm.commands.finder import find_commands
from pbm.commands.registry import parse_line
from pbm.config import Config
from pbm.errors import PbmError
from pbm.games import GameError
from pbm.logfmt import kv
from pbm.mail.inbound import parse_message
from pbm.services.accounts.passwords import verify_password
from pbm.store import queries
from pbm.store.engine import session_for
from pbm.store.models import InboundMessage
from pbm.store.types import table_of

log = logging.getLogger(__name__)

MAX_CHECKS = 3  # scrypt runs ahead for one message, however many commands it holds
_REFUTED_KEPT = 4096  # accounts remembered as refuted ahead (the oldest forgotten first)
# The words of a usage form that stand for the account and its password.
_ACCOUNT, _PASSWORDS = "userid", ("password", "current-password")
_INBOUND = table_of(InboundMessage)
_RAW = sa_select(_INBOUND.c.raw).where(_INBOUND.c.id == bindparam("row_id"))


@cache
def password_position(usage: str) -> int | None:
    """Where every form of a usage has the userid (the password follows it), when that
    is one place with only plain words before it; else None (a bracket or an ellipsis
    before it could shift the words, and two places leave the words ambiguous)."""
    found: set[int | None] = set()
    for form in usage_forms(usage):
        names = form.split()
        pairs = [
            i for i, n in enumerate(names[:-1]) if n == _ACCOUNT and names[i + 1] in _PASSWORDS
        ]
        plain = bool(pairs) and not any(
            mark in word for word in names[: pairs[0]] for mark in "[](){}|."
        )
        found.add(pairs[0] if plain else None)
    return found.pop() if len(found) == 1 else None


def named_pairs(raw: bytes, config: Config) -> list[tuple[str, str]]:
    """The (userid, password) pairs the command lines of `raw` name, at most MAX_CHECKS;
    none for a message that runs no command (too big, from a robot or from nobody)."""
    if len(raw) > config.max_message_bytes:
        return []
    mail = parse_message(raw)
    if mail.robot or not mail.sender:
        return []
    found: list[tuple[str, str]] = []
    for line in find_commands(mail.command_subject, mail.fresh_text):
        try:
            command, inv = parse_line(line.text, line.comment)
        except (PbmError, GameError):
            continue  # answered in the transaction, with no password checked
        at = None if command.new_password else password_position(command.usage)
        if at is not None and at + 1 < len(inv.words):
            pair = (inv.words[at], inv.words[at + 1])
            if pair not in found:
                found.append(pair)
        if len(found) >= MAX_CHECKS:
            break
    return found


class PasswordsAhead:
    """The processor's checks ahead, through `reader` (an engine that reads outside the
    write lock, pbm.store.readonly), with the accounts it found a wrong password for.
    The daemon's one processor uses it, one message at a time."""

    def __init__(self, reader: Engine, config: Config) -> None:
        self.reader = reader
        self.config = config
        # stored password hash -> when a check ahead refuted a password for it
        self._refuted: OrderedDict[str, datetime] = OrderedDict()

    def check(self, inbound_id: int, now: datetime) -> None:
        """Check the passwords the stored message `inbound_id` names. A failure here is
        logged and changes nothing: the transaction checks as it always does."""
        try:
            stored = self._hashes(inbound_id, now)
        except Exception as exc:  # the transaction checks, whatever went wrong here
            log.warning(kv("passwords_ahead_failed", id=inbound_id, error=repr(exc)))
            return
        # After the read has ended: no reader holds its snapshot through scrypt runs.
        for password, hashed in stored:
            if not verify_password(password, hashed):
                self._refuted[hashed] = now
                self._refuted.move_to_end(hashed)
                if len(self._refuted) > _REFUTED_KEPT:
                    self._refuted.popitem(last=False)

    def _hashes(self, inbound_id: int, now: datetime) -> list[tuple[str, str]]:
        """(password, stored hash) of each pair the message names whose account exists
        and was not refuted ahead within the failure window."""
        since = now - timedelta(minutes=self.config.failure_window_minutes)
        found: list[tuple[str, str]] = []
        with session_for(self.reader) as session:
            raw = session.connection().execute(_RAW, {"row_id": inbound_id}).scalar()
            if raw is None:  # gone meanwhile: the transaction finds that out
                return found
            for userid, password in named_pairs(bytes(raw), self.config):
                user = queries.user_by_userid(session, userid)
                if user is None or not user.password_hash:
                    continue
                refuted = self._refuted.get(user.password_hash)
                if refuted is None or refuted < since:
                    found.append((password, user.password_hash))
        return found
