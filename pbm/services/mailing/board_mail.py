"""Who gets a board's mails, each rendered for his own seat, and what a board summary
shows beside the board (pbm.services.play.board_text draws what it is given)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pbm.mail.streams import MailReason
from pbm.services.accounts.users import reply_addresses, reply_addresses_of
from pbm.services.context import Context, Reply, ReplyKind
from pbm.services.correspondence.clocks import shows_timing, timing_lines
from pbm.services.mailing import mail_html, tokens
from pbm.services.mailing.mail_html import picture_order
from pbm.services.play.board_text import BoardFacts, Timing, subject_for, summary
from pbm.services.play.boards import Board
from pbm.services.play.echoes import with_echoes
from pbm.services.play.matches import match_lines
from pbm.services.play.ratings import rating_lines
from pbm.services.play.secrecy import ShownMove
from pbm.store import queries
from pbm.store.models import GameTypeSetting, User
from pbm.texts import phrase


def title_for(board: Board, kind: str) -> str:
    if kind == "new":
        return phrase("title_new", game=board.rules.title, board=board.row.board)
    return phrase("title_kind", kind=kind, label=board.label)


def board_results(ctx: Context, board: Board) -> tuple[list[str], list[str]]:
    """The blocks a board mail prints under the status (`summary`'s `results`): the
    rating changes of an ended board and a match's score. The same for every reader."""
    return rating_lines(ctx, board), match_lines(ctx, board)


def board_facts(
    ctx: Context,
    board: Board,
    *,
    moves: Sequence[ShownMove] | None = None,
    subscribers: Sequence[User] | None = None,
    timing: bool | None = None,
    results: bool = True,
) -> BoardFacts:
    """Everything `summary` prints besides the board: the moves (all of them unless
    given) with their echoes, the subscribers, the timing block (shown on request, else
    on ended boards and boards with time rules of their own, as pbmserv) and the
    results (not for a view of an earlier position: show board#n, previews)."""
    if moves is None:
        moves = queries.move_records(ctx.session, board.id)
    moves = with_echoes(board.rules, board.options, moves)
    if subscribers is None:
        subscribers = queries.subscribers_of(ctx.session, board.id)
    if timing is None:
        timing = not board.active or shows_timing(board.row)
    return BoardFacts(
        moves=moves,
        subscribers=[u.userid for u in subscribers],
        timing=Timing(timing_lines(ctx, board), ctx.now()) if timing else None,
        results=board_results(ctx, board) if results else (),
    )


def readers(ctx: Context, board: Board, subscribers: Sequence[User] | None = None) -> list[User]:
    """Every non-resigned player, then every subscriber (resigned players subscribe)."""
    if subscribers is None:
        subscribers = queries.subscribers_of(ctx.session, board.id)
    seen: set[int | None] = set()
    result: list[User] = []
    for gp, user in board.players:
        if not gp.resigned and user.id not in seen:
            seen.add(user.id)
            result.append(user)
    for user in subscribers:
        if user.id not in seen:
            seen.add(user.id)
            result.append(user)
    return result


def board_reply(
    ctx: Context,
    board: Board,
    reader: User | None,
    *,
    to: list[str],
    subject: str,
    body: str,
    kind: ReplyKind,
    to_sender: bool = False,
    answer: bool = False,
    quote_original: bool = False,
    drawn: bool = True,
    upto: int | None = None,
) -> Reply:
    """A mail about `board` to `reader`: it threads with the board's other mails and,
    to a player, carries his reply token and the move count of the position now. Its
    HTML part draws the board as `reader` sees it (after `upto` moves when given),
    unless not `drawn` (the mail shows no board)."""
    return Reply(
        to=to,
        subject=subject,
        body=body,
        kind=kind,
        game_id=board.id,
        board=(board.rules.name, board.row.board),
        user_id=None if reader is None else reader.id,
        token=None if reader is None else tokens.token_for(ctx, board, reader),
        move_count=board.row.move_count,
        to_sender=to_sender,
        answer=answer,
        quote_original=quote_original,
        pictures=(picture_order(board, reader, upto),) if drawn else (),
    )


def mail_reader(
    ctx: Context,
    board: Board,
    reader: User,
    *,
    subject: str,
    body: str,
    kind: ReplyKind,
    drawn: bool = True,
) -> None:
    """Mail `reader` about `board` at his address, if he has one (none: no mail); to the
    sender of the message at hand it goes as an answer to it."""
    to = reply_addresses(ctx, reader)
    if to:
        ctx.reply(
            board_reply(
                ctx,
                board,
                reader,
                to=to,
                subject=subject,
                body=body,
                kind=kind,
                drawn=drawn,
                to_sender=ctx.sender in to,
            )
        )


def mail_board(
    ctx: Context,
    board: Board,
    *,
    events: Sequence[str] = (),
    new: bool = False,
    only: Sequence[User] | None = None,
    private: Mapping[int, Sequence[str]] | None = None,
    fresh: int = 1,
) -> None:
    """Send the board to its readers (or to `only`), each his own copy; `private` adds
    lines to the events of one reader's copy alone (by user id). A reader in digest mode
    who has such lines gets his copy now: they tell him what was played for him.
    `fresh`: the moves the command at hand played, each echoed in the status block."""
    title = title_for(board, "new" if new else "Summary")
    subject = subject_for(board, new=new)
    subscribers = queries.subscribers_of(ctx.session, board.id)
    facts = board_facts(ctx, board, subscribers=subscribers)
    people = readers(ctx, board, subscribers) if only is None else only
    addresses = reply_addresses_of(ctx, people)
    players = [u.saved_id for _, u in board.players]
    # The players' digests and the readers' formats, asked together.
    choices = queries.mail_choices(ctx.session, {*players, *(u.saved_id for u in people)})
    held = _held_for_digest(board, new, only, players, choices)
    words = {user_id for user_id, choice in choices.items() if choice.format == "words"}
    for user in people:
        to = addresses[user.saved_id]
        mine = (private or {}).get(user.saved_id, ())
        if not to or (user.id in held and ctx.sender not in to and not mine):
            continue
        body = summary(
            board,
            facts,
            title=title,
            reader=user,
            events=[*events, *mine],
            last_rows=None if new else ctx.config.move_rows,
            answer_line=True,
            in_words=user.saved_id in words,
            fresh=fresh,
        )
        reply = board_reply(
            ctx,
            board,
            user,
            to=to,
            subject=subject,
            body=body,
            kind=ReplyKind.NEW_BOARD if new else ReplyKind.BOARD,
            to_sender=ctx.sender in to,
        )
        if not reply.to_sender:
            on_move = board.active and board.row.to_move == board.index_of(user.saved_id)
            reply.reason = MailReason.YOUR_MOVE if on_move else MailReason.OPPONENT_MOVED
        ctx.reply(reply)
    if not board.active and only is None:
        mail_notifiers(ctx, board, events)


def _held_for_digest(
    board: Board,
    new: bool,
    only: Sequence[User] | None,
    players: Sequence[int],
    choices: Mapping[int, queries.MailChoice],
) -> set[int]:
    """Players in digest mode get an ongoing board's move mails in their daily digest
    (but the answer to their own move still comes)."""
    if new or only is not None or not board.active:
        return set()
    return {user_id for user_id in players if user_id in choices and choices[user_id].digest}


def mail_notifiers(ctx: Context, board: Board, events: Sequence[str]) -> None:
    """The end of a game, to board notifiers and to players notified of every board."""
    users = {u.id: u for u in queries.subscribers_of(ctx.session, board.id, "notify")}
    for setting in queries.settings_of_type(ctx.session, board.rules.name):
        if setting.notify_all and setting.user_id not in users:
            user = ctx.session.get(User, setting.user_id)
            if user is not None:
                users[user.id] = user
    title = title_for(board, "Notification")
    facts = board_facts(ctx, board)
    words = mail_html.words_readers(ctx.session, [u.saved_id for u in users.values()])
    for user in users.values():
        to = reply_addresses(ctx, user)
        if to:
            body = summary(
                board,
                facts,
                title=title,
                reader=user,
                events=events,
                in_words=user.saved_id in words,
            )
            ctx.reply(
                board_reply(
                    ctx,
                    board,
                    user,
                    to=to,
                    subject=phrase("subject_notification", label=board.label),
                    body=body,
                    kind=ReplyKind.NOTIFICATION,
                )
            )


def auto_subscribers(ctx: Context, game: str) -> list[GameTypeSetting]:
    return [s for s in queries.settings_of_type(ctx.session, game) if s.subscribe_all]
