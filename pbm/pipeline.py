"""One message, its commands: screen robots and ourselves, find the commands (a token
reply's by pbm.trust), run each (a failing command rolls back alone in a SAVEPOINT and
stops the message's later state-changing commands), and say how their replies go out.
Mail to the special addresses goes to pbm.special_mail; refusals are written by
pbm.commands.refusals; the replies are composed and queued by pbm.outgoing.

It runs inside the unit of work (pbm.work), which bounds and queues the replies and
commits; an unexpected exception propagates so the whole message rolls back and is kept
for retry.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

from pbm.commands.base import Command, Invocation
from pbm.commands.finder import CommandLine, find_commands, first_line_and_rest, marked_multiple
from pbm.commands.refusals import error_reply, no_command, skipped_reply
from pbm.commands.registry import MULTIPLE, parse_line
from pbm.errors import PbmError
from pbm.games import GameError
from pbm.mail.inbound import InboundMail, is_from_self, parse_message
from pbm.services.accounts import consent
from pbm.services.accounts.users import record_auth_failures
from pbm.services.context import Answering, Context
from pbm.services.mailing import bounces, tokens
from pbm.special_mail import to_special_address
from pbm.store.models import MessageStatus
from pbm.trust import SenderTrust, issued_tokens, sender_trust, token_work

log = logging.getLogger(__name__)


class StoredMessage(NamedTuple):
    """What the pipeline needs of a stored inbound message."""

    id: int
    message_id: str
    raw: bytes


class Handled(NamedTuple):
    """How a message was handled: its status and, for an ignored one, why (kept on its
    row: `pbm user export` and `mydata` show it to the sender)."""

    status: MessageStatus
    reason: str | None = None


def handle_message(ctx: Context, row: StoredMessage) -> Handled:
    """Run a stored message's commands, their replies left in `ctx` for the unit of work
    (pbm.work) to queue; returns done or ignored."""
    config = ctx.config
    ctx.answering = Answering(inbound_id=row.id)
    if len(row.raw) > config.max_message_bytes:
        return _ignored(row, f"{len(row.raw)} bytes, more than max_message_bytes")
    mail = parse_message(row.raw)
    ctx.sender = mail.sender
    # Bounces, complaints and stop requests come to addresses of their own, before the
    # robot screen would drop them.
    special = to_special_address(ctx, row.message_id, row.raw, mail)
    if special is not None:
        return Handled(special)
    if mail.robot:
        return _ignored(row, mail.robot)
    if not mail.sender or is_from_self(mail, config.own_addresses):
        return _ignored(row, f"from {mail.sender!r}")
    ctx.answering = Answering(bounded=True, mail=mail, inbound_id=row.id)
    run_mail(ctx, mail)
    bounces.reconfirm_on_mail(ctx)
    consent.ask_unasked_sender(ctx)
    return Handled(MessageStatus.DONE)


def _ignored(row: StoredMessage, reason: str) -> Handled:
    log.info("%s ignored: %s", row.message_id, reason)
    return Handled(MessageStatus.IGNORED, reason)


def plan(
    ctx: Context, mail: InboundMail, trust: SenderTrust
) -> list[CommandLine | tuple[Command, Invocation]]:
    """The commands of a message, in order: a token reply's first line (pbm.trust),
    else the finder's. A reply that carries only someone else's token and no full
    command raises a PbmError saying whose board mail it answered."""
    subject_words = mail.command_subject.split()
    multiple = bool(subject_words) and subject_words[0].lower() in MULTIPLE
    found = [] if multiple else issued_tokens(ctx, mail)
    if found:
        by_token = token_work(ctx, mail, trust, found)
        if by_token is not None:
            return by_token
    commands: list[CommandLine | tuple[Command, Invocation]] = list(
        find_commands(mail.command_subject, mail.fresh_text)
    )
    if not commands and found:
        other = tokens.foreign(ctx, [f.token for f in found])
        if other is not None:
            raise PbmError(tokens.foreign_refusal(ctx, other))
    return commands


def run_mail(ctx: Context, mail: InboundMail) -> None:
    """Run every command of `mail`, collecting replies in `ctx.replies`. Each command runs
    in its own SAVEPOINT: one that fails is rolled back alone, with its replies.

    At most `max_commands` run, each word of a per-word command (help topics, boards to
    show) counting as one; a command that changes nothing and repeats an earlier line
    is answered once. The rest are listed as not run.
    """
    trust = sender_trust(mail, ctx.config)
    # A From that a trusted MTA found forged is a stranger's: its wrong passwords count
    # against the stranger budget, not against the address it pretends to be.
    ctx.sender_unverified = trust.verdict.failed
    ctx.sender_dmarc_pass = trust.dmarc_pass
    try:
        work = plan(ctx, mail, trust)
    except PbmError as exc:
        # Only a token reply is refused here: what it asked is its first line.
        asked = first_line_and_rest(mail.fresh_text)[0]
        error_reply(ctx, exc, None, asked or mail.command_subject or mail.subject)
        return
    if not work:
        no_command(ctx, empty_multiple=marked_multiple(mail.command_subject, mail.fresh_text))
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
            error_reply(ctx, exc, None, item_text(item))
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
            error_reply(ctx, exc, inv, inv.line)
            failed = True
    if skipped or over:
        skipped_reply(ctx, skipped, over)
    record_auth_failures(ctx)


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


__all__ = [
    "StoredMessage",
    "handle_message",
    "plan",
    "run_mail",
]
