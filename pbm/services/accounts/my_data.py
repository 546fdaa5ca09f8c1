"""A copy of everything pbm keeps about one player (docs/privacy.md): every row keyed to
his account or his addresses, as JSON, for `mydata` by mail and `pbm user export`."""

from __future__ import annotations

import base64
import io
import json
import zipfile
from datetime import datetime
from email.parser import BytesHeaderParser
from email.utils import getaddresses
from enum import Enum
from typing import Any

from sqlalchemy import Table, or_, select
from sqlmodel import SQLModel

from pbm.clock import as_utc
from pbm.services.accounts import player_log
from pbm.services.accounts.bulk_export import ExportRequest, boards_of
from pbm.services.context import Context
from pbm.services.play import records_json
from pbm.store import queries
from pbm.store.models import User

FORMAT = "pbm-personal-data"
VERSION = 1
# Columns whose values are secrets of the server, not facts about the player.
WITHHELD = {"password_hash"}
# How much of a stored inbound mail is read to find its sender.
HEADER_BYTES = 16_384


def _value(value: Any) -> Any:
    if isinstance(value, datetime):
        return as_utc(value).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Enum):
        return value.value
    return value


def _rows(ctx: Context, table: Table, condition: Any) -> list[dict[str, Any]]:
    result = queries.core_rows(ctx.session, select(table).where(condition), {})
    return [{k: _value(v) for k, v in row._mapping.items() if k not in WITHHELD} for row in result]


def _table(name: str) -> Table:
    return SQLModel.metadata.tables[name]


def _sent_by(raw: bytes, addresses: set[str]) -> bool:
    headers = BytesHeaderParser().parsebytes(raw[:HEADER_BYTES])
    senders = getaddresses([str(v) for v in headers.get_all("From", [])])
    return any(address.lower() in addresses for _, address in senders)


def _keyed(ctx: Context, user: User, addresses: list[str]) -> dict[str, list[dict[str, Any]]]:
    uid = user.saved_id
    found: dict[str, list[dict[str, Any]]] = {
        "users": _rows(ctx, _table("users"), _table("users").c.id == uid)
    }
    for table in SQLModel.metadata.sorted_tables:
        if "user_id" in table.c:
            found[table.name] = _rows(ctx, table, table.c.user_id == uid)
    for name in ("mailbox_health", "bounce_events"):
        table = _table(name)
        found[name] = _rows(ctx, table, table.c.mailbox.in_(addresses)) if addresses else []
    events = _table("rate_events")
    keys = [user.userid_key, *addresses]
    found["rate_events"] = _rows(
        ctx, events, or_(*(events.c.key.contains(k, autoescape=True) for k in keys))
    )
    outbox = _table("outbox")
    found["outbox"] = (
        [
            {k: v for k, v in row.items() if k not in ("raw", "html")}
            for row in _rows(
                ctx,
                outbox,
                or_(*(outbox.c.recipients.contains(f'"{a}"', autoescape=True) for a in addresses)),
            )
        ]
        if addresses
        else []
    )
    inbound = _table("inbound_messages")
    found["inbound_messages"] = [
        row
        for row in _rows(ctx, inbound, inbound.c.id > 0)
        if _sent_by(base64.b64decode(row["raw"]), set(addresses))
    ]
    seats = [(row["game_id"], row["position"]) for row in found["game_players"]]
    found["job_marks"] = _rows(ctx, _table("job_marks"), player_log.marks_condition(uid, seats))
    tournaments = _table("tournaments")
    found["tournaments"] = _rows(ctx, tournaments, tournaments.c.created_by == uid)
    pairings = _table("tournament_pairings")
    found["tournament_pairings"] = _rows(
        ctx, pairings, or_(pairings.c.first_id == uid, pairings.c.second_id == uid)
    )
    return found


def personal_data(ctx: Context, user: User) -> dict[str, Any]:
    """Every row keyed to the player, by table, and his boards as JSON records."""
    addresses = queries.addresses_of(ctx.session, user.saved_id)
    boards = boards_of(ctx, user, ExportRequest())
    tables = _keyed(ctx, user, addresses)
    return {
        "format": FORMAT,
        "version": VERSION,
        "userid": user.userid,
        "made_at": _value(ctx.now()),
        "tables": tables,
        "boards": [records_json.to_json(ctx, board) for board in boards],
        # pbm's running log goes to the system's journal, not to its database: these
        # are the event rows it keeps about him, one line each (docs/privacy.md).
        "log_lines": player_log.log_lines(tables),
    }


def personal_json(ctx: Context, user: User) -> str:
    return json.dumps(personal_data(ctx, user), indent=2, ensure_ascii=False) + "\n"


def personal_zip(ctx: Context, user: User) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"pbm-{user.userid}-data.json", personal_json(ctx, user))
    return buffer.getvalue()
