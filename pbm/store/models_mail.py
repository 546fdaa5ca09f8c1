"""Tables of mail hygiene: each mailbox's bounce score, every bounce and complaint pbm
was told of, and each reader's notification streams with their stop addresses."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import Column, Enum, Index, UniqueConstraint
from sqlmodel import Field, SQLModel

from pbm.mail.bounces import BounceKind
from pbm.mail.streams import MailReason, Stream
from pbm.store.types import Stored, UTCDateTime


def _ts(nullable: bool = False, index: bool = False) -> Column[datetime]:
    return Column(UTCDateTime(), nullable=nullable, index=index)


def enum_column(
    kind: type[StrEnum], *, nullable: bool = False, length: int = 16, index: bool = False
) -> Column[StrEnum]:
    """A column holding one of `kind`'s values as text (no database enum type, so adding
    a value needs no migration of the type); read back as the enum."""
    return Column(
        Enum(
            kind,
            native_enum=False,
            create_constraint=False,
            length=length,
            values_callable=lambda members: [m.value for m in members],
        ),
        nullable=nullable,
        index=index,
    )


def reason_column() -> Column[StrEnum]:
    return enum_column(MailReason, nullable=True)


class MailboxHealth(Stored, SQLModel, table=True):
    """One mailbox (pbm.mail.identity.mailbox_key) that bounced or complained."""

    __tablename__ = "mailbox_health"

    id: int | None = Field(default=None, primary_key=True)
    mailbox: str = Field(max_length=255, unique=True)
    score: float = 0.0
    last_bounce_at: datetime | None = Field(default=None, sa_column=_ts(nullable=True))
    # Set while pbm mails the mailbox nothing (its score reached the threshold).
    disabled_at: datetime | None = Field(default=None, sa_column=_ts(nullable=True))
    # Set once its reader reported a mail as spam: no notification goes to it any more.
    complained_at: datetime | None = Field(default=None, sa_column=_ts(nullable=True))


class BounceEvent(Stored, SQLModel, table=True):
    """A bounce or complaint, attributed to the outbox mail it returned (when known)."""

    __tablename__ = "bounce_events"
    __table_args__ = (Index("ix_bounce_events_at", "at"),)

    id: int | None = Field(default=None, primary_key=True)
    at: datetime = Field(sa_column=_ts())
    mailbox: str = Field(max_length=255, index=True)
    kind: BounceKind = Field(sa_column=enum_column(BounceKind))
    status: str = Field(default="", max_length=16)  # the DSN status code, "5.1.1"
    outbox_id: int | None = Field(default=None, foreign_key="outbox.id")
    # Whether it raised the score (at most one bounce counts per mailbox and day).
    counted: bool = False


class MailStream(Stored, SQLModel, table=True):
    """A reader's notification stream: the code of its stop address, and whether he
    stopped it."""

    __tablename__ = "mail_streams"
    __table_args__ = (UniqueConstraint("user_id", "stream"),)

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="users.id", index=True)
    stream: Stream = Field(sa_column=enum_column(Stream))
    code: str = Field(max_length=32, unique=True)
    stopped_at: datetime | None = Field(default=None, sa_column=_ts(nullable=True))
