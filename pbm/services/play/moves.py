"""Playing a board: moves, server events (resign, draw and undo votes), queued and
submitted moves, previews and chat. Every refusal is a BoardError: its reply shows the board."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from pbm.errors import BoardError, NotAMoveError, PbmError
from pbm.games import GameError, InvalidMoveError, MoveError
from pbm.games.base import State
from pbm.services.context import Context, ReplyKind
from pbm.services.correspondence import vacation
from pbm.services.correspondence.clocks import charge_move
from pbm.services.correspondence.timeouts import forfeit_if_due
from pbm.services.mailing import mail_html
from pbm.services.mailing.board_mail import (
    board_facts,
    board_reply,
    mail_board,
    mail_reader,
    readers,
    title_for,
)
from pbm.services.play import conditional
from pbm.services.play.board_text import summary
from pbm.services.play.boards import (
    Board,
    absent_move_word,
    game_over,
    refusal,
    replay,
    rules_for,
    save_board,
    state_at,
)
from pbm.services.play.endings import everyone_moved, finish, player_leaves, remove
from pbm.services.play.ratings import forget_rating
from pbm.services.play.secrecy import HIDDEN_TEXT, hidden_moves, may_hide
from pbm.store import queries
from pbm.store.models import EndReason, Move, User
from pbm.texts import echoed, phrase, wrap

log = logging.getLogger(__name__)

EVENTS = ("resign", "propose", "undo", "accept", "reject")
# Words players write for an event, by the event they mean: as a move they are answered
# with the event's word (not "not your move" or a notation error), and as a game
# command's verb (pbm.commands.registry) they suggest it.
EVENT_WORDS_NEAR = {
    "draw": "propose",
    "offer": "propose",
    "offer draw": "propose",
    "draw offer": "propose",
    "takeback": "undo",
    "take back": "undo",
    "decline": "reject",
}


@dataclass(frozen=True)
class MoveRequest:
    text: str
    number: int | None = None  # the `#n` the player wrote: the move number he expects
    # A reply's: the board's move count when the mail it answers was sent.
    answered: int | None = None


def split_move_number(text: str, answered: int | None = None) -> MoveRequest:
    """`e1-e2#5` -> ("e1-e2", 5). Everything before the last `#digits` is the move.
    `answered` is the move count of the board mail a reply answers, if known."""
    head, sep, tail = text.strip().rpartition("#")
    if sep and tail.strip().isdigit():
        return MoveRequest(head.strip(), int(tail), answered)
    return MoveRequest(text.strip(), None, answered)


def _player_index(board: Board, user: User) -> int:
    index = board.index_of(user.id)
    if index is None:
        raise BoardError(phrase("not_playing", userid=user.userid), board.id)
    return index


def _require_active(board: Board) -> None:
    if not board.active:
        raise game_over(board)


def _not_your_move(board: Board) -> BoardError:
    """The refusal of a move out of turn, naming whose turn it is: a player with several
    boards may have mixed them up."""
    index = board.index_to_move()
    assert index is not None  # an active board always has a player to move
    userid = board.players[index][1].userid
    return BoardError(phrase("not_your_move", userid=userid, label=board.label), board.id)


def _check_move_word(board: Board, text: str) -> None:
    reason = absent_move_word(board.rules, text)
    if reason:
        raise BoardError(reason, board.id)


def _check_number(board: Board, request: MoveRequest) -> None:
    """A move meant for another position than the board's is refused: its `#n` names
    another move number, or, without one, the board mail it answers is not the newest."""
    expected = board.row.move_count + 1
    if request.number is not None and request.number != expected:
        raise BoardError(
            phrase(
                "stale_number",
                move=f"{request.text}#{request.number}",
                given=request.number,
                text=request.text,
                number=expected,
            ),
            board.id,
        )
    answered = request.answered
    if request.number is None and answered is not None and answered != board.row.move_count:
        start = phrase("stale_reply_start")
        when = phrase("stale_reply_after", move=answered) if answered else start
        text = phrase("stale_reply", move=request.text, when=when, number=expected)
        raise BoardError(wrap(text, reflow=True), board.id)


def _set_comment(board: Board, user: User, comment: str) -> None:
    _change(board.row, comment=comment.strip() or None)
    _change(board.row, comment_by=user.userid if comment.strip() else None)


def _change(row: object, **values: object) -> None:
    """Assign only what differs: an ORM row assigned even its own value must be flushed."""
    for key, value in values.items():
        if getattr(row, key) != value:
            setattr(row, key, value)


def _parse(board: Board, state: State, text: str) -> object:
    try:
        return board.rules.parse_move(state, text)
    except MoveError as exc:
        if isinstance(exc, InvalidMoveError):
            hint = "\n" + phrase("notation_hint", notation=board.rules.notation.strip())
            raise NotAMoveError(refusal(exc) + hint, board.id) from None
        raise BoardError(refusal(exc), board.id) from None


def _check_notation(board: Board, text: str) -> None:
    """Refuse what is no move at all in the game's notation; legality waits for the
    position it is played in (a queued move is checked by `_parse` when its turn comes)."""
    try:
        _parse(board, board.state, text)
    except NotAMoveError:
        raise
    except BoardError:
        pass


def _play_one(
    ctx: Context,
    board: Board,
    index: int,
    text: str,
    auto: bool,
    notes: conditional.Notes | None = None,
) -> str:
    """Apply one move of player `index`; returns its echo (with side effects). The other
    players' conditional moves follow it (what that did to them goes in `notes`)."""
    move = _parse(board, board.state, text)
    canonical = board.rules.format_move(board.state, move)
    echo = board.rules.describe_move(board.state, move)
    now = ctx.now()
    charge_move(ctx, board, index)  # time used, Fischer bank (vacations left out)
    board.state = board.rules.apply(board.state, move)
    board.row.move_count += 1
    board.row.last_move_at = now
    # The echo is kept with the move (board mails, `show`, records); the column holds 200.
    queries.add_move(
        ctx.session, board.id, board.row.move_count, index, canonical, auto, now, echo[:200]
    )
    outcome = board.rules.outcome(board.state)
    if outcome is not None:
        seats = list(board.rules.player_seats(board.state))
        winner = None if outcome.winner is None else seats.index(outcome.winner)
        scores = None
        if outcome.scores is not None:
            scores = [outcome.scores[seats[i]] for i in range(len(seats))]
        finish(ctx, board, winner, EndReason.RULES, outcome.reason, scores)
    conditional.moved(board, index, canonical, conditional.Notes() if notes is None else notes)
    return echo


def _play_queued(ctx: Context, board: Board, notes: conditional.Notes) -> list[str]:
    """Play what the players whose turn comes left to be played: the answer of their
    conditional moves to the move just made, which supersedes a queued move; else the
    queued move (pbmserv's "(Auto)"). Each move played may bring the next one."""
    events: list[str] = []
    while board.active:
        index = board.index_to_move()
        if index is None:
            break
        gp, user = board.players[index]
        answer = conditional.due(board, index)
        if answer is not None:
            try:
                _play_one(ctx, board, index, answer.text, auto=False, notes=notes)
            except BoardError as exc:
                conditional.illegal(board, index, answer, str(exc), notes)
                continue  # skipped: his queued move, if any, is next
            conditional.played(board, index, answer, notes)
            if gp.queued_move:
                notes.add(user, phrase("conditional_dropped_queue", move=gp.queued_move))
                _change(gp, queued_move=None)
            continue
        if not gp.queued_move:
            break
        text, gp.queued_move = gp.queued_move, None
        ctx.session.add(gp)
        try:
            _play_one(ctx, board, index, text, auto=True, notes=notes)
        except BoardError as exc:
            # Everyone reads this event: a game with secret moves keeps the move (and the
            # refusal, which may quote it) back.
            secret = may_hide(board.rules)
            shown, error = (HIDDEN_TEXT, HIDDEN_TEXT) if secret else (echoed(text), str(exc))
            events.append(phrase("queued_illegal", userid=user.userid, move=shown, error=error))
            break
    return events


def make_move(
    ctx: Context, board: Board, user: User, request: MoveRequest, comment: str = ""
) -> None:
    """`move board userid password MOVE[#n]`: a move or one of the server events."""
    word = request.text.lower()
    if word in EVENTS:
        _require_active(board)
        {
            "resign": resign,
            "propose": propose_draw,
            "undo": propose_undo,
            "accept": accept,
            "reject": reject,
        }[word](ctx, board, user, comment)
        return
    near = EVENT_WORDS_NEAR.get(" ".join(word.split()))
    if near and word not in board.rules.move_words:
        raise BoardError(phrase(f"event_near_{near}", word=echoed(request.text)), board.id)
    _check_move_word(board, request.text)
    _require_active(board)
    index = _player_index(board, user)
    if board.index_to_move() != index:
        raise _not_your_move(board)
    _check_number(board, request)
    if not request.text:  # an empty answer to a board mail
        example = board.rules.answer_example(board.state)
        raise BoardError(
            phrase("no_move_example", example=example, game=board.rules.name), board.id
        )
    if forfeit_if_due(ctx, board):
        return  # too late: time ran out before this move came (the forfeit is mailed)
    notes = conditional.Notes()
    before = board.row.move_count
    # Read before the move is played, so that the read does not flush the move's rows
    # first, then the rest of them again at the end.
    away = vacation.on_vacation(ctx.session, user, ctx.now())
    _play_one(ctx, board, index, request.text, auto=False, notes=notes)
    if away:
        # A move does not end a vacation: its days keep running out unless he stops it.
        notes.add(user, phrase("moved_on_vacation", userid=user.userid))
    _change(board.players[index][0], submitted_move=None)
    lapsed = board.row.proposal
    _change(board.row, proposal=None, proposal_votes=None)
    _set_comment(board, user, comment)
    events = _play_queued(ctx, board, notes)
    if lapsed and board.active:
        events.insert(0, phrase("proposal_lapsed", kind=lapsed, userid=user.userid))
    save_board(ctx, board)
    # A conditional answer shows under the move it answered, as two mails by hand would.
    fresh = board.row.move_count - before
    mail_board(ctx, board, events=events, private=notes.by_user, fresh=fresh)


def queue_move(
    ctx: Context, board: Board, user: User, request: MoveRequest, comment: str = ""
) -> None:
    """`queue`: a move now if it is your turn, else kept to play when it comes."""
    _require_active(board)
    index = _player_index(board, user)
    if board.index_to_move() == index:
        make_move(ctx, board, user, request, comment)
        return
    if not request.text:
        raise BoardError(phrase("no_move_given"), board.id)
    _check_move_word(board, request.text)
    _check_notation(board, request.text)
    gp = board.players[index][0]
    gp.queued_move = request.text
    ctx.session.add(gp)
    ctx.session.flush()
    mail_board(ctx, board, only=[user], events=conditional.queue_notes(gp))


def resign(ctx: Context, board: Board, user: User, comment: str = "") -> None:
    """Resign; before every player has moved once this declines: the board is removed."""
    index = _player_index(board, user)
    _set_comment(board, user, comment)
    if not everyone_moved(ctx, board):
        decline(ctx, board, user, comment)
        return
    player_leaves(ctx, board, index, EndReason.RESIGNED, phrase("resigned", userid=user.userid))
    save_board(ctx, board)
    mail_board(ctx, board)


def decline(ctx: Context, board: Board, user: User, comment: str = "") -> None:
    """pbmserv: a resignation before everyone has moved removes the board, unrated."""
    log.info("%s removed: %s declined", board.label, user.userid)
    reason = phrase("declined", userid=user.userid)
    said = comment.strip()
    note = "\n".join([phrase("comment_by", userid=user.userid), said]) if said else ""
    remove(ctx, board, EndReason.DECLINED, reason, loser_id=user.id, note=note)


def _start_vote(ctx: Context, board: Board, user: User, kind: str, comment: str) -> None:
    index = _player_index(board, user)
    if board.row.proposal:
        raise BoardError(phrase("proposal_pending"), board.id)
    if kind == "undo" and board.row.move_count == 0:
        raise BoardError(phrase("nothing_to_undo"), board.id)
    board.row.proposal = kind
    board.row.proposal_votes = [index]
    _set_comment(board, user, comment)
    save_board(ctx, board)
    mail_board(ctx, board)


def propose_draw(ctx: Context, board: Board, user: User, comment: str = "") -> None:
    _start_vote(ctx, board, user, "draw", comment)


def propose_undo(ctx: Context, board: Board, user: User, comment: str = "") -> None:
    _start_vote(ctx, board, user, "undo", comment)


def accept(ctx: Context, board: Board, user: User, comment: str = "") -> None:
    index = _player_index(board, user)
    if not board.row.proposal:
        raise BoardError(phrase("nothing_proposed"), board.id)
    if index in (board.row.proposal_votes or []):
        # Accepting again changes nothing: say so rather than mail everyone the board.
        raise BoardError(phrase("proposal_voted", kind=board.row.proposal), board.id)
    votes = set(board.row.proposal_votes or []) | {index}
    _set_comment(board, user, comment)
    events: list[str] = []
    if len(votes) < len(board.players):
        board.row.proposal_votes = sorted(votes)
    elif board.row.proposal == "draw":
        finish(ctx, board, None, EndReason.DRAW_AGREED, phrase("draw_agreed"))
    else:
        _undo_last(ctx, board)
        board.row.proposal = None
        board.row.proposal_votes = None
        if board.row.comment:
            # The accepting player's comment stays; the server says its word beside it.
            events.append(phrase("undo_done"))
        else:
            board.row.comment = phrase("undo_done")
            board.row.comment_by = ctx.config.server_name
    save_board(ctx, board)
    mail_board(ctx, board, events=events)


def _undo_last(ctx: Context, board: Board) -> None:
    last = queries.last_move(ctx.session, board.id)
    if last is None:
        return
    ctx.session.delete(last)
    ctx.session.flush()
    board.row.move_count -= 1
    board.state = state_at(ctx, board, board.row.move_count)


def reject(ctx: Context, board: Board, user: User, comment: str = "") -> None:
    index = _player_index(board, user)
    if not board.row.proposal:
        raise BoardError(phrase("nothing_proposed"), board.id)
    kind = board.row.proposal
    # A player who made or accepted the proposal takes his word back.
    key = "withdrawn" if index in (board.row.proposal_votes or []) else "rejected"
    board.row.proposal = None
    board.row.proposal_votes = None
    _set_comment(board, user, comment)
    save_board(ctx, board)
    mail_board(ctx, board, events=[phrase(key, userid=user.userid, kind=kind)])


def submit(ctx: Context, board: Board, user: User, request: MoveRequest) -> None:
    """Keep a move to confirm later; mail the sender a preview of it."""
    _require_active(board)
    index = _player_index(board, user)
    if board.index_to_move() != index:
        raise _not_your_move(board)
    _check_number(board, request)
    _check_move_word(board, request.text)
    move = _parse(board, board.state, request.text)
    canonical = board.rules.format_move(board.state, move)
    gp = board.players[index][0]
    gp.submitted_move = canonical
    ctx.session.add(gp)
    ctx.session.flush()
    preview_state = board.rules.apply(board.state, move)
    _mail_preview(
        ctx,
        board,
        user,
        preview_state,
        [canonical],
        phrase("submit_note"),
        kind="Submit",
    )


def confirm(ctx: Context, board: Board, user: User, comment: str = "") -> None:
    _require_active(board)
    index = _player_index(board, user)
    gp = board.players[index][0]
    if not gp.submitted_move:
        raise BoardError(phrase("nothing_submitted"), board.id)
    make_move(ctx, board, user, MoveRequest(gp.submitted_move), comment)


def preview(
    ctx: Context, board: Board, upto: int | None, texts: Sequence[str], reader: User | None
) -> None:
    """What-if: the board after `upto` moves (default: all) and then `texts`; nothing saved."""
    state = board.state if upto is None else state_at(ctx, board, upto)
    played: list[str] = []
    for text in texts:
        if board.rules.to_move(state) is None:
            raise BoardError(phrase("game_over"), board.id)
        move = _parse(board, state, text)
        played.append(board.rules.format_move(state, move))
        state = board.rules.apply(state, move)
    _mail_preview(ctx, board, reader, state, played, "", kind="Preview", upto=upto)


def _mail_preview(
    ctx: Context,
    board: Board,
    reader: User | None,
    state: State,
    played: Sequence[str],
    note: str,
    *,
    kind: str,
    upto: int | None = None,
) -> None:
    moves = list(queries.moves_of(ctx.session, board.id))
    reader_index = board.index_of(reader.id) if reader else None
    if played and hidden_moves(board, moves, reader_index):
        # Moves played on top of a secret one would show its effect (a setup's values).
        raise BoardError(phrase("preview_hidden"), board.id)
    if upto is not None:
        moves = moves[:upto]
    number = len(moves)
    extra: list[Move] = []
    # Previewed moves are numbered on; players by whose seat is to move at each step.
    probe = state_at(ctx, board, number) if upto is not None or played else board.state
    for text in played:
        seat = board.rules.to_move(probe)
        seats = list(board.rules.player_seats(probe))
        number += 1
        parsed = board.rules.parse_move(probe, text)
        extra.append(
            Move(
                game_id=board.id,
                number=number,
                player=seats.index(seat) if seat is not None else 0,
                text=text,
                made_at=ctx.now(),
                echo=board.rules.describe_move(probe, parsed),
            )
        )
        probe = board.rules.apply(probe, parsed)
    shown = Board(row=board.row, rules=board.rules, players=board.players, state=state)
    # Which position this is: the moves kept, then those previewed; no timing, no result
    # (they belong to the game as it stands).
    at = {"number": len(moves), "total": board.row.move_count}
    where = phrase("preview_kept" if moves else "preview_kept_start", **at)
    if played:
        key = "preview_position" if moves else "preview_position_start"
        where = phrase(key, moves=", ".join(played), **at)
    body = summary(
        shown,
        board_facts(ctx, shown, moves=[*moves, *extra], timing=False, results=False),
        title=title_for(board, kind),
        reader=reader,
        events=[where, note] if note else [where],
        state=state,
        now=board.state,
        in_words=mail_html.in_words(ctx.session, reader),
    )
    ctx.reply(
        board_reply(
            ctx,
            board,
            reader,
            to=[ctx.sender] if ctx.sender else [],
            subject=phrase("subject_preview", kind=kind, label=board.label),
            body=body,
            kind=ReplyKind.PREVIEW,
            drawn=False,
            to_sender=True,
            answer=True,
        )
    )


def preview_new(
    ctx: Context, rules_name: str, texts: Sequence[str], options: dict[str, str] | None = None
) -> str:
    """`preview new move...`: the moves from a fresh start position with `options`."""
    rules = rules_for(rules_name)
    try:
        state = rules.new_state(**(options or {}))
        for text in texts:
            state = rules.apply(state, rules.parse_move(state, text))
    except GameError as exc:
        raise PbmError(refusal(exc)) from None
    return rules.render(state).rstrip("\n")


def chat(ctx: Context, board: Board, user: User, text: str) -> None:
    """Send `text` to the board's players and subscribers (and the sender); no state change."""
    if not text.strip():
        raise BoardError(phrase("chat_empty"), board.id)
    people = readers(ctx, board)
    if all(u.id != user.id for u in people):
        people.append(user)
    body = phrase("chat_body", label=board.label, userid=user.userid, text=text.strip())
    subject = phrase(
        "subject_chat", game=board.rules.title, board=board.row.board, userid=user.userid
    )
    for reader in people:
        mail_reader(
            ctx, board, reader, subject=subject, body=body + "\n", kind=ReplyKind.CHAT, drawn=False
        )


def replay_check(board: Board, texts: Sequence[str]) -> bool:
    """Whether the cached position equals a replay of the move list."""
    return board.rules.dump(replay(board.rules, board.options, texts)) == board.row.position


# -- the administrator's interventions ------------------------------------------------


def abort(ctx: Context, board: Board, reason: str) -> None:
    """End a board unrated, without a result, and tell its readers."""
    _require_active(board)
    remove(ctx, board, EndReason.ABORTED, reason)  # a tournament scores an aborted board as a draw


def adjudicate(ctx: Context, board: Board, winner: User | None, reason: str) -> None:
    """End a board with the administrator's result (None: a tie)."""
    _require_active(board)
    index = None if winner is None else _player_index(board, winner)
    finish(ctx, board, index, EndReason.ADJUDICATED, reason)
    save_board(ctx, board)
    mail_board(ctx, board)


def take_back(ctx: Context, board: Board) -> None:
    """Remove the last move (the administrator's undo)."""
    if board.row.move_count == 0:
        raise BoardError(phrase("nothing_to_undo"), board.id)
    if not board.active:
        board.row.status = "active"
        board.row.result = board.row.result_reason = board.row.scores = None
        board.row.end_reason = None
        board.row.winner = None
        board.row.ended_at = None
        forget_rating(ctx, board)
    _undo_last(ctx, board)
    board.row.comment = phrase("undo_done")
    board.row.comment_by = ctx.config.server_name
    save_board(ctx, board)
    mail_board(ctx, board)
