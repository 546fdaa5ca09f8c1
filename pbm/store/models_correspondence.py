"""Tables of correspondence play: ratings and their history, vacation, clock banks, the
periodic jobs' record of what they did, and mail preferences (digest mode)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, UniqueConstraint, false
from sqlmodel import Field, SQLModel

from pbm.store.types import Stored, UTCDateTime


def _ts(nullable: bool = False) -> Column[datetime]:
    return Column(UTCDateTime(), nullable=nullable)


class PlayerRating(Stored, SQLModel, table=True):
    """A player's ratings for one game type: pbmserv's and Glicko-2 beside it."""

    __tablename__ = "player_ratings"
    __table_args__ = (UniqueConstraint("user_id", "game"),)

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="users.id", index=True)
    game: str = Field(max_length=32, index=True)
    value: float = 1600.0
    games: int = 0
    won: int = 0
    lost: int = 0
    ties: int = 0
    glicko: float = 1500.0
    glicko_rd: float = 350.0
    glicko_volatility: float = 0.06


class RatingChange(Stored, SQLModel, table=True):
    """One player's rating before and after one rated game (history, mail lines, audit)."""

    __tablename__ = "rating_changes"
    __table_args__ = (UniqueConstraint("game_id", "user_id"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    user_id: int = Field(foreign_key="users.id", index=True)
    game: str = Field(max_length=32)
    score: float  # 1 won, 0.5 tie, 0 lost
    before: float
    after: float
    games_after: int
    glicko_before: float
    glicko_after: float
    at: datetime = Field(sa_column=_ts())


class Vacation(Stored, SQLModel, table=True):
    """A player's vacation bank (days, accrued up to `accrued_at`) and the running vacation."""

    __tablename__ = "vacations"

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="users.id", unique=True)
    bank_days: float = 0.0
    accrued_at: datetime = Field(sa_column=_ts())
    started_at: datetime | None = Field(default=None, sa_column=_ts(nullable=True))


class VacationSpan(Stored, SQLModel, table=True):
    """A vacation taken (ended_at None while it runs): the clocks leave it out."""

    __tablename__ = "vacation_spans"

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="users.id", index=True)
    started_at: datetime = Field(sa_column=_ts())
    ended_at: datetime | None = Field(default=None, sa_column=_ts(nullable=True))


class ClockBank(Stored, SQLModel, table=True):
    """A player's Fischer bank on one board, as it stood after his last move."""

    __tablename__ = "clock_banks"
    __table_args__ = (UniqueConstraint("game_id", "position"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    position: int
    bank_seconds: float


class JobMark(Stored, SQLModel, table=True):
    """Something a periodic job did once (a nag for a move number, a day's digest): a job
    that runs again, or after a restart, finds the mark and does not repeat it."""

    __tablename__ = "job_marks"
    __table_args__ = (UniqueConstraint("kind", "key"),)

    id: int | None = Field(default=None, primary_key=True)
    kind: str = Field(max_length=16)  # nag | digest | vacation-wait
    key: str = Field(max_length=128)
    at: datetime = Field(sa_column=_ts())


class MailPreference(Stored, SQLModel, table=True):
    """How a player wants board mail: every move (default) or one daily digest, with
    an HTML part (default) or as text alone."""

    __tablename__ = "mail_preferences"

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="users.id", unique=True)
    digest: bool = False
    # "html": a text part and an HTML part with the drawn board; "text": the text alone.
    format: str = Field(default="html", max_length=8, sa_column_kwargs={"server_default": "html"})
    # Whether players he shares no board or tournament with may `message` him.
    messages_anyone: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    # Whether his player page, feeds and calendar are off the web pages (pbm.web).
    profile_hidden: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
