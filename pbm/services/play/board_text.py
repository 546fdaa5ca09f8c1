"""Board summaries as pbmserv laid them out: title, status, move list in columns, the
board for the reader's seat, subscribers, the comment block and the timing block.

A renderer: it lays out what it is given (the board and its `BoardFacts`, gathered by
pbm.services.mailing.board_mail.board_facts) and reads nothing from the database."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pbm.games.base import State
from pbm.services.play import conditional_tree, words
from pbm.services.play.boards import Board
from pbm.services.play.finished import outcome, with_reason
from pbm.services.play.secrecy import ShownMove, hidden_moves, may_hide, shown_echo, shown_text
from pbm.store.models import User
from pbm.texts import phrase, render, wrap

STARS = "*" * 60
INDENT = "   "
WIDTH = 72  # every line pbm mails fits in 72 columns


@dataclass(frozen=True)
class Timing:
    """The timing block's inputs: the time rules' lines and the moment it is printed."""

    rules: Sequence[str]
    now: datetime


@dataclass(frozen=True)
class BoardFacts:
    """What a board summary prints beside the board row and the position: the same for
    every reader of one mail, so a board mail gathers it once."""

    moves: Sequence[ShownMove]
    subscribers: Sequence[str]  # userids
    timing: Timing | None = None  # None: no timing block
    results: Sequence[Sequence[str]] = ()  # rating changes, a match's score


def when(dt: datetime) -> str:
    """pbmserv's `%b %e %R` (no year)."""
    return f"{dt:%b} {dt.day:>2} {dt:%H:%M}"


def duration(seconds: float) -> str:
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    unit = "day," if days == 1 else "days,"
    return f"{days:>3} {unit:<5} {hours:02}:{minutes:02}:{secs:02}"


def move_columns(
    board: Board,
    moves: Sequence[ShownMove],
    state: State,
    last_rows: int | None = None,
    hidden: set[int] | None = None,
) -> str:
    """Side names, userids, then the numbered moves, one column per player; the moves
    numbered in `hidden` show as "..." (secret to this reader). A move shows with its
    echo ("9 g4-g5 converts c5") when that fits its column's share of 72 columns, else
    as the bare move (the status block's last-move line gives the echo in full)."""
    seats = board.rules.player_seats(state)
    return _move_columns(board, moves, seats, last_rows, hidden or set())


def _move_columns(
    board: Board,
    moves: Sequence[ShownMove],
    seats: Sequence[int],
    last_rows: int | None,
    hidden: set[int],
) -> str:
    n = len(board.players)
    share = (WIDTH - len(INDENT)) // max(n, 1) - 2  # a column's text, less its 2-space gap
    cells: list[list[str]] = []
    row: list[str] = [""] * n
    previous = -1
    for move in moves:
        if move.player <= previous:
            cells.append(row)
            row = [""] * n
        auto = " (Auto)" if move.auto else ""
        text = f"{move.number} {shown_echo(move, hidden)}{auto}"
        if len(text) > share:
            text = f"{move.number} {shown_text(move, hidden)}{auto}"
        row[move.player] = text
        previous = move.player
    if previous >= 0:
        cells.append(row)
    if last_rows is not None and len(cells) > last_rows:
        cells = cells[-last_rows:]
    sides = [board.rules.seat_name(seats[i]) for i in range(n)]
    widest = max([len(c) for r in cells for c in r] + [len(s) for s in sides + board.labels])
    width = max(12, widest + 2)

    def line(values: Sequence[str]) -> str:
        return (INDENT + "".join(v.ljust(width) for v in values)).rstrip()

    return "\n".join([line(sides), line(board.labels), *(line(r) for r in cells)])


def words_moves(
    board: Board, moves: Sequence[ShownMove], last_rows: int | None, hidden: set[int]
) -> str:
    """The move list in one sentence: the last `last_rows` rounds (None: every move)."""
    if last_rows is not None:
        moves = moves[-last_rows * len(board.players) :]
    return words.move_list(moves, board.userids, hidden)


def drawing(board: Board, state: State, seat: int | None, *, final: bool = False) -> str:
    """The board drawn for `seat` (a game that hides nothing draws the same for all).
    `final`: the last position of a finished board, drawn without the rules' "to move"
    and "Game over" lines (the result line says how it ended)."""
    viewer = seat if may_hide(board.rules) else None
    return board.rules.render(state, viewer, headline=not final).rstrip("\n")


def last_move_line(
    board: Board,
    moves: Sequence[ShownMove],
    hidden: set[int],
    *,
    bare: bool = False,
    lead: bool = False,
    fresh: int = 1,
) -> str:
    """The last move with its echo, "carol g4-g5 converts c5" ("" before the first);
    `bare`: the move alone (the result line below says what it did). `lead`: a queued
    move played by itself ("(Auto)") comes after the move that brought its turn, echoed
    too, on lines of their own: its player would else never read what that move did.
    `fresh`: the last moves one command played (a move and the conditional answers and
    queued moves it brought), each on its line in order, as the mails of an exchange
    by hand would have shown them one by one."""
    if not moves:
        return ""
    first = max(len(moves) - fresh, 0)
    while lead and first > 0 and moves[first].auto:
        first -= 1
    lines = []
    for move in moves[first:]:
        last = move is moves[-1]
        shown = shown_text(move, hidden) if bare and last else shown_echo(move, hidden)
        echo = shown + (" (Auto)" if move.auto else "")
        lines.append(phrase("last_move_line", userid=board.userids[move.player], echo=echo))
    return "\n".join(lines)


def position_line(board: Board, state: State) -> str:
    """Who is to move in a position shown out of its time (show board#n, previews)."""
    seat = board.rules.to_move(state)
    if seat is None:
        return phrase("position_over")
    index = list(board.rules.player_seats(state)).index(seat)
    return phrase("position_to_move", userid=board.userids[index])


def result_line(board: Board) -> str:
    """Whose turn it is, or for a finished board its one result line: the reason and
    the result ("bob resigns. Game won by alice.")."""
    if not board.active:
        row = board.row
        return with_reason(row.result_reason or "", _result(board), row.end_reason)
    return _result(board)


def ended_line(board: Board, upto: int) -> str | None:
    """A finished board's result line on one line, for the picture of its position
    after `upto` moves when that is its last (the rules of a resigned board would still
    say who is to move); None while it runs, and for an earlier position."""
    if board.active or upto != board.row.move_count:
        return None
    return " ".join(result_line(board).split("\n"))


def _result(board: Board) -> str:
    row = board.row
    ended = outcome(row.status, row.result, row.winner, row.scores, board.userids)
    if ended is not None:
        return ended
    user = board.user_to_move()
    if user is None:
        return ""
    if row.move_count == 0:
        return phrase("status_start", userid=user.userid)
    return phrase("status_turn", userid=user.userid)


def summary(
    board: Board,
    facts: BoardFacts,
    *,
    title: str,
    reader: User | None,
    events: Sequence[str] = (),
    last_rows: int | None = None,
    state: State | None = None,
    now: State | None = None,
    answer_line: bool = False,
    in_words: bool = False,
    fresh: int = 1,
) -> str:
    """The whole board mail body for `reader` (None: an observer). `last_rows` keeps the
    move list of an ongoing board to its last rows (None: every move). `now` is the game
    as it stands when `state` is another position (show board#n, previews): it decides
    which moves are still secret, and makes this a view of that position, which says
    who is to move in it and leaves out what belongs to the game today (its status and
    result, queued and submitted moves, proposals, the comment; the caller's `facts`
    bring no timing and no results). `answer_line`: a mail that carries the reader's
    reply token about this board alone; the copy for the player to move then ends with
    how to answer it. `in_words`: the move list and the board in sentences for screen
    readers (`set ... format words`), not in columns and characters. `fresh`: how many
    of the last moves the command at hand played (`last_move_line`)."""
    past = now is not None
    final = not past and not board.active
    state = board.state if state is None else state
    index = board.index_of(reader.id if reader else None)
    moves = facts.moves
    hidden = hidden_moves(board, moves, index, now)
    # A move that ended the game by the rules: its echo would say the result twice.
    ended = final and board.rules.outcome(state) is not None
    status = [last_move_line(board, moves, hidden, bare=ended, lead=True, fresh=fresh), *events]
    status.append(position_line(board, state) if past else result_line(board))
    # The events and the result are pbm's sentences (with a rules engine's reasons):
    # folded at 72 columns like every line pbm writes.
    status_text = wrap("\n".join(s for s in status if s))
    for block in facts.results:
        status_text += "\n\n" + "\n".join(block) if block else ""
    extras: list[str] = []
    if index is not None and board.active and not past:
        gp = board.players[index][0]
        if gp.queued_move:
            extras.append(phrase("queued_line", move=gp.queued_move))
        if gp.submitted_move:
            extras.append(phrase("submitted_line", move=gp.submitted_move))
        # His conditional moves: only his own copy shows them.
        extras += conditional_tree.listing(gp.conditional)
    if board.row.proposal and not past:
        extras.append(proposal_text(board))
    seat = board.seat_of(index) if index is not None else None
    subs_line = (
        phrase("subscribers_line", userids=" ".join(facts.subscribers)) if facts.subscribers else ""
    )
    comment = ""
    if board.row.comment and not past:
        author = phrase("comment_by", userid=board.row.comment_by or "")
        comment = "\n".join(["", STARS, "", author, board.row.comment.rstrip()])
    timing_text = "\n" + STARS + "\n\n" + timing_block(board, facts.timing) if facts.timing else ""
    answer = ""
    if answer_line and index is not None and board.active and not past:
        answer = _answer_lines(board, index, state)
    return (
        render(
            "board",
            title="\n".join(line for line in (title, options_line(board)) if line),
            status=status_text,
            extras=("\n" + "\n".join(extras) + "\n") if extras else "",
            moves=(
                wrap(words_moves(board, moves, last_rows if board.active else None, hidden))
                if in_words
                else move_columns(board, moves, state, last_rows if board.active else None, hidden)
            ),
            board=(
                wrap(
                    "\n".join(
                        words.position(
                            board.rules,
                            state,
                            seat=seat,
                            players=board.userids,
                            headline=not final,
                        )
                    )
                )
                if in_words
                else drawing(board, state, seat, final=final)
            ),
            subscribers=("\n" + wrap(subs_line)) if subs_line else "",
            comment=comment,
            timing=timing_text,
        ).rstrip()
        + "\n"
        + answer
    )


def _answer_lines(board: Board, index: int, state: State) -> str:
    """How the reader answers this mail: the vote he owes on a pending proposal, then,
    when he is to move, how to play in this position's notation."""
    lines = []
    if board.row.proposal and index not in (board.row.proposal_votes or []):
        lines.append(phrase("answer_proposal", kind=board.row.proposal))
    if board.row.to_move == index:
        example = board.rules.answer_example(state)
        lines.append(phrase("answer_line", example=example, game=board.rules.name))
    return "".join(f"\n{line}\n" for line in lines)


def options_line(board: Board) -> str:
    """The rules settings a board is played with, under its title: the options that
    differ from their defaults, and the game's first option when it is a number (the
    size of a Quarod board, Quad's counters), which the drawing does not tell."""
    if not board.rules.options:
        return ""
    resolved = board.rules.resolve_options(board.options)
    shown = [
        f"{option.name}={_option_text(resolved[option.name])}"
        for i, option in enumerate(board.rules.options)
        if (i == 0 and option.kind == "int") or resolved[option.name] != option.default
    ]
    return phrase("options_line", options=" ".join(shown)) if shown else ""


def _option_text(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def proposal_text(board: Board) -> str:
    votes = set(board.row.proposal_votes or [])
    waiting = "\n".join(f"\t{u}" for i, u in enumerate(board.userids) if i not in votes)
    proposer = board.userids[min(votes)] if votes else ""
    key = "proposal_draw" if board.row.proposal == "draw" else "proposal_undo"
    return phrase(key, userid=proposer, waiting=waiting)


def timing_block(board: Board, timing: Timing) -> str:
    row = board.row
    lines = [
        phrase("timing_started", when=when(row.created_at)),
        phrase("timing_last", when=when(row.last_move_at)),
    ]
    if row.ended_at is not None:
        lines.append(phrase("timing_ended", when=when(row.ended_at)))
    else:
        lines.append(phrase("timing_now", when=when(timing.now)))
    lines += timing.rules
    lines += ["", phrase("timing_used")]
    # pbmserv's columns, "alice (Alice Smith):   0 days, 00:00:08", the label padded to
    # "Total"; pbm keeps no real names, so the label is the userid alone.
    labels = list(board.userids)
    width = max(len(x) for x in [*labels, "Total"])
    total = 0.0
    for label, (gp, _) in zip(labels, board.players, strict=True):
        total += gp.seconds_used
        lines.append(f"{label:<{width}}: {duration(gp.seconds_used)}")
    lines.append(f"{'Total':<{width}}: {duration(total)}")
    return "\n".join(lines)


def subject_for(board: Board, *, new: bool = False) -> str:
    """`New Quarto Board 101 alice`, `Quarto Board 101 bob **` (** = a comment, as pbmserv)."""
    user = board.user_to_move() if board.active else None
    text = f"{board.label} {user.userid if user else ''}".rstrip()
    if new:
        text = "New " + text
    if board.row.comment:
        text += " **"
    return text
