"""The bots' table: a bot is a `users` row flagged `bot`, and this row holds what it
plays, how strong, with which engine, and what its outside engine did wrong."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, Text
from sqlmodel import Field, SQLModel

from pbm.store.types import Stored, UTCDateTime


def _ts(nullable: bool = False) -> Column[datetime]:
    return Column(UTCDateTime(), nullable=nullable)


class Bot(Stored, SQLModel, table=True):
    """A computer player's settings and its engine's record (`pbm bot show`)."""

    __tablename__ = "bots"

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="users.id", unique=True)
    games: str = Field(default="", max_length=255)  # comma-separated names; "" = every game
    level: int = 4  # 1 to 4 (pbm.bots.LEVELS)
    # "builtin", or the command line of an outside engine (docs/engines.md).
    engine: str = Field(default="builtin", sa_column=Column(Text, nullable=False))
    max_games: int | None = None  # active boards at most; None = no limit
    disabled: bool = False  # refuses challenges and does not move
    created_at: datetime = Field(sa_column=_ts())
    moves: int = 0  # moves played (resignations and draw answers included)
    failures: int = 0  # failed tries of its outside engine
    fallbacks: int = 0  # moves the built-in engine played after those failures
    last_failure: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    last_failure_at: datetime | None = Field(default=None, sa_column=_ts(nullable=True))
