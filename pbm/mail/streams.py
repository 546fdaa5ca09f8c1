"""Why a mail was sent, and the headers that say so to mail programs and providers.

Every outgoing mail has one `MailReason` (GitLab's `X-GitLab-NotificationReason` is the
model): answers to a player's own command and confirmations are mail he asked for; the
rest are notifications, each in a `Stream` its reader can stop without a password
(`List-Unsubscribe`). `StreamHeaders` is what compose writes for one mail.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class MailReason(StrEnum):
    """The reason a mail went out, written in `X-PBM-Reason` and the outbox row."""

    YOUR_MOVE = "your-move"  # a board mail that puts the reader on the move
    OPPONENT_MOVED = "opponent-moved"  # any other board mail he did not cause himself
    REMINDER = "reminder"  # a nag: his move is overdue
    TOURNAMENT = "tournament"  # rounds, results and tables of his tournaments
    ANSWER = "answer"  # the answer to a command he sent
    CONFIRMATION = "confirmation"  # a request to confirm an address, or a stop
    DIGEST = "digest"  # the daily digest of his boards
    MESSAGE = "message"  # another player's words: `message`, board chat

    @property
    def asked_for(self) -> bool:
        """Whether the reader asked for this mail (his command, his confirmation)."""
        return self in (MailReason.ANSWER, MailReason.CONFIRMATION)


class Stream(StrEnum):
    """A kind of notification its reader can stop as a whole."""

    BOARDS = "boards"  # stopping it sends his boards in the daily digest instead
    REMINDERS = "reminders"
    TOURNAMENTS = "tournaments"
    DIGEST = "digest"
    MESSAGES = "messages"


_STREAM_OF = {
    MailReason.YOUR_MOVE: Stream.BOARDS,
    MailReason.OPPONENT_MOVED: Stream.BOARDS,
    MailReason.REMINDER: Stream.REMINDERS,
    MailReason.TOURNAMENT: Stream.TOURNAMENTS,
    MailReason.DIGEST: Stream.DIGEST,
    MailReason.MESSAGE: Stream.MESSAGES,
}


def stream_of(reason: MailReason) -> Stream | None:
    """The stream a notification belongs to; None for mail the reader asked for."""
    return _STREAM_OF.get(reason)


@dataclass(frozen=True, slots=True)
class StreamHeaders:
    """The per-stream headers of one mail: `list_id` (`<quarto-101.boards.HOST>`, or
    None for mail about no board or tournament), `unsubscribe` (the reader's stop
    address for this stream, None for mail he asked for) and `feedback_id` (the Gmail
    feedback loop's `a:b:c:SENDERID`)."""

    reason: MailReason
    feedback_id: str
    list_id: str | None = None
    unsubscribe: str | None = None
    # With web pages (pbm.mail.web_links): the one-click stop (RFC 8058) beside the
    # stop address, and the page of the board or tournament (Archived-At, List-Archive).
    unsubscribe_url: str | None = None
    archive_url: str | None = None


def _label(text: str) -> str:
    """A name as a DNS-style label for List-Id: letters, digits and hyphens."""
    kept = "".join(c if c.isascii() and c.isalnum() else "-" for c in text.lower())
    return "-".join(part for part in kept.split("-") if part) or "x"


def board_list_id(game: str, board: str, host: str) -> str:
    return f"<{_label(game)}-{_label(board)}.boards.{host}>"


def tournament_list_id(name: str, host: str) -> str:
    return f"<{_label(name)}.tournaments.{host}>"


def feedback_id(reason: MailReason, game: str | None, host: str) -> str:
    """`REASON:GAME:pbm:HOST`: Gmail's Postmaster Tools count complaints per field."""
    return f"{reason.value}:{_label(game) if game else 'none'}:pbm:{host}"
