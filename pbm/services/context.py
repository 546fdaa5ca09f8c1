"""What every service call needs: the session, the clock, the configuration, who asks,
and where the replies it produces go. It caches nothing: a service that needs a row
asks the store (what a process caches: docs/architecture.md, "What a process keeps")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum

from sqlmodel import Session

from pbm.clock import Clock
from pbm.config import Config
from pbm.mail.inbound import InboundMail
from pbm.mail.streams import MailReason


@dataclass(frozen=True)
class PictureOrder:
    """A board to draw in a mail's HTML part (pbm.services.mailing.mail_html): the position
    after `upto` moves, seen from `seat` (None: as an observer sees it, which is every
    seat's view where the game hides nothing). `ended`: the result line of a finished
    board, said in its last position's picture instead of whose turn it is."""

    game_id: int
    upto: int
    seat: int | None
    ended: str | None = None


class ReplyKind(Enum):
    """What a mail is: it steers how the mails of one message are merged and bounded
    (pbm.output_limits) and the reason an unmarked mail is sent for
    (pbm.services.mailing.reasons)."""

    # Answers to the sender.
    ACCOUNT = "account"
    CONFIRMATION = "confirmation"  # the one mail to an address not yet confirmed
    BUDGET_NOTICE = "budget-notice"  # stands for the answers a reply budget held back
    ANSWERS = "answers"  # several answers merged into one mail
    ERROR = "error"
    HELP = "help"
    LIST = "list"
    PREVIEW = "preview"
    # Mails a change of state causes.
    BOARD = "board"
    NEW_BOARD = "new-board"
    REMOVED = "removed"
    NOTIFICATION = "notification"
    CHAT = "chat"
    MESSAGE = "message"
    NAG = "nag"
    TOURNAMENT = "tournament"
    DIGEST = "digest"


@dataclass
class Answering:
    """How the unit of work (pbm.work) queues the replies of what it ran."""

    bounded: bool = False  # through pbm.output_limits: they answer someone who wrote
    mail: InboundMail | None = None  # the mail they answer: quoted and threaded
    inbound_id: int | None = None  # the stored message they answer


@dataclass
class Reply:
    """One mail to send. pbm.outgoing composes it (threading headers, token, quote)."""

    to: list[str]
    subject: str
    body: str
    kind: ReplyKind
    game_id: int | None = None  # the board this mail is about, for threading
    user_id: int | None = None  # the recipient's account
    # A player's reply token on that board and the move count of the position the mail
    # shows: the reply address and Message-ID carry both (pbm.mail.addressing).
    token: str | None = None
    move_count: int | None = None
    # The boards the HTML part draws above the text, in the order of the boards in
    # `body` (pbm.services.mailing.mail_html; drawn when the mail is sent).
    pictures: tuple[PictureOrder, ...] = ()
    quote_original: bool = False  # errors quote the message they answer (as pbmserv)
    to_sender: bool = False  # a direct answer: In-Reply-To the inbound message
    # An answer to what the sender asked (help, lists, show, refusals), as opposed to a
    # mail a change of state causes (board mails, chat): all answers to one message are
    # mailed as one (see pbm.output_limits).
    answer: bool = False
    # Why it is sent (X-PBM-Reason); None: pbm.outgoing tells it from `kind` and
    # whether it goes to the sender (pbm.services.mailing.reasons).
    reason: MailReason | None = None
    # The board (game, board name) or tournament it is about, for its List-Id.
    board: tuple[str, str] | None = None
    tournament: str | None = None
    # A Reply-To of its own (a stop confirmation's resume address) instead of the token's.
    reply_to: str | None = None
    # A file mailed with it (an export's zip): such a mail goes as text and attachment,
    # without an HTML part, under its own size bound (pbm.services.accounts.bulk_export).
    attachment: Attachment | None = None
    # The board whose end caused this mail (a tournament's next round or final
    # standings, a match's next game). The end is handled before the board's own mails
    # are written, so `in_order` moves this mail after them: a player reads a game's
    # result before what came of it.
    after_board: int | None = None


def in_order(replies: Sequence[Reply]) -> list[Reply]:
    """`replies` in the order they are mailed: each mail caused by a board's end right
    after the last mail about that board (when there is one after it), the rest as
    they came."""
    last: dict[int, int] = {}
    for i, reply in enumerate(replies):
        if reply.game_id is not None and reply.after_board != reply.game_id:
            last[reply.game_id] = i
    held: dict[int, list[Reply]] = {}
    ordered: list[Reply] = []
    for i, reply in enumerate(replies):
        board = reply.after_board
        if board is not None and last.get(board, -1) > i:
            held.setdefault(last[board], []).append(reply)
        else:
            ordered.append(reply)
        ordered.extend(held.pop(i, []))
    return ordered


@dataclass(frozen=True)
class Attachment:
    filename: str
    data: bytes
    mime_type: str = "application/zip"


@dataclass
class Context:
    session: Session
    clock: Clock
    config: Config
    sender: str  # the address a request came from ("" for the admin CLI)
    replies: list[Reply] = field(default_factory=list)
    # Password failures (rate-event kind, key) of this message: they count from the moment
    # they are appended (pbm.services.accounts.users), and record_auth_failures stores them
    # outside the failing command's rolled-back savepoint.
    auth_failures: list[tuple[str, str]] = field(default_factory=list)
    # Set when a trusted Authentication-Results says the From failed (dmarc=fail): its
    # password attempts then count as a stranger's, never against the real address.
    sender_unverified: bool = False
    # Set when a trusted Authentication-Results says dmarc=pass for the From's domain: a
    # signup from it confirms that address at once, and its password checks skip the
    # lock a forger of that address could have set.
    sender_dmarc_pass: bool = False
    # Set when the mail carries a valid reply token of the sender's own (a board's or a
    # confirmation request's): its password checks skip that lock too.
    sender_token: bool = False
    # Set by the daemon's processor: a password check whose outcome no cache keeps is
    # raised (PasswordCheckNeeded) rather than run, so that scrypt, a tenth of a second,
    # runs outside the write lock and the message then runs again.
    password_checks_outside: bool = False
    answering: Answering = field(default_factory=Answering)

    def now(self) -> datetime:
        return self.clock.now()

    def reply(self, reply: Reply) -> None:
        self.replies.append(reply)
