"""Tables of a player's own data (docs/privacy.md): an erasure he asked for by mail, and
the parts of an export too large for one mail, each sent a day after the last."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from pbm.store.models_mail import _ts
from pbm.store.types import Stored


class ErasureRequest(Stored, SQLModel, table=True):
    """`erase USERID PASSWORD`: asked (a token mailed to his confirmed address), then,
    once the token came back, scheduled for `due_at`; a cancel deletes the row, and the
    erasure deletes it with the rest of his rows."""

    __tablename__ = "erasure_requests"

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="users.id", unique=True)
    token: str = Field(max_length=32)
    asked_at: datetime = Field(sa_column=_ts())
    confirmed_at: datetime | None = Field(default=None, sa_column=_ts(nullable=True))
    due_at: datetime | None = Field(default=None, sa_column=_ts(nullable=True, index=True))


class ExportPart(Stored, SQLModel, table=True):
    """The next mail of an `export` past `[limits] export_bytes_per_mail`: the request's
    words, and the first board it starts at (the oldest left out of the last part)."""

    __tablename__ = "export_parts"

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="users.id", index=True)
    game: str | None = Field(default=None, max_length=32)
    which: str = Field(max_length=16)
    since: datetime | None = Field(default=None, sa_column=_ts(nullable=True))
    from_created_at: datetime = Field(sa_column=_ts())
    from_game_id: int
    number: int  # this part's number: 2 for the first one queued
    due_at: datetime = Field(sa_column=_ts(index=True))
