"""Conditional moves (issue 15): "if you play X, I play Y", as whole trees.

A player sets them while another player is to move: lines of play, each alternating
his opponent's move and his answer, all checked against the rules from the board's
position and kept as one tree per player and board (pbm.services.play.conditional_tree).
After every move played on the board, by anyone and by any path (a move by mail, a
queued move, another conditional answer), `moved` steps the trees of the other
players: a move that heads a line moves the tree down to it, any other move clears
the tree. pbm.services.play.moves then asks `due` for the answer of the player to move and
plays it as an ordinary move in the same transaction (clocks, game end, tournaments),
before his queued move, which it supersedes.

A tree is secret: only its owner's board mails list it and tell him what it did
(`Notes`); opponents, subscribers and game records never see it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pbm.errors import BoardError
from pbm.services.context import Context
from pbm.services.mailing.board_mail import mail_board
from pbm.services.play import conditional_tree
from pbm.services.play.boards import Board, game_over
from pbm.services.play.conditional_tree import Ply
from pbm.services.play.secrecy import hidden_moves, may_hide
from pbm.store import queries
from pbm.store.models import GamePlayer, User
from pbm.texts import phrase


@dataclass
class Notes:
    """What the moves of one command did to conditional moves, for each owner's own
    copy of the board mail (by user id): nobody else reads them."""

    by_user: dict[int, list[str]] = field(default_factory=dict)
    # The move that just moved an owner's tree down, by his challenge index: his
    # answer's note names it.
    triggers: dict[int, str] = field(default_factory=dict)

    def add(self, user: User, line: str) -> None:
        self.by_user.setdefault(user.saved_id, []).append(line)


def _store(gp: GamePlayer, tree: Sequence[Ply]) -> None:
    stored = conditional_tree.dump(tree)
    if gp.conditional != stored:  # an ORM row assigned even its own value is flushed
        gp.conditional = stored


def _owner_index(board: Board, user: User) -> int:
    index = board.index_of(user.id)
    if index is None:
        raise BoardError(phrase("not_playing", userid=user.userid), board.id)
    return index


# -- what the owner asks --------------------------------------------------------------


def set_conditions(
    ctx: Context, board: Board, user: User, first: str, body: str, number: int | None = None
) -> None:
    """Replace the player's tree by the lines of `first` (what followed the command) and
    `body`; no lines clears it. `number`: the move number he expects his opponent's
    next move to have (`#n`). Mails him the board with his tree."""
    if not board.active:
        raise game_over(board)
    index = _owner_index(board, user)
    lines = conditional_tree.read_lines(first, body)
    if not lines:
        clear_conditions(ctx, board, user)
        return
    if board.index_to_move() == index:
        raise BoardError(phrase("conditional_your_turn"), board.id)
    expected = board.row.move_count + 1
    if number is not None and number != expected:
        raise BoardError(phrase("conditional_stale", number=number, expected=expected), board.id)
    # Lines checked on top of a secret move would show its effect (a setup's values).
    if may_hide(board.rules) and hidden_moves(
        board, queries.move_records(ctx.session, board.id), index
    ):
        raise BoardError(phrase("preview_hidden"), board.id)
    tree = conditional_tree.build(board, index, lines, ctx.config.conditional_plies)
    gp = board.players[index][0]
    _store(gp, tree)
    ctx.session.add(gp)
    ctx.session.flush()
    events = [
        phrase(
            "conditional_set",
            lines=len(conditional_tree.paths(tree)),
            plies=conditional_tree.count(tree),
        )
    ]
    if gp.queued_move:
        events.append(phrase("conditional_and_queue", move=gp.queued_move))
    mail_board(ctx, board, only=[user], events=events)


def clear_conditions(ctx: Context, board: Board, user: User) -> None:
    """Remove the player's tree and tell him."""
    gp = board.players[_owner_index(board, user)][0]
    had = bool(gp.conditional)
    _store(gp, [])
    ctx.session.add(gp)
    ctx.session.flush()
    note = phrase("conditional_cleared" if had else "conditional_none")
    mail_board(ctx, board, only=[user], events=[note])


def show_conditions(ctx: Context, board: Board, user: User) -> None:
    """Mail the player the board with his tree (his board mails list it)."""
    gp = board.players[_owner_index(board, user)][0]
    events = [] if gp.conditional and board.active else [phrase("conditional_none")]
    mail_board(ctx, board, only=[user], events=events)


def queue_notes(gp: GamePlayer) -> list[str]:
    """What the answer to `queue` says about the player's conditional moves."""
    return [phrase("conditional_and_queue", move=gp.queued_move)] if gp.conditional else []


def line_moves(board: Board, user: User, number: int) -> list[str]:
    """The moves of line `number` of the player's tree, as his board mails number them
    (for `conditional ... preview N`)."""
    gp = board.players[_owner_index(board, user)][0]
    lines = conditional_tree.paths(conditional_tree.load(gp.conditional))
    if not lines:  # "no line 1 (you have 0)" said less than this
        raise BoardError(phrase("conditional_none"), board.id)
    if not 1 <= number <= len(lines):
        raise BoardError(phrase("conditional_no_line", number=number, count=len(lines)), board.id)
    return [p.text for p in lines[number - 1]]


# -- the hook in the move path (pbm.services.play.moves) -------------------------------------


def moved(board: Board, mover: int, text: str, notes: Notes) -> None:
    """Player `mover` has just played `text` (canonical): every other player's tree
    moves down to it, or is cleared when no line goes on with it."""
    for gp, user in board.players:
        if not board.active:  # the move ended the game: no tree has anything left to do
            _store(gp, [])
            continue
        if gp.position == mover or not gp.conditional:
            continue
        tree = conditional_tree.load(gp.conditional)
        found = next((p for p in tree if p.player == mover and p.text == text), None)
        if found is None:
            _store(gp, [])
            notes.add(user, phrase("conditional_deviation"))
            continue
        _store(gp, found.next)
        notes.triggers[gp.position] = text


def due(board: Board, index: int) -> Ply | None:
    """The answer the tree of player `index` (to move) gives now, if any."""
    gp = board.players[index][0]
    if not gp.conditional:
        return None
    tree = conditional_tree.load(gp.conditional)
    return next((p for p in tree if p.player == index), None)


def played(board: Board, index: int, answer: Ply, notes: Notes) -> None:
    """The answer was played as move number `board.row.move_count`: the tree moves down
    past it (cleared when it was the last), and its owner is told."""
    gp, user = board.players[index]
    _store(gp, answer.next if board.active else [])
    trigger = notes.triggers.pop(index, None)
    number = board.row.move_count
    # A game that hides moves may hide the one answered: the note does not repeat it.
    if trigger is None or may_hide(board.rules):
        notes.add(user, phrase("conditional_played", move=answer.text, number=number))
    else:
        notes.add(
            user,
            phrase("conditional_played_after", move=answer.text, number=number, trigger=trigger),
        )


def illegal(board: Board, index: int, answer: Ply, error: str, notes: Notes) -> None:
    """The answer due cannot be played (the position is not the one it was checked in,
    after an undo): it is skipped and the whole tree is cleared."""
    gp, user = board.players[index]
    _store(gp, [])
    notes.triggers.pop(index, None)
    notes.add(user, phrase("conditional_illegal", move=answer.text, error=error))
