"""Bounded output: what one inbound message may make pbm send.

A mail server that answers forged mail must never become an amplifier. So, whatever a
message holds:

- every answer to its sender (help, lists, `show`, refusals, the list of commands not
  run) goes out as one mail, in order, each repeated answer once, at most
  `ANSWER_MAX_BYTES` long with its HTML part and pictures: the boards whose text was
  cut are not drawn, and pictures past the bound are left out with a line saying so
  (the sender holds the bound whatever the estimate: pbm.services.mailing.mail_html);
- every other mail it causes (board mails, chat, notices) goes out at most once per
  board and recipient: several for one board and one reader become one mail;
- mails to a mailbox beyond its hourly budget are not sent (`player_replies_per_hour`
  for a confirmed player's, `replies_per_address_hour` for anyone else's), except board,
  round and result mails of his own games; the first one over is replaced by one
  notice saying when answers resume (see `pbm.services.mailing.reply_budget`).

The pipeline applies this to the replies a message produced, before queueing them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from pbm.services.accounts import consent
from pbm.services.context import Context, Reply, ReplyKind
from pbm.services.mailing import reply_budget
from pbm.texts import phrase

log = logging.getLogger(__name__)

# The one answer to a message, quote included, in bytes of UTF-8.
ANSWER_MAX_BYTES = 256 * 1024
# Room kept for the quoted original (at most 4 KB, see pbm.mail.inbound) and headers.
_QUOTE_ROOM = 8 * 1024
# What one drawn board adds to a mail at most: its PNG in base64 (the largest picture
# benchmarks/pictures.py finds is about 24 KB, 32 KB in base64), its words and markup.
PICTURE_ROOM = 36 * 1024
# Headers, the HTML page around the text and the line saying pictures were left out.
_HTML_ROOM = 6 * 1024
# Mails that show a board's state: for one board and reader the last of them wins.
_BOARD_KINDS = frozenset(
    {ReplyKind.BOARD, ReplyKind.NEW_BOARD, ReplyKind.REMOVED, ReplyKind.NOTIFICATION}
)
# Mails to an account about a board it plays or asked to follow, which no reply budget
# holds back (they go to confirmed addresses only, pbm.services.accounts.consent).
_BUDGET_FREE_KINDS = _BOARD_KINDS | {ReplyKind.CHAT}
# Tournament rounds and results: about his own tournament, never counted either.
_TOURNAMENT_KINDS = frozenset({ReplyKind.TOURNAMENT})


def bounded(ctx: Context, replies: Sequence[Reply]) -> list[Reply]:
    """The mails to queue for `replies`: answers merged, one mail per board and
    recipient, and each recipient within his reply budget."""
    # A mail with a file (an export) goes on its own, under its own bound.
    attached = [r for r in replies if r.attachment is not None]
    replies = [r for r in replies if r.attachment is None]
    # An answer goes to the sender alone; anything else is mailed as a notice.
    answers = _dedupe([r for r in replies if r.answer and r.to == [ctx.sender]])
    notices = [r for r in replies if not (r.answer and r.to == [ctx.sender])]
    merged = _merge_notices(notices)
    if answers:
        merged.insert(0, _merge_answers(answers))
    kept = [_room_for_pictures(k) for reply in merged for k in _within_budget(ctx, reply)]
    return kept + [k for reply in attached for k in _within_budget(ctx, reply)]


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
        ends = [len(body.encode("utf-8"))]
    else:
        sections = [
            phrase("answer_section", number=i, subject=r.subject) + "\n\n" + r.body.rstrip("\n")
            for i, r in enumerate(answers, 1)
        ]
        intro = phrase("answers_intro", count=len(answers)) + "\n\n"
        body = intro + "\n\n".join(sections) + "\n"
        # Where each answer's section ends in the body, in bytes.
        end = len(intro.encode("utf-8")) - 2
        ends = []
        for section in sections:
            end += 2 + len(section.encode("utf-8"))
            ends.append(end)
    capped, kept = _capped(body, ANSWER_MAX_BYTES - _QUOTE_ROOM)
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
        body=capped,
        kind=first.kind if len(answers) == 1 else ReplyKind.ANSWERS,
        game_id=last.game_id if same_board else None,
        board=last.board if same_board else None,
        user_id=last.user_id if same_board else None,
        token=last.token if same_board else None,
        move_count=last.move_count if same_board else None,
        # Each answer's boards, in the order of the sections (`show 101 102`), but none
        # of an answer whose text was cut.
        pictures=tuple(
            p for r, end in zip(answers, ends, strict=True) if end <= kept for p in r.pictures
        ),
        quote_original=quote,
        to_sender=True,
        answer=True,
    )


def _capped(body: str, limit: int) -> tuple[str, int]:
    """`body` cut at a line boundary to at most `limit` bytes as the mail carries it
    (`_wire_size`), saying so, and how many bytes of UTF-8 of `body` it keeps."""
    whole = len(body.encode("utf-8"))
    ascii_only = body.isascii()
    if _wire_size(body, ascii_only) <= limit:
        return body, whole
    note = "\n" + phrase("answer_truncated", limit=limit // 1024) + "\n"
    room = limit - _wire_size(note, ascii_only)
    kept: list[str] = []
    for line in body.split("\n"):
        room -= _wire_size(line + "\n", ascii_only)
        if room < 0:
            break
        kept.append(line)
    cut = "\n".join(kept)
    return cut + "\n" + note, len(cut.encode("utf-8"))


def _wire_size(text: str, ascii_only: bool) -> int:
    """The bytes `text` takes in a mail, at most: lines end in CRLF, and a text that is
    not ASCII goes as quoted-printable (pbm.mail.compose), where a byte past ASCII or an
    "=" takes three and a soft line break three more every 73 or so."""
    data = text.encode("utf-8")
    size = len(data) + text.count("\n")
    if not ascii_only:
        size += 2 * (len(data) - len(text.encode("ascii", "ignore")) + text.count("="))
        size += 3 * (size // 73 + 1)
    return size


def _room_for_pictures(reply: Reply) -> Reply:
    """`reply` with the pictures its mail has room for, estimated: the text goes twice
    (the text part and the HTML part) and each picture takes at most PICTURE_ROOM; the
    others are left out, and a line in the text says how many."""
    if not reply.pictures:
        return reply
    text = _wire_size(reply.body, reply.body.isascii())
    text += _QUOTE_ROOM if reply.quote_original else 0
    room = ANSWER_MAX_BYTES - 2 * text - _HTML_ROOM
    fits = max(0, min(len(reply.pictures), room // PICTURE_ROOM))
    if fits == len(reply.pictures):
        return reply
    note = phrase(
        "pictures_left_out",
        count=len(reply.pictures) - fits,
        total=len(reply.pictures),
        limit=ANSWER_MAX_BYTES // 1024,
    )
    reply.body = reply.body.rstrip("\n") + "\n\n" + note + "\n"
    reply.pictures = reply.pictures[:fits]
    return reply


def _merge_notices(notices: list[Reply]) -> list[Reply]:
    """At most one mail per board and recipients, in the order first caused (board mails
    go to one reader each; a welcome may go to all of an account's addresses at once)."""
    groups: dict[tuple[int | None, tuple[str, ...], str], list[Reply]] = {}
    for reply in notices:
        to = tuple(sorted({a.lower() for a in reply.to if a}))
        # A tournament's mails are news of their own (a withdrawal, a round, the end):
        # merged, one took the other's subject and their order was lost.
        own = reply.subject if reply.kind is ReplyKind.TOURNAMENT else ""
        if to:
            groups.setdefault((reply.game_id, to, own), []).append(reply)
    return [_one_notice(list(to), group) for (_game_id, to, _own), group in groups.items()]


def _one_notice(to: list[str], group: list[Reply]) -> Reply:
    """The mail for one board and reader: the last board mail (the newest state), with
    the other notices (chat, messages) before it."""
    boards = [r for r in group if r.kind in _BOARD_KINDS]
    base = boards[-1] if boards else group[-1]
    others = [r for r in group if r is not base and r.kind not in _BOARD_KINDS]
    body = base.body
    if others:
        body = "\n\n".join(r.body.rstrip("\n") for r in (*others, base)) + "\n"
    whole = len(body.encode("utf-8"))
    body, kept = _capped(body, ANSWER_MAX_BYTES)
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
        body=body,
        kind=base.kind,
        game_id=base.game_id,
        user_id=seat.user_id,
        token=seat.token,
        move_count=base.move_count if base.move_count is not None else seat.move_count,
        # The picture of the board mail kept: the newest state, as its text; none when
        # the text was cut (the board may be past the cut).
        pictures=base.pictures if kept == whole else (),
        quote_original=False,
        to_sender=any(r.to_sender for r in group),
        answer=False,
        reason=base.reason,
        board=base.board,
        tournament=base.tournament,
        reply_to=base.reply_to,
    )


def _within_budget(ctx: Context, reply: Reply) -> list[Reply]:
    """`reply` cut to the recipients within their budget (counted), and the one notice
    to each whose budget it is the first to pass."""
    if reply.kind is ReplyKind.CONFIRMATION or reply.kind in _TOURNAMENT_KINDS:
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
        kind=ReplyKind.BUDGET_NOTICE,
        to_sender=True,
    )


__all__ = ["ANSWER_MAX_BYTES", "PICTURE_ROOM", "bounded"]
