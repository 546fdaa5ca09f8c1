"""What pbm answers when a message's commands could not run: a refused command (with
the board it is about), the commands skipped after a refusal or past the command
budget, and the short help for a mail with no command in it."""

from __future__ import annotations

import logging

from pbm.commands.base import Invocation
from pbm.commands.masking import mask_line
from pbm.errors import AuthError, BoardError, UsageError
from pbm.games import GameError
from pbm.services.context import Context, Reply, ReplyKind
from pbm.services.mailing import mail_html, reply_budget
from pbm.services.mailing.board_mail import board_facts, board_reply
from pbm.services.play.board_text import summary
from pbm.services.play.boards import board_by_id, player_writing_from, refusal
from pbm.services.play.challenges import ChallengeError
from pbm.texts import echoed, phrase, render, wrap

log = logging.getLogger(__name__)


def error_reply(ctx: Context, exc: Exception, inv: Invocation | None, line: str) -> None:
    """Answer a refused command: what was wrong, the command echoed (password masked),
    and for a refusal about a board, that board's summary as its player sees it."""
    # The password stays out of the log and the reply; a long line comes back cut.
    line = echoed(mask_line(line))
    log.info("command %r from %s refused: %s", line, ctx.sender, exc)
    rules = inv.rules if inv else None
    board = None
    reader = None
    body = wrap(refusal(exc) if isinstance(exc, GameError) else str(exc))
    if ctx.sender_token and isinstance(exc, UsageError | AuthError):
        body += "\n\n" + phrase("token_board_only")
    if isinstance(exc, BoardError):
        board = board_by_id(ctx, exc.board_id)
        token_user = inv.token_user if inv else None
        reader = token_user or player_writing_from(ctx, board, ctx.sender)
        subject = phrase("subject_board_error", label=board.label)
        shown = summary(
            board,
            board_facts(ctx, board, timing=False),
            title=phrase("title_kind", kind="Summary", label=board.label),
            reader=reader,
            in_words=mail_html.in_words(ctx.session, reader),
        )
        body = f"{body}\n\n{shown}"
    elif isinstance(exc, ChallengeError):
        subject = phrase("subject_invalid_challenge")
    elif rules is not None:
        subject = phrase("subject_game_error", game=rules.title)
    else:
        subject = phrase("subject_error")
    # An empty answer to a board mail wrote no command to echo.
    said = render("error", message=body.rstrip(), command=line) if line.strip() else body
    text = _fold_last_line(said.rstrip())
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


def skipped_reply(ctx: Context, skipped: list[str], over: list[str]) -> None:
    """Answer the commands not run: those after a refused one (`skipped`) and those past
    the message's command budget (`over`)."""
    parts = []
    if skipped:
        parts.append(phrase("skipped", lines=_listed(skipped)))
    if over:
        parts.append(phrase("skipped_limit", limit=ctx.config.max_commands, lines=_listed(over)))
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


# Lines of a "not run" list shown in full; the rest are counted.
_SKIPPED_SHOWN = 20


def _listed(lines: list[str]) -> str:
    # Echoed back with their passwords masked, like every command pbm repeats.
    shown = "\n".join(f"  {echoed(mask_line(line))}" for line in lines[:_SKIPPED_SHOWN])
    if len(lines) > _SKIPPED_SHOWN:
        shown += "\n" + phrase("skipped_more", count=len(lines) - _SKIPPED_SHOWN)
    return shown


def no_command(ctx: Context, empty_multiple: bool = False) -> None:
    """The short help for a mail with no command, within its daily budget
    (pbm.services.mailing.reply_budget.take_stranger_help). `empty_multiple`: the mail
    says `multiple` but no command line follows, which the note says instead."""
    if not reply_budget.take_stranger_help(ctx):
        log.info("no command from %s; help already sent today", ctx.sender)
        return
    name = "no_command_lines" if empty_multiple else "no_command"
    ctx.reply(
        Reply(
            to=[ctx.sender],
            subject=phrase(f"subject_{name}"),
            body=render(name, server=ctx.config.server_address),
            kind=ReplyKind.HELP,
            to_sender=True,
            answer=True,
        )
    )


__all__ = ["error_reply", "no_command", "skipped_reply"]
