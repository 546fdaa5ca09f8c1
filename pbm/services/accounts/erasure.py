"""Erasure that keeps the games (docs/privacy.md): every personal field and log row of a
player goes, his userid in the games becomes a stable pseudonym, his running boards are
resigned unrated (so no opponent's rating moves), and the boards still replay to their
results."""

from __future__ import annotations

import logging

from sqlalchemy import Table, delete, or_, select, update
from sqlmodel import SQLModel

from pbm.services.accounts import player_log
from pbm.services.context import Context
from pbm.services.play import moves
from pbm.services.play.boards import board_from_row
from pbm.store import queries
from pbm.store.models import User

log = logging.getLogger(__name__)

# Rows keyed to a player that the games and the ratings need: kept, scrubbed (and the
# tournaments he made, which name him by account number, as `created_by`).
KEPT_TABLES = {
    "game_players",
    "player_ratings",
    "rating_changes",
    "tournament_entries",
    "tournaments",
}


def pseudonym(user: User) -> str:
    """The same for a user each time, and saying nothing of him."""
    return f"erased-{user.saved_id}"


def _table(name: str) -> Table:
    return SQLModel.metadata.tables[name]


def _mentions(text: str | bytes | None, needles: list[str]) -> bool:
    if text is None:
        return False
    low = (text.decode("utf-8", "replace") if isinstance(text, bytes) else text).lower()
    return any(n in low for n in needles)


def erase_user(ctx: Context, user: User) -> str:
    """Erase `user` (see the module); returns his pseudonym."""
    session = ctx.session
    uid, old = user.saved_id, user.userid
    addresses = queries.addresses_of(session, uid)
    needles = [old.lower(), user.userid_key, *(a.lower() for a in addresses)]
    name = pseudonym(user)
    user.userid, user.userid_key = name, name
    user.password_hash, user.disabled = "", True
    session.add(user)
    session.flush()
    for row in queries.games_of_user(session, uid, statuses=("active",)):
        row.rated = False  # an unrated end: no opponent's rating moves
        moves.resign(ctx, board_from_row(ctx, row), user)
    conn = session.connection()
    players = _table("game_players")
    seats = select(players.c.game_id, players.c.position).where(players.c.user_id == uid)
    marks = player_log.marks_condition(uid, [(g, p) for g, p in conn.execute(seats)])
    conn.execute(delete(_table("job_marks")).where(marks))  # his reminders and digests
    for table in SQLModel.metadata.sorted_tables:
        if "user_id" in table.c and table.name not in KEPT_TABLES:
            conn.execute(delete(table).where(table.c.user_id == uid))
    conn.execute(
        update(players)
        .where(players.c.user_id == uid)
        .values(queued_move=None, submitted_move=None, conditional=None, token=None)
    )
    games = _table("games")
    for game_id, comment_by, comment, reason in conn.execute(
        select(games.c.id, games.c.comment_by, games.c.comment, games.c.result_reason)
    ):
        values: dict[str, object] = {}
        if comment_by is not None and comment_by.lower() == old.lower():
            values.update(comment=None, comment_by=None)
        elif _mentions(comment, needles):
            values.update(comment=None)
        if reason and old in reason:
            values["result_reason"] = reason.replace(old, name)
        if values:
            conn.execute(update(games).where(games.c.id == game_id).values(**values))
    # A tournament names its maker by account number (`created_by`), which the pseudonym
    # keeps: nothing to rewrite there.
    for table_name in ("mailbox_health", "bounce_events"):
        table = _table(table_name)
        if addresses:
            conn.execute(delete(table).where(table.c.mailbox.in_(addresses)))
    events = _table("rate_events")
    conn.execute(
        delete(events).where(or_(*(events.c.key.contains(n, autoescape=True) for n in needles)))
    )
    # Mails that name him, in or out, kept or still queued, go: their text is his (and
    # a mail whose text was forgotten still names its recipients).
    outbox = _table("outbox")
    for outbox_id, subject, body, raw, recipients in conn.execute(
        select(outbox.c.id, outbox.c.subject, outbox.c.body, outbox.c.raw, outbox.c.recipients)
    ):
        if any(_mentions(t, needles) for t in (subject, body, raw, recipients)):
            bounced = _table("bounce_events")
            conn.execute(delete(bounced).where(bounced.c.outbox_id == outbox_id))
            conn.execute(delete(outbox).where(outbox.c.id == outbox_id))
    inbound, keys = _table("inbound_messages"), _table("inbound_keys")
    for inbound_id, raw, error in conn.execute(
        select(inbound.c.id, inbound.c.raw, inbound.c.error)
    ):
        if _mentions(raw, needles) or _mentions(error, needles):
            conn.execute(delete(keys).where(keys.c.inbound_id == inbound_id))
            answers = update(outbox).where(outbox.c.inbound_id == inbound_id)
            conn.execute(answers.values(inbound_id=None))
            conn.execute(delete(inbound).where(inbound.c.id == inbound_id))
    # Replies queued by the resignations to his own addresses: nobody to send them to.
    ctx.replies = [r for r in ctx.replies if not set(r.to) & set(addresses)]
    log.info("erased user #%d as %s", uid, name)
    return name
