"""Renaming an account (`pbm user rename`, docs/security.md): the account keeps its
number, and everything that names it by number (its boards, tournament entries and the
tournaments it made, ratings, bot settings, addresses, vacation, mail settings) follows
at once; the few places that hold the userid as text are rewritten here, and the player
is told his new userid at his confirmed address."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from sqlalchemy import Table, select, update
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

from pbm.errors import PbmError
from pbm.mail.streams import MailReason
from pbm.services.accounts.users import (
    PAIR_FAILURE,
    STRANGER_FAILURE,
    check_userid,
    pair_event_key,
    reply_addresses,
    userid_key,
)
from pbm.services.context import Context, Reply, ReplyKind
from pbm.store.models import User
from pbm.texts import phrase, prose

log = logging.getLogger(__name__)


def _table(name: str) -> Table:
    return SQLModel.metadata.tables[name]


@dataclass(frozen=True)
class Renamed:
    """What `rename_user` did: the userid as stored (NFKC), and the address the player
    was told it at (None: he has no confirmed address, so nobody was mailed)."""

    userid: str
    told: str | None


def rename_user(ctx: Context, user: User, new: str) -> Renamed:
    """Give `user` the userid `new`, checked as a signup's (PbmError when it is taken
    by another account or breaks the rules), and tell him."""
    name = check_userid(ctx, new, owner=user)
    old, old_key = user.userid, user.userid_key
    if name == old:
        raise PbmError(phrase("rename_same", userid=old))
    user.userid, user.userid_key = name, userid_key(name)
    ctx.session.add(user)
    ctx.session.flush()
    conn = ctx.session.connection()
    _rewrite_boards(conn, user.saved_id, old, name)
    if user.userid_key != old_key:
        _move_refusals(conn, old_key, user.userid_key)
        _move_failures(conn, old_key, user.userid_key)
    log.info("renamed user #%d from %s to %s", user.saved_id, old, name)
    return Renamed(name, _tell(ctx, user, old))


def _tell(ctx: Context, user: User, old: str) -> str | None:
    """Mail the player his new userid at his first confirmed address (a command naming
    the old one is refused from now on); returns that address, None when he has none."""
    to = reply_addresses(ctx, user)
    if not to:
        return None
    values = {"old": old, "new": user.userid, "server": ctx.config.server_name}
    ctx.reply(
        Reply(
            to=to,
            subject=phrase("subject_renamed", **values),
            body=prose("renamed", **values) + "\n",
            kind=ReplyKind.ACCOUNT,
            user_id=user.saved_id,
            reason=MailReason.CONFIRMATION,  # an account notice: it answers no mail of his
        )
    )
    return to[0]


def _rewrite_boards(conn: Connection, uid: int, old: str, new: str) -> None:
    """The last comment's author (`comment_by`) and the result line (`alice resigns.`)
    of his boards name him as text: they name him by his new userid."""
    games, players = _table("games"), _table("game_players")
    his = select(players.c.game_id).where(players.c.user_id == uid)
    mention = re.compile(rf"(?<![\w.-]){re.escape(old)}(?![\w-]|\.\w)")
    rows = conn.execute(
        select(games.c.id, games.c.comment_by, games.c.result_reason).where(games.c.id.in_(his))
    )
    for game_id, comment_by, reason in rows:
        values: dict[str, object] = {}
        if comment_by == old:
            values["comment_by"] = new
        renamed = mention.sub(new, reason or "")
        if reason and renamed != reason:
            values["result_reason"] = renamed
        if values:
            conn.execute(update(games).where(games.c.id == game_id).values(**values))


def _move_refusals(conn: Connection, old_key: str, new_key: str) -> None:
    """A mailbox's "not me" to the account goes on refusing it under its new userid."""
    refusals = _table("address_refusals")
    both = select(refusals.c.mailbox).where(refusals.c.userid_key == new_key)
    conn.execute(
        refusals.delete().where(refusals.c.userid_key == old_key, refusals.c.mailbox.in_(both))
    )
    conn.execute(
        update(refusals).where(refusals.c.userid_key == old_key).values(userid_key=new_key)
    )


def _move_failures(conn: Connection, old_key: str, new_key: str) -> None:
    """The password failures counted against the account keep counting (a rename is
    no way round a lock); pbm.services.accounts.users keys them by userid key."""
    events = _table("rate_events")
    conn.execute(
        update(events)
        .where(events.c.kind == STRANGER_FAILURE, events.c.key == old_key)
        .values(key=new_key)
    )
    pairs = select(events.c.id, events.c.key).where(
        events.c.kind == PAIR_FAILURE, events.c.key.startswith(f"{old_key} ", autoescape=True)
    )
    for event_id, key in conn.execute(pairs).all():
        # the address, or its digest (which stays one: a digest fits with any userid key)
        moved = pair_event_key(new_key, key[len(old_key) + 1 :])
        conn.execute(update(events).where(events.c.id == event_id).values(key=moved))
