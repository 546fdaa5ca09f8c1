"""One message, one transaction: screen robots and ourselves, find the commands,
authenticate, run each (a failing command rolls back alone in a SAVEPOINT and stops the
message's later state-changing commands), and say how their replies go out.

It runs inside the unit of work (pbm.work), which bounds and queues the replies and
commits; an unexpected exception propagates so the whole message rolls back and is kept
for retry.
"""

from __future__ import annotations

import hmac
import logging
import secrets
from collections.abc import Sequence
from datetime import timedelta
from typing import NamedTuple

from pbm.commands.base import Command, Invocation
from pbm.commands.finder import CommandLine, find_commands, first_line_and_rest
from pbm.commands.masking import mask_line, mask_text
from pbm.commands.registry import MULTIPLE, parse_line, starts_command, token_invocation
from pbm.errors import AuthError, BoardError, PbmError
from pbm.games import GameError
from pbm.mail import web_links
from pbm.mail.addressing import message_id_for, reply_address, tokens_in
from pbm.mail.authresults import dmarc_passed, sender_verdict
from pbm.mail.bounces import Report, parse_report, tag_for, verp_parts
from pbm.mail.compose import compose, with_attachment
from pbm.mail.inbound import InboundMail, is_from_self, parse_message, quotable_original
from pbm.mail.streams import (
    MailReason,
    StreamHeaders,
    board_list_id,
    feedback_id,
    stream_of,
    tournament_list_id,
)
from pbm.services import bounces, consent, streams, tokens
from pbm.services.accounts import record_auth_failures
from pbm.services.boards import Board, board_by_id, refusal
from pbm.services.challenges import ChallengeError
from pbm.services.context import Answering, Context, Reply, ReplyKind
from pbm.services.mail_html import html_order
from pbm.services.mailing import board_facts, board_reply
from pbm.services.outbox import outbox_values, queue_many, recipients_of
from pbm.services.reasons import reason_of
from pbm.services.render import summary
from pbm.store import queries
from pbm.store.models import MessageStatus, OutboxMail, User
from pbm.texts import echoed, phrase, render, wrap

log = logging.getLogger(__name__)


class StoredMessage(NamedTuple):
    """What the pipeline needs of a stored inbound message."""

    id: int
    message_id: str
    raw: bytes


def handle_message(ctx: Context, row: StoredMessage) -> MessageStatus:
    """Run a stored message's commands, their replies left in `ctx` for the unit of work
    (pbm.work) to queue; returns done or ignored."""
    config = ctx.config
    ctx.answering = Answering(inbound_id=row.id)
    if len(row.raw) > config.max_message_bytes:
        log.warning("%s ignored: %d bytes", row.message_id, len(row.raw))
        return MessageStatus.IGNORED
    mail = parse_message(row.raw)
    ctx.sender = mail.sender
    # Bounces, complaints and stop requests come to addresses of their own, before the
    # robot screen would drop them.
    special = _to_special_address(ctx, row, mail)
    if special is not None:
        return special
    if mail.robot:
        log.info("%s ignored: %s", row.message_id, mail.robot)
        return MessageStatus.IGNORED
    if not mail.sender or is_from_self(mail, config.own_addresses):
        log.info("%s ignored: from %r", row.message_id, mail.sender)
        return MessageStatus.IGNORED
    # A From that a trusted MTA found forged is a stranger's: its wrong passwords count
    # against the stranger budget, not against the address it pretends to be.
    ctx.sender_unverified = sender_verdict(mail.authentication_results, config.authserv_ids).failed
    domain = mail.sender.rpartition("@")[2]
    ctx.sender_dmarc_pass = dmarc_passed(mail.authentication_results, config.authserv_ids, domain)
    ctx.answering = Answering(bounded=True, mail=mail, inbound_id=row.id)
    run_mail(ctx, mail)
    bounces.reconfirm_on_mail(ctx)
    return MessageStatus.DONE


def _to_special_address(
    ctx: Context, row: StoredMessage, mail: InboundMail
) -> MessageStatus | None:
    """Handle a mail to the VERP, feedback or stop address (None for any other mail):
    a bounce or complaint is counted against the mailbox of the mail it returns, a stop
    request switches its stream off. Returns done, or ignored for what is neither."""
    config = ctx.config
    host = config.server_host
    verp = tag_for(mail.recipients, config.bounce_local_part, host)
    if verp is not None and verp_parts(verp) is None:
        verp = None  # the local part may be the server's own: `pbm+TOKEN` is a reply
    feedback = bool(config.feedback_address) and config.feedback_address.lower() in (
        a.lower() for a in mail.recipients
    )
    stop = tag_for(mail.recipients, config.stop_local_part, host)
    report = parse_report(row.raw) if verp is not None or feedback else None
    if report is not None:
        return _report(ctx, row, report, verp)
    if verp is not None:
        log.info("%s ignored: no bounce or complaint in it", row.message_id)
        return MessageStatus.IGNORED
    if stop is not None:
        done = streams.handle_stop_mail(ctx, stop)
        return MessageStatus.DONE if done else MessageStatus.IGNORED
    return None  # a person's mail to the feedback address is an ordinary mail


def _report(ctx: Context, row: StoredMessage, report: Report, verp: str | None) -> MessageStatus:
    """A bounce or complaint: attributed by its VERP address, else by the Message-ID of
    the original it returns; counted against that mail's recipient."""
    mail = None
    parts = verp_parts(verp) if verp is not None else None
    if parts is not None:
        found = ctx.session.get(OutboxMail, parts[0])
        if found is not None and found.verp and hmac.compare_digest(found.verp, parts[1]):
            mail = found
    if mail is None and report.original_message_id:
        mail = bounces.outbox_mail_by_message_id(ctx.session, report.original_message_id)
    if mail is None:
        log.warning(
            "%s: %s not attributed (VERP %r, original %r)",
            row.message_id,
            report.kind.value,
            verp,
            report.original_message_id,
        )
        return MessageStatus.IGNORED
    bounces.record(ctx, report, mail, recipients_of(mail))
    return MessageStatus.DONE


def plan(ctx: Context, mail: InboundMail) -> list[CommandLine | tuple[Command, Invocation]]:
    """The commands of a message, in order: a token reply's first line, else the finder's.

    A token counts when it came in our plus-address, or in a Message-ID pbm issued and
    recorded, and the mail is from its player's address (pbm.services.tokens.resolve).
    Raises AuthError when a trusted Authentication-Results producer says the sender's
    domain failed its check: then a token alone vouches for nobody. A reply that carries
    only someone else's token and no full command raises a PbmError saying whose board
    mail it answered.
    """
    subject_words = mail.command_subject.split()
    multiple = bool(subject_words) and subject_words[0].lower() in MULTIPLE
    found = [
        f
        for f in tokens_in(mail, ctx.config.server_address)
        if f.message_id is None or queries.issued_message_id(ctx.session, f.message_id)
    ]
    names = [f.token for f in found]
    if found and not multiple:
        first, rest = first_line_and_rest(mail.fresh_text)
        request = consent.pending(ctx, names)
        if request is not None and request.confirm_token is not None:
            # A reply to a confirmation request: it confirms, or says "not me".
            ctx.sender_token = True
            verb = "notme" if consent.is_refusal(first) else "confirm"
            return [CommandLine(f"{verb} {request.confirm_token}", "")]
        seat = tokens.resolve(ctx, names)
        if seat is not None:
            ctx.sender_token = not ctx.sender_unverified
            if first and starts_command(first):
                return [CommandLine(first, rest)]
            verdict = sender_verdict(mail.authentication_results, ctx.config.authserv_ids)
            if verdict.failed:
                log.warning(
                    "token of %s refused: %s says %s",
                    ctx.sender,
                    verdict.authserv_id,
                    verdict.reason,
                )
                raise AuthError(
                    phrase("token_untrusted", authserv=verdict.authserv_id, reason=verdict.reason)
                )
            # An empty reply still answers its board: "no move given", with the board.
            board = board_by_id(ctx, seat.game_id)
            # The move count of the answered mail, where the token was found first.
            sent = next(f.move for f in found if f.token == seat.token)
            return [token_invocation(first, rest, board.rules, seat.game_id, seat.user, sent)]
    commands: list[CommandLine | tuple[Command, Invocation]] = list(
        find_commands(mail.command_subject, mail.fresh_text)
    )
    if not commands and found and not multiple:
        other = tokens.foreign(ctx, names)
        if other is not None:
            raise PbmError(_foreign_token(ctx, other))
    return commands


def _foreign_token(ctx: Context, seat: tokens.Seat) -> str:
    """Why a reply to someone else's reply address did nothing: whose address and board
    it was, and what the sender can do instead. It names the sender's own userid and
    address, never another's address (docs/security.md)."""
    board = board_by_id(ctx, seat.game_id)
    owner = seat.user.userid
    text = phrase("token_foreign", owner=owner, label=board.label, sender=ctx.sender)
    users = queries.users_by_address(ctx.session, ctx.sender)
    players = [u for u in users if board.index_of(u.id) is not None]
    if players:
        hint = phrase("token_foreign_player", userid=players[0].userid)
    elif users:
        example = f"{board.rules.name} move {board.row.board} {users[0].userid} PASSWORD MOVE"
        hint = phrase("token_foreign_user", userid=users[0].userid, example=example)
    else:
        example = f"{board.rules.name} move {board.row.board} {owner} PASSWORD MOVE"
        hint = phrase("token_foreign_stranger", owner=owner, example=example)
    return f"{wrap(text, reflow=True)}\n{wrap(hint, reflow=True)}"


def run_mail(ctx: Context, mail: InboundMail) -> None:
    """Run every command of `mail`, collecting replies in `ctx.replies`. Each command runs
    in its own SAVEPOINT: one that fails is rolled back alone, with its replies.

    At most `max_commands` run, each word of a per-word command (help topics, boards to
    show) counting as one; a command that changes nothing and repeats an earlier line
    is answered once. The rest are listed as not run.
    """
    try:
        work = plan(ctx, mail)
    except PbmError as exc:
        # Only a token reply is refused here: what it asked is its first line.
        asked = first_line_and_rest(mail.fresh_text)[0]
        _error_reply(ctx, mail, exc, None, asked or mail.command_subject or mail.subject)
        return
    if not work:
        _no_command(ctx)
        return
    failed = False
    skipped: list[str] = []  # after a failed command
    over: list[str] = []  # past the command budget
    budget = ctx.config.max_commands
    answered: set[str] = set()
    for item in work:
        if budget <= 0:
            over.append(item_text(item))
            continue
        command: Command | None = None
        inv: Invocation | None = None
        try:
            if isinstance(item, CommandLine):
                command, inv = parse_line(item.text, item.comment)
            else:
                command, inv = item
        except (PbmError, GameError) as exc:
            budget -= 1
            _error_reply(ctx, mail, exc, None, item_text(item))
            failed = True
            continue
        if not command.changes_state:
            key = " ".join(inv.line.lower().split())
            if key in answered:
                continue
            answered.add(key)
        if failed and command.changes_state:
            skipped.append(inv.line)
            continue
        budget -= _take_words(command, inv, budget, over)
        mark = len(ctx.replies)
        savepoint = ctx.session.begin_nested()
        try:
            command.run(ctx, inv)
            savepoint.commit()
        except (PbmError, GameError) as exc:
            savepoint.rollback()
            del ctx.replies[mark:]
            _error_reply(ctx, mail, exc, inv, inv.line)
            failed = True
    if skipped or over:
        parts = []
        if skipped:
            parts.append(phrase("skipped", lines=_listed(skipped)))
        if over:
            parts.append(
                phrase("skipped_limit", limit=ctx.config.max_commands, lines=_listed(over))
            )
        ctx.reply(
            Reply(
                to=[ctx.sender],
                subject=phrase("subject_skipped"),
                body="\n\n".join(parts) + "\n",
                kind=ReplyKind.ERROR,
                quote_original=True,
                to_sender=True,
                answer=True,
            )
        )
    record_auth_failures(ctx)


# Lines of a "not run" list shown in full; the rest are counted.
_SKIPPED_SHOWN = 20


def _listed(lines: list[str]) -> str:
    # Echoed back with their passwords masked, like every command pbm repeats.
    shown = "\n".join(f"  {echoed(mask_line(line))}" for line in lines[:_SKIPPED_SHOWN])
    if len(lines) > _SKIPPED_SHOWN:
        shown += "\n" + phrase("skipped_more", count=len(lines) - _SKIPPED_SHOWN)
    return shown


def _take_words(command: Command, inv: Invocation, budget: int, over: list[str]) -> int:
    """What a command costs of the message's command budget: 1, or for a per-word
    command its distinct words, cut to what the budget has left (the rest are listed
    as not run)."""
    if not command.per_word:
        return 1
    seen: set[str] = set()
    words: list[str] = []
    for word in inv.words:
        if word.lower() not in seen:
            seen.add(word.lower())
            words.append(word)
    if len(words) > budget:
        head = f"{inv.rules.name} {inv.verb}" if inv.rules else inv.verb
        over.append(" ".join([head, *words[budget:]]))
        words = words[:budget]
    inv.words = words
    return max(1, len(words))


def item_text(item: CommandLine | tuple[Command, Invocation]) -> str:
    return item.text if isinstance(item, CommandLine) else item[1].line


def _error_reply(
    ctx: Context,
    mail: InboundMail,
    exc: Exception,
    inv: Invocation | None,
    line: str,
) -> None:
    # The password stays out of the log and the reply; a long line comes back cut.
    line = echoed(mask_line(line))
    log.info("command %r from %s refused: %s", line, ctx.sender, exc)
    rules = inv.rules if inv else None
    board = None
    reader = None
    body = wrap(refusal(exc) if isinstance(exc, GameError) else str(exc))
    if isinstance(exc, BoardError):
        board = board_by_id(ctx, exc.board_id)
        reader = inv.token_user if inv and inv.token_user else _player_reader(ctx, board)
        subject = phrase("subject_board_error", label=board.label)
        shown = summary(
            board,
            board_facts(ctx, board, timing=False),
            title=phrase("title_kind", kind="Summary", label=board.label),
            reader=reader,
        )
        body = f"{body}\n\n{shown}"
    elif isinstance(exc, ChallengeError):
        subject = phrase("subject_invalid_challenge")
    elif rules is not None:
        subject = phrase("subject_game_error", game=rules.title)
    else:
        subject = phrase("subject_error")
    text = _fold_last_line(render("error", message=body.rstrip(), command=line))
    if board is None:
        reply = Reply(
            [ctx.sender],
            subject,
            text,
            ReplyKind.ERROR,
            quote_original=True,
            to_sender=True,
            answer=True,
        )
    else:
        reply = board_reply(
            ctx,
            board,
            reader,
            to=[ctx.sender],
            subject=subject,
            body=text,
            kind=ReplyKind.ERROR,
            to_sender=True,
            answer=True,
            quote_original=True,
        )
    ctx.reply(reply)


def _fold_last_line(text: str) -> str:
    """`text` with its last line, the echoed command, folded at 72 columns (the lines
    above it are folded already, or are a board and a comment, kept as they are)."""
    head, _, last = text.rstrip("\n").rpartition("\n")
    return f"{head}\n{wrap(last)}\n" if head else wrap(last) + "\n"


def _player_reader(ctx: Context, board: Board) -> User | None:
    for _gp, user in board.players:
        if ctx.sender in queries.addresses_of(ctx.session, user.saved_id):
            return user
    return None


def _no_command(ctx: Context) -> None:
    """At most `stranger_help_per_day` short help replies per address per day."""
    since = ctx.now() - timedelta(days=1)
    box = consent.mailbox(ctx, ctx.sender)  # one per mailbox, however it is spelled
    sent = queries.count_events(ctx.session, "stranger-help", box, since)
    if sent >= ctx.config.stranger_help_per_day:
        log.info("no command from %s; help already sent today", ctx.sender)
        return
    queries.add_event(ctx.session, "stranger-help", box, ctx.now())
    ctx.reply(
        Reply(
            to=[ctx.sender],
            subject=phrase("subject_no_command"),
            body=render("no_command", server=ctx.config.server_address),
            kind=ReplyKind.HELP,
            to_sender=True,
            answer=True,
        )
    )


def thread_id(ctx: Context, game_id: int) -> str:
    """A Message-ID every mail of one board refers to, so the board reads as one thread."""
    return f"<pbm-board-{game_id}@{ctx.config.server_host}>"


def _stream_headers(
    ctx: Context, reply: Reply, reason: MailReason, stop_code: str | None
) -> StreamHeaders:
    host = ctx.config.server_host
    web = ctx.config.web_url
    game = reply.board
    archive = None
    if game is not None:
        list_id: str | None = board_list_id(game[0], game[1], host)
        archive = web_links.board_url(web, *game) if web else None
    else:
        list_id = tournament_list_id(reply.tournament, host) if reply.tournament else None
        if web and reply.tournament:
            archive = web_links.tournament_url(web, reply.tournament)
    return StreamHeaders(
        reason=reason,
        feedback_id=feedback_id(reason, game[0] if game else None, host),
        list_id=list_id,
        unsubscribe=streams.stop_address(ctx, stop_code) if stop_code else None,
        unsubscribe_url=web_links.unsubscribe_url(web, stop_code) if web and stop_code else None,
        archive_url=archive,
    )


def _outbox_row(
    ctx: Context,
    reply: Reply,
    address: str,
    headers: StreamHeaders,
    mail: InboundMail | None,
    quote: str | None,
    *,
    inbound_id: int | None,
) -> dict[str, object]:
    """The outbox row of `reply` to one `address`: composed, with its reason and the
    secret of its VERP envelope sender (the address itself is made when it is sent)."""
    config = ctx.config
    token, move = reply.token, reply.move_count
    message_id = message_id_for(token, config.server_host, move)
    references: list[str] = []
    if reply.game_id is not None:
        references.append(thread_id(ctx, reply.game_id))
    in_reply_to = None
    if reply.to_sender and mail is not None and mail.message_id:
        in_reply_to = mail.message_id
        references.append(mail.message_id)
    body = reply.body
    if reply.quote_original and quote is not None:
        body = body.rstrip("\n") + "\n\n" + phrase("original_follows")
    # Notifications the reader did not trigger come from the second address, if set.
    reason = headers.reason
    own = config.server_address if reason.asked_for else config.notify_address
    reply_to = reply.reply_to
    if reply_to is None and token:
        reply_to = reply_address(config.server_address, token, move)
    elif reply_to is None and own and own != config.server_address:
        reply_to = config.server_address  # commands still go to the main address
    raw = compose(
        sender=f"{config.server_name} <{own or config.server_address}>",
        to=[address],
        subject=reply.subject,
        body=body,
        message_id=message_id,
        in_reply_to=in_reply_to,
        references=references,
        reply_to=reply_to,
        date=ctx.now(),
        quote=quote if reply.quote_original else None,
        stream=headers,
    )
    html: str | None = html_order(reply.user_id, reply.pictures)
    if reply.attachment is not None:
        file = reply.attachment
        raw, html = with_attachment(raw, file.filename, file.data, file.mime_type), None
    bounce_address = f"{config.bounce_local_part}@{config.server_host}"
    row = outbox_values(ctx.now(), bounce_address, [address], reply.subject, body, raw, html)
    row["message_id"] = message_id
    row["inbound_id"] = inbound_id
    row["reason"] = reason
    row["verp"] = secrets.token_hex(8)
    return row


def queue_replies(
    ctx: Context, mail: InboundMail | None, replies: Sequence[Reply], inbound_id: int | None
) -> list[str]:
    """Compose every reply (threading headers, reply token) and queue it in the outbox;
    returns the queued Message-IDs."""
    queued: list[dict[str, object]] = []
    # The mailboxes that bounced or complained among the recipients, asked at once.
    states = bounces.blocked(ctx, [a for r in replies for a in r.to if a])
    disabled = {a for a, state in states.items() if state.disabled_at is not None}
    # The confirmed mailboxes and the readers' streams, each asked once for all mails.
    confirmed = consent.confirmed_mailboxes(ctx, [a for r in replies for a in r.to if a])
    reasons = [reason_of(reply, ctx.sender) for reply in replies]
    wanted = {
        (reply.user_id, stream)
        for reply, reason in zip(replies, reasons, strict=True)
        if reply.user_id is not None and (stream := stream_of(reason)) is not None
    }
    stream_states = streams.stream_states(ctx, wanted)
    # The masked original, made only when a reply quotes it (most answers to moves don't).
    quoting = mail is not None and any(r.quote_original for r in replies)
    quote = mask_text(quotable_original(mail)) if mail is not None and quoting else None
    for reply, reason in zip(replies, reasons, strict=True):
        stream = stream_of(reason)
        stop_code = None
        if stream is not None and reply.user_id is not None:
            state = stream_states[reply.user_id, stream]
            if state.stopped_at is not None:
                log.info("stream %s stopped: not mailing %r", stream.value, reply.subject)
                continue
            stop_code = state.code
        # The one gate of every mail pbm sends: no address its owner has not confirmed,
        # or whose mailbox bounces disabled, but for its confirmation request and
        # answers to its own mail.
        allowed = consent.deliverable(ctx, reply, confirmed, disabled)
        headers = _stream_headers(ctx, reply, reason, stop_code)
        # One recipient per mail: nobody sees another's address, and a bounce names one.
        for address in dict.fromkeys(allowed):
            why = bounces.why_not(states.get(address), reason)
            if why is not None:
                log.info("%s: not mailing %s %r", why, address, reply.subject)
                continue
            queued.append(
                _outbox_row(ctx, reply, address, headers, mail, quote, inbound_id=inbound_id)
            )
    queue_many(ctx.session, queued)
    ctx.session.flush()
    return [str(row["message_id"]) for row in queued]


__all__ = [
    "StoredMessage",
    "handle_message",
    "plan",
    "queue_replies",
    "run_mail",
]
