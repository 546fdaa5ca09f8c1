"""Tables of tournaments: the tournament, its entrants, and its pairings (one row a
game or bye; a knockout match drawn and replayed has a second leg)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Column, UniqueConstraint, false
from sqlmodel import Field, SQLModel

from pbm.store.types import JSONText, Stored, UTCDateTime


def _ts(nullable: bool = False) -> Column[datetime]:
    return Column(UTCDateTime(), nullable=nullable)


class Tournament(Stored, SQLModel, table=True):
    __tablename__ = "tournaments"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=32, unique=True)  # lower-case, as players write it
    game: str = Field(max_length=32)  # the rules' canonical name
    options: dict[str, Any] = Field(
        default_factory=dict, sa_column=Column(JSONText, nullable=False)
    )  # the boards' params
    kind: str = Field(max_length=16)  # roundrobin | swiss | knockout
    double: bool = False  # a double round robin
    rounds: int = 0  # Swiss: rounds to play; others: known once started
    prefix: str = Field(max_length=8, unique=True)  # board names: prefix + 101, 102...
    nag_days: float = 1.0
    forfeit_days: float = 7.0
    # Computer players may enter (`--bots`); others refuse them (docs/bots.md).
    bots: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    status: str = Field(default="open", max_length=16)  # open|running|finished|cancelled
    current_round: int = 0
    boards_made: int = 0  # how many board names were given out
    created_by: int | None = Field(default=None, foreign_key="users.id")
    created_at: datetime = Field(sa_column=_ts())
    started_at: datetime | None = Field(default=None, sa_column=_ts(nullable=True))
    ended_at: datetime | None = Field(default=None, sa_column=_ts(nullable=True))


class TournamentEntry(Stored, SQLModel, table=True):
    __tablename__ = "tournament_entries"
    __table_args__ = (UniqueConstraint("tournament_id", "user_id"),)

    id: int | None = Field(default=None, primary_key=True)
    tournament_id: int = Field(foreign_key="tournaments.id", index=True)
    user_id: int = Field(foreign_key="users.id", index=True)
    seed: int = 0  # 1 = the top seed, set at the start
    joined_at: datetime = Field(sa_column=_ts())
    withdrawn: bool = False
    eliminated: bool = False  # knockout: lost a match


class TournamentPairing(Stored, SQLModel, table=True):
    __tablename__ = "tournament_pairings"
    __table_args__ = (UniqueConstraint("tournament_id", "round", "slot", "leg"),)

    id: int | None = Field(default=None, primary_key=True)
    tournament_id: int = Field(foreign_key="tournaments.id", index=True)
    round: int
    slot: int  # the table (match) number within the round, from 1
    leg: int = 1  # knockout: 2 for the replay of a drawn game
    first_id: int = Field(foreign_key="users.id")  # moves first
    second_id: int | None = Field(default=None, foreign_key="users.id")  # None: a bye
    game_id: int | None = Field(default=None, foreign_key="games.id", index=True)
    score: float | None = None  # the first player's: 1, 0.5 or 0; None while unplayed
    how: str | None = Field(default=None, max_length=16)  # game|bye|withdrawal|seed|aborted
