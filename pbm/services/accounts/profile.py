"""Whether a player's page is on the web (docs/web.md): `set USERID PASSWORD profile
hidden|shown`. A hidden player has no page, feed or calendar, and is left out of the
rating tables; his boards still show (they are his opponents' too), by userid."""

from __future__ import annotations

from sqlmodel import Session

from pbm.services.context import Context
from pbm.store import queries
from pbm.store.models import User

STATES = ("hidden", "shown")


def hidden(session: Session, user_id: int) -> bool:
    found = queries.mail_preference(session, user_id)
    return found is not None and found.profile_hidden


def set_hidden(ctx: Context, user: User, value: bool) -> None:
    queries.own_mail_preference(ctx.session, user.saved_id).profile_hidden = value
    ctx.session.flush()
