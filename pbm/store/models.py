"""The tables. A game's move list is its source of truth; `Game.position` is a cache
that replaying the moves must reproduce."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import Column, Index, LargeBinary, Text, UniqueConstraint, false
from sqlmodel import Field, SQLModel

from pbm.mail.streams import MailReason
from pbm.store.models_mail import enum_column, reason_column
from pbm.store.types import JSONText, ShortJSON, Stored, UTCDateTime


def _ts(nullable: bool = False, index: bool = False) -> Column[datetime]:
    return Column(UTCDateTime(), nullable=nullable, index=index)


class User(Stored, SQLModel, table=True):
    __tablename__ = "users"

    id: int | None = Field(default=None, primary_key=True)
    userid: str = Field(max_length=64)  # as the player wrote it at signup
    # NFKC + case folding (queries.userid_key): userids ignore case and width.
    userid_key: str = Field(max_length=64, unique=True)
    password_hash: str = Field(max_length=255)
    created_at: datetime = Field(sa_column=_ts())
    disabled: bool = False
    # A computer player (its settings: pbm.store.models_bots.Bot); it has no address.
    bot: bool = Field(default=False, sa_column_kwargs={"server_default": false()})


class UserAddress(Stored, SQLModel, table=True):
    __tablename__ = "user_addresses"
    __table_args__ = (UniqueConstraint("user_id", "address"),)

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="users.id", index=True)
    address: str = Field(max_length=255, index=True)  # bare, lower-case
    position: int = 0  # 0 = the address replies go to
    # pbm.mail.identity.mailbox_key of the address: consent and budgets key on it.
    mailbox: str = Field(default="", max_length=255, index=True)
    # When its owner confirmed it (pbm.services.accounts.consent); until then pbm mails it
    # nothing but the confirmation request and answers to its own mail.
    confirmed_at: datetime | None = Field(default=None, sa_column=_ts(nullable=True))
    # The secret the confirmation request carries; None once confirmed.
    confirm_token: str | None = Field(default=None, max_length=40, unique=True)
    # Since when it waits for its owner (its creation, or the latest request to it): the
    # account goes `[consent] unconfirmed_days` after. None: an address from before
    # consent that pbm never asked, kept until it is (its owner writes, or the operator).
    unconfirmed_since: datetime | None = Field(default=None, sa_column=_ts(nullable=True))


class AddressRefusal(Stored, SQLModel, table=True):
    """A mailbox's "not me" to an account: pbm never mails it for that account again,
    and after refusals for several accounts, not for any new account."""

    __tablename__ = "address_refusals"
    __table_args__ = (UniqueConstraint("mailbox", "userid_key"),)

    id: int | None = Field(default=None, primary_key=True)
    mailbox: str = Field(max_length=255, index=True)
    userid_key: str = Field(max_length=64)  # kept after the account is removed
    refused_at: datetime = Field(sa_column=_ts())


class EndReason(StrEnum):
    """How a board ended (python-chess's `Termination`), stored as these words; what
    people read about it is the sentence in `Game.result_reason` (from templates/, or
    the rules' own words when the rules ended it)."""

    RULES = "rules"  # the rules' outcome: `result_reason` is the game's own fragment
    RESIGNED = "resigned"
    FORFEIT = "forfeit"  # on time
    WITHDREW = "withdrew"  # from the board's tournament
    DRAW_AGREED = "draw-agreed"
    ADJUDICATED = "adjudicated"  # the administrator's result
    DECLINED = "declined"  # removed: a player resigned before everyone had moved
    ABORTED = "aborted"  # removed by the administrator or the server


class BoardRow(Stored, SQLModel, table=True):
    __tablename__ = "games"
    __table_args__ = (
        UniqueConstraint("game", "board"),
        Index("ix_games_game_status", "game", "status"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game: str = Field(max_length=32)  # the canonical name of the rules module
    board: str = Field(max_length=32)  # "101", or a tournament name such as "a101"
    board_number: int | None = None  # numeric boards, for allocating the next one
    status: str = Field(default="active", max_length=16)  # active | finished | removed
    options: dict[str, Any] = Field(
        default_factory=dict, sa_column=Column(JSONText, nullable=False)
    )
    server_options: dict[str, str] = Field(
        default_factory=dict, sa_column=Column(JSONText, nullable=False)
    )
    position: str = Field(default="", sa_column=Column(Text, nullable=False))  # cache
    move_count: int = 0
    to_move: int | None = None  # challenge-order index of the player to move
    created_at: datetime = Field(sa_column=_ts())
    last_move_at: datetime = Field(sa_column=_ts())
    ended_at: datetime | None = Field(default=None, sa_column=_ts(nullable=True))
    winner: int | None = None  # challenge-order index; None with result "tie"
    result: str | None = Field(default=None, max_length=16)  # won | tie
    # the sentence shown; text, since a rename or an erasure makes the names in it longer
    result_reason: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    end_reason: EndReason | None = Field(
        default=None, sa_column=enum_column(EndReason, nullable=True)
    )
    scores: list[int] | None = Field(default=None, sa_column=Column(ShortJSON(200)))  # by player
    rated: bool = True
    comment: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    comment_by: str | None = Field(default=None, max_length=64)
    proposal: str | None = Field(default=None, max_length=8)  # draw | undo
    # The player indexes that voted for the proposal.
    proposal_votes: list[int] | None = Field(default=None, sa_column=Column(ShortJSON(200)))
    # A match of linked games (Quadrupel's maximum-points match): the id of its first
    # game, and this game's number in it (1, 2, 3...); None for a game on its own.
    match_id: int | None = Field(default=None, index=True)
    match_game: int | None = None


class GamePlayer(Stored, SQLModel, table=True):
    __tablename__ = "game_players"
    __table_args__ = (UniqueConstraint("game_id", "position"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    user_id: int = Field(foreign_key="users.id", index=True)
    position: int  # challenge order: 0 took seat 0 at the start
    resigned: bool = False
    queued_move: str | None = Field(default=None, max_length=200)
    submitted_move: str | None = Field(default=None, max_length=200)
    # His conditional moves on this board, a tree as JSON (pbm.services.play.conditional_tree):
    # secret, shown to him alone.
    conditional: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    seconds_used: float = 0.0
    # The secret this player's board mails carry (Reply-To and Message-ID), so a reply
    # from his address may just say the move. See pbm.services.mailing.tokens.
    token: str | None = Field(default=None, max_length=40, unique=True)


class Move(Stored, SQLModel, table=True):
    __tablename__ = "moves"
    __table_args__ = (UniqueConstraint("game_id", "number"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    number: int  # 1, 2, ... in the order played
    player: int  # challenge-order index of the player who made it
    text: str = Field(max_length=200)  # the game's canonical notation
    auto: bool = False  # played by the server (queued move)
    made_at: datetime = Field(sa_column=_ts())
    # What the rules said of it when it was played ("converts c5"); NULL before 0007.
    echo: str | None = Field(default=None, max_length=200)


class Subscription(Stored, SQLModel, table=True):
    """An observer of one board: `kind` is "subscribe" (every mail) or "notify" (the end)."""

    __tablename__ = "subscriptions"
    __table_args__ = (UniqueConstraint("game_id", "user_id", "kind"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    user_id: int = Field(foreign_key="users.id", index=True)
    kind: str = Field(default="subscribe", max_length=16)


class GameTypeSetting(Stored, SQLModel, table=True):
    """A player's settings for one game type: limit, seeking, subscribe/notify all."""

    __tablename__ = "game_type_settings"
    __table_args__ = (UniqueConstraint("user_id", "game"),)

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="users.id", index=True)
    game: str = Field(max_length=32)
    game_limit: int | None = None  # None = unlimited, 0 = refuses challenges
    seeking: int = 0
    subscribe_all: bool = False
    notify_all: bool = False


class RateEvent(Stored, SQLModel, table=True):
    """Events counted in a time window: password failures, help sent to strangers."""

    __tablename__ = "rate_events"
    __table_args__ = (Index("ix_rate_events_kind_key_at", "kind", "key", "at"),)

    id: int | None = Field(default=None, primary_key=True)
    kind: str = Field(max_length=16)  # auth-pair | auth-stranger | stranger-help ...
    key: str = Field(max_length=255)
    at: datetime = Field(sa_column=_ts())


class MessageStatus(StrEnum):
    """Where a stored inbound message stands (stored as these words)."""

    NEW = "new"  # to process, or to try again after a temporary failure
    DONE = "done"
    IGNORED = "ignored"  # a robot's mail or a duplicate: nothing to answer
    FAILED = "failed"  # a bug or a lasting store failure: `error` says which


class OutboxStatus(StrEnum):
    """Where a queued mail stands (stored as these words)."""

    QUEUED = "queued"
    SENT = "sent"
    FAILED = "failed"


class InboundMessage(Stored, SQLModel, table=True):
    __tablename__ = "inbound_messages"

    id: int | None = Field(default=None, primary_key=True)
    message_id: str = Field(max_length=255, unique=True)
    received_at: datetime = Field(sa_column=_ts())
    via: str = Field(max_length=8)  # imap | lmtp | smtp | pipe | cli
    raw: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    status: MessageStatus = Field(
        default=MessageStatus.NEW, sa_column=enum_column(MessageStatus, length=8, index=True)
    )
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    processed_at: datetime | None = Field(default=None, sa_column=_ts(nullable=True))
    # Temporary failures (store locked, disk full): tries so far and when to try again.
    attempts: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    next_attempt_at: datetime | None = Field(default=None, sa_column=_ts(nullable=True))
    # The daemon processing it and until when (pbm.store.claims): another takes it after.
    claimed_by: int | None = None
    claimed_until: datetime | None = Field(default=None, sa_column=_ts(nullable=True))


class InboundKey(Stored, SQLModel, table=True):
    """What a stored message is about, for its order (pbm.ordering): its sender's mailbox
    and each board its command lines name. A message waits while an earlier accepted one
    sharing a key is still unprocessed (pbm.store.claims.claim_inbound)."""

    __tablename__ = "inbound_keys"
    __table_args__ = (Index("ix_inbound_keys_key_inbound", "key", "inbound_id"),)

    id: int | None = Field(default=None, primary_key=True)
    inbound_id: int = Field(foreign_key="inbound_messages.id", index=True)
    key: str = Field(max_length=255)


class OutboxMail(Stored, SQLModel, table=True):
    __tablename__ = "outbox"
    __table_args__ = (
        Index("ix_outbox_status_next", "status", "next_attempt_at"),
        # Reply tokens in In-Reply-To/References count only in Message-IDs pbm issued.
        Index("ix_outbox_message_id", "message_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    created_at: datetime = Field(sa_column=_ts())
    envelope_from: str = Field(max_length=255)
    recipients: str = Field(sa_column=Column(Text, nullable=False))  # JSON list
    subject: str = Field(sa_column=Column(Text, nullable=False))
    body: str = Field(sa_column=Column(Text, nullable=False))
    raw: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    # The order for the HTML part (JSON, pbm.services.mailing.mail_html), made when the mail is
    # sent; NULL: the text part alone.
    html: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    status: OutboxStatus = Field(
        default=OutboxStatus.QUEUED, sa_column=enum_column(OutboxStatus, length=8)
    )
    attempts: int = 0
    next_attempt_at: datetime = Field(sa_column=_ts())
    last_error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    sent_at: datetime | None = Field(default=None, sa_column=_ts(nullable=True))
    message_id: str = Field(max_length=255)
    inbound_id: int | None = Field(default=None, foreign_key="inbound_messages.id", index=True)
    # The daemon sending it and until when (pbm.store.claims): another takes it after.
    claimed_by: int | None = None
    claimed_until: datetime | None = Field(default=None, sa_column=_ts(nullable=True))
    # Why it was sent (X-PBM-Reason); NULL for mail queued before 0014.
    reason: MailReason | None = Field(default=None, sa_column=reason_column())
    # The secret of its VERP envelope sender (pbm.mail.bounces): a bounce names it.
    verp: str | None = Field(default=None, max_length=32)


from pbm.store import models_correspondence  # noqa: E402,F401,I001  (correspondence tables)
from pbm.store import models_tournament  # noqa: E402,F401  (tournament tables)
from pbm.store import models_cluster  # noqa: E402,F401  (the daemons table)
from pbm.store import models_bots  # noqa: E402,F401  (the bots table)
from pbm.store import models_mail  # noqa: E402,F401  (bounces, complaints, streams)
from pbm.store import models_privacy  # noqa: E402,F401  (erasure requests, export parts)
