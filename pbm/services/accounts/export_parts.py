"""An export past `[limits] export_bytes_per_mail` (docs/records.md): the first part is
mailed at once, each next one a day after the last, every part a zip of whole records.
The next part waits in `export_parts` with the board it starts at; the periodic job
(pbm.privacy_jobs) mails it when due and queues the one after."""

from __future__ import annotations

import logging
from datetime import timedelta

from sqlmodel import col, delete, select

from pbm.errors import PbmError
from pbm.services.accounts import bulk_export
from pbm.services.accounts.bulk_export import BoardKey, ExportRequest, Which
from pbm.services.context import Attachment, Context
from pbm.store.models import User
from pbm.store.models_privacy import ExportPart
from pbm.texts import phrase

log = logging.getLogger(__name__)

PART_INTERVAL = timedelta(days=1)


def mail_export(ctx: Context, user: User, request: ExportRequest, number: int = 1) -> str:
    """Mail part `number` of the export `request` to the player's confirmed address and
    queue the next part if the bound left boards out; returns the address. PbmError
    when he has no confirmed address."""
    boards = bulk_export.boards_of(ctx, user, request)
    limit = bulk_export.zip_bound(ctx.config.export_bytes_per_mail)
    made = bulk_export.player_zip(ctx, boards, limit)
    body = phrase("export_body", userid=user.userid, boards=made.boards)
    if made.rest is not None:
        due = ctx.now() + PART_INTERVAL
        body += "\n\n" + phrase(
            "export_part_next",
            number=number,
            left=len(boards) - made.boards,
            date=due.strftime("%Y-%m-%d %H:%M UTC"),
        )
    elif number > 1:
        body += "\n\n" + phrase("export_part_last", number=number)
    subject = phrase("subject_export", userid=user.userid)
    name = f"pbm-{user.userid}.zip"
    if number > 1:
        subject = phrase("subject_export_part", userid=user.userid, number=number)
        name = f"pbm-{user.userid}-part{number}.zip"
    address = bulk_export.mail_to_confirmed(ctx, user, subject, body, Attachment(name, made.data))
    if made.rest is not None:
        _queue(ctx, user, request, made.rest, number + 1)
    return address


def _queue(ctx: Context, user: User, request: ExportRequest, start: BoardKey, number: int) -> None:
    ctx.session.add(
        ExportPart(
            user_id=user.saved_id,
            game=request.game,
            which=request.which.value,
            since=request.since,
            from_created_at=start.created_at,
            from_game_id=start.game_id,
            number=number,
            due_at=ctx.now() + PART_INTERVAL,
        )
    )
    ctx.session.flush()


def drop_queued(ctx: Context, user: User) -> None:
    """Forget the parts still to come of his earlier export (a new export replaces it)."""
    ctx.session.exec(delete(ExportPart).where(col(ExportPart.user_id) == user.saved_id))


def due_parts(ctx: Context) -> list[int]:
    query = select(ExportPart.id).where(col(ExportPart.due_at) <= ctx.now())
    return [i for i in ctx.session.exec(query) if i is not None]


def send_due(ctx: Context, part_id: int) -> int:
    """Mail the queued part `part_id` if it is still due; returns 1 if it went."""
    part = ctx.session.get(ExportPart, part_id)
    if part is None or part.due_at > ctx.now():
        return 0  # sent, or replaced by a new export, since the list was read
    user = ctx.session.get(User, part.user_id)
    ctx.session.delete(part)
    ctx.session.flush()
    if user is None or user.disabled:
        return 0
    request = ExportRequest(
        part.game,
        Which(part.which),
        part.since,
        BoardKey(part.from_created_at, part.from_game_id),
    )
    try:
        mail_export(ctx, user, request, part.number)
    except PbmError:
        log.warning("export part %d of user #%d dropped: no address", part.number, user.saved_id)
        return 0
    return 1
