"""The table of running daemons: each `pbm serve` writes its heartbeat here, so that
`pbm mail status` sees the whole cluster and the work of a daemon gone silent is
taken over (pbm.store.claims)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, Text
from sqlmodel import Field, SQLModel

from pbm.store.types import Stored, UTCDateTime


def _ts(nullable: bool = False) -> Column[datetime]:
    return Column(UTCDateTime(), nullable=nullable)


class DaemonBeat(Stored, SQLModel, table=True):
    """One `pbm serve` process: where it runs, since when, when it was last heard of
    (its claims last until `last_seen` plus the lease) and what it has done."""

    __tablename__ = "daemons"

    id: int | None = Field(default=None, primary_key=True)
    host: str = Field(max_length=255)
    pid: int
    started_at: datetime = Field(sa_column=_ts())
    last_seen: datetime = Field(sa_column=_ts())
    # set by a clean stop; a row with neither this nor a fresh last_seen is a dead daemon
    stopped_at: datetime | None = Field(default=None, sa_column=_ts(nullable=True))
    listen: str = Field(default="", max_length=255)  # its SMTP/LMTP endpoints, for people
    counters: str = Field(default="{}", sa_column=Column(Text, nullable=False))  # JSON
