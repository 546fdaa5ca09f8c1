"""Bounded output: what one inbound message may make pbm send.

A mail server that answers forged mail must never become an amplifier. So, whatever a
message holds:

- every answer to its sender (help, lists, `show`, refusals, the list of commands not
  run) goes out as one mail, in order, each repeated answer once, at most
  `ANSWER_MAX_BYTES` long;
- every other mail it causes (board mails, chat, notices) goes out at most once per
  board and recipient: several for one board and one reader become one mail;
- mails to a mailbox beyond its hourly budget are not sent (`player_replies_per_hour`
  for a confirmed player's, `replies_per_address_hour` for anyone else's), except board,
  round and result mails of his own games; the first one over is replaced by one
  notice saying when answers resume (see `pbm.services.reply_budget`).

The pipeline applies this to the replies a message produced, before queueing them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from pbm.services import consent, reply_budget
from pbm.services.context import Context, Reply
from pbm.texts import phrase

log = logging.getLogger(__name__)

# The one answer to a message, quote included, in bytes of UTF-8.
ANSWER_MAX_BYTES = 256 * 1024
# Room kept for the quoted original (at most 4 KB, see pbm.mail.inbound) and headers.
_QUOTE_ROOM = 8 * 1024
# Mails that show a board's state: for one board and reader the last of them wins.
_BOARD_KINDS = frozenset({"board", "new-board", "removed", "notification"})
# Mails to an account about a board it plays or asked to follow, which no reply budget
# holds back (they go to confirmed addresses only, pbm.services.consent).
_BUDGET_FREE_KINDS = frozenset({"board", "new-board", "removed", "notification", "chat"})
# Tournament rounds and results: about his own tournament, never counted either.
_TOURNAMENT_KINDS = frozenset({"tournament"})


def bounded(ctx: Context, replies: Sequence[Reply]) -> list[Reply]:
    """The mails to queue for `replies`: answers merged, one mail per board and
    recipient, and each recipient within his reply budget."""
    # An answer goes to the sender alone; anything else is mailed as a notice.
    answers = _dedupe([r for r in replies if r.answer and r.to == [ctx.sender]])
    notices = [r for r in replies if not (r.answer and r.to == [ctx.sender])]
    merged = _merge_notices(notices)
    if answers:
        merged.insert(0, _merge_answers(answers))
    return [kept for reply in merged for kept in _within_budget(ctx, reply)]


def _dedupe(answers: list[Reply]) -> list[Reply]:
    """Each answer once: `help quarto quarto` or `show 101 101` is answered once."""
    seen: set[tuple[str, str]] = set()
    kept: list[Reply] = []
    for reply in answers:
        key = (reply.subject, reply.body)
        if key not in seen:
            seen.add(key)
            kept.append(reply)
    return kept


def _merge_answers(answers: list[Reply]) -> Reply:
    """One mail holding every answer, in order (a lone answer stays as it is)."""
    first = answers[0]
    quote = any(r.quote_original for r in answers)
    if len(answers) == 1:
        body = first.body
    else:
        sections = [
            phrase("answer_section", number=i, subject=r.subject) + "\n\n" + r.body.rstrip("\n")
            for i, r in enumerate(answers, 1)
        ]
        body = phrase("answers_intro", count=len(answers)) + "\n\n" + "\n\n".join(sections) + "\n"
    # A token is only right when every answer is about the same board for the same player.
    same_board = len({(r.game_id, r.user_id) for r in answers}) == 1
    last = answers[-1]
    subject = (
        first.subject
        if len(answers) == 1
        else phrase("subject_answers", subject=first.subject, more=len(answers) - 1)
    )
    return Reply(
        to=list(first.to),
        subject=subject,
        body=_capped(body, ANSWER_MAX_BYTES - _QUOTE_ROOM),
        kind=first.kind if len(answers) == 1 else "answers",
        game_id=last.game_id if same_board else None,
        user_id=last.user_id if same_board else None,
        token=last.token if same_board else None,
        move_count=last.move_count if same_board else None,
        # Each answer's boards, in the order of the sections (`show 101 102`).
        pictures=tuple(p for r in answers for p in r.pictures),
        quote_original=quote,
        to_sender=True,
        answer=True,
    )


def _capped(body: str, limit: int) -> str:
    """`body` cut at a line boundary to at most `limit` bytes of UTF-8, saying so."""
    data = body.encode("utf-8")
    if len(data) <= limit:
        return body
    note = "\n" + phrase("answer_truncated", limit=limit // 1024) + "\n"
    room = limit - len(note.encode("utf-8"))
    cut = data[:room].decode("utf-8", "ignore")
    if "\n" in cut:
        cut = cut[: cut.rindex("\n")]
    return cut + "\n" + note


def _merge_notices(notices: list[Reply]) -> list[Reply]:
    """At most one mail per board and recipients, in the order first caused (board mails
    go to one reader each; a welcome may go to all of an account's addresses at once)."""
    groups: dict[tuple[int | None, tuple[str, ...]], list[Reply]] = {}
    for reply in notices:
        to = tuple(sorted({a.lower() for a in reply.to if a}))
        if to:
            groups.setdefault((reply.game_id, to), []).append(reply)
    return [_one_notice(list(to), group) for (_game_id, to), group in groups.items()]


def _one_notice(to: list[str], group: list[Reply]) -> Reply:
    """The mail for one board and reader: the last board mail (the newest state), with
    the other notices (chat, messages) before it."""
    boards = [r for r in group if r.kind in _BOARD_KINDS]
    base = boards[-1] if boards else group[-1]
    others = [r for r in group if r is not base and r.kind not in _BOARD_KINDS]
    body = base.body
    if others:
        body = "\n\n".join(r.body.rstrip("\n") for r in (*others, base)) + "\n"
    # The reader's account and token from the board mail, else from any notice that has
    # them (a chat to a player carries his token like his board mails).
    seat = (
        base
        if base.user_id is not None
        else next((r for r in group if r.user_id is not None), base)
    )
    return Reply(
        to=to,
        subject=base.subject,
        body=_capped(body, ANSWER_MAX_BYTES),
        kind=base.kind,
        game_id=base.game_id,
        user_id=seat.user_id,
        token=seat.token,
        move_count=base.move_count if base.move_count is not None else seat.move_count,
        # The picture of the board mail kept: the newest state, as its text.
        pictures=base.pictures,
        quote_original=False,
        to_sender=any(r.to_sender for r in group),
        answer=False,
    )


def _within_budget(ctx: Context, reply: Reply) -> list[Reply]:
    """`reply` cut to the recipients within their budget (counted), and the one notice
    to each whose budget it is the first to pass."""
    if reply.kind == consent.REQUEST_KIND or reply.kind in _TOURNAMENT_KINDS:
        return [reply]  # requests have their own daily budget
    if not reply.answer and reply.kind in _BUDGET_FREE_KINDS and reply.user_id is not None:
        return [reply]
    players = consent.confirmed_mailboxes(ctx, reply.to)
    kept: list[str] = []
    notices: list[Reply] = []
    for address in reply.to:
        verdict = reply_budget.take(ctx, address, player=consent.mailbox(ctx, address) in players)
        if verdict.send:
            kept.append(address)
        elif verdict.notice_until is not None:
            log.warning("reply budget spent: notice to %s instead of %r", address, reply.subject)
            notices.append(_notice(address, verdict.notice_until))
        else:
            log.warning("reply budget spent: not mailing %s %r", address, reply.subject)
    reply.to = kept
    return ([reply] if kept else []) + notices


def _notice(address: str, until: datetime) -> Reply:
    """The one mail that stands for every answer held back until `until`."""
    return Reply(
        to=[address],
        subject=phrase("subject_budget_notice"),
        body=phrase("budget_notice", until=until.strftime("%Y-%m-%d %H:%M UTC")) + "\n",
        kind="budget-notice",
        to_sender=True,
    )


__all__ = ["ANSWER_MAX_BYTES", "bounded"]
