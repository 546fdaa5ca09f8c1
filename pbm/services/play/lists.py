"""Read-only answers: show, games, history, standings, list, all show."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from pbm.games import GAMES
from pbm.games import AnyGame as Rules
from pbm.services.context import Context
from pbm.services.mailing import mail_html
from pbm.services.mailing.board_mail import board_facts, title_for
from pbm.services.play.board_text import summary
from pbm.services.play.boards import Board, board_from_row, state_at
from pbm.services.play.bots import label
from pbm.store import queries
from pbm.store.models import User
from pbm.texts import WIDTH, phrase


def show_text(ctx: Context, board: Board, reader: User | None, upto: int | None = None) -> str:
    """The summary of a board (after `upto` moves when given), full move list."""
    if upto is None:
        return summary(
            board,
            board_facts(ctx, board, timing=True),
            title=title_for(board, "Summary"),
            reader=reader,
            in_words=mail_html.in_words(ctx.session, reader),
        )
    moves = queries.move_records(ctx.session, board.id)[:upto]
    state = state_at(ctx, board, upto)
    shown = Board(row=board.row, rules=board.rules, players=board.players, state=state)
    # An earlier position says so, and who was to move in it; today's status, result,
    # ratings and timing are not about it.
    key = "title_position" if upto else "title_start"
    title = phrase(key, number=upto, total=board.row.move_count, label=board.label)
    return summary(
        shown,
        board_facts(ctx, shown, moves=moves, timing=False, results=False),
        title=title,
        reader=reader,
        state=state,
        now=board.state,
        in_words=mail_html.in_words(ctx.session, reader),
    )


def boards_of_users(
    ctx: Context, rules: Rules | None, users: Sequence[User], selector: str
) -> list[Board]:
    """Boards of every named user (of one game type, or all types), by the selector."""
    seen: set[int] = set()
    boards: list[Board] = []
    for user in users:
        statuses: tuple[str, ...] = ("active",) if selector in ("active", "next") else ()
        if selector == "inactive":
            statuses = ("finished", "removed")
        for row in queries.games_of_user(
            ctx.session, user.saved_id, rules.name if rules else None, statuses
        ):
            if row.id in seen:
                continue
            board = board_from_row(ctx, row)
            if selector == "next":
                mover = board.user_to_move()
                if mover is None or mover.id != user.id:
                    continue
            seen.add(row.saved_id)
            boards.append(board)
    return boards


def status_text(board: Board) -> str:
    row = board.row
    if row.status == "removed":
        return phrase("list_removed")
    if row.result == "tie":
        return phrase("list_tie")
    if row.result == "won" and row.winner is not None:
        return phrase("list_won", userid=board.userids[row.winner])
    user = board.user_to_move()
    if user is None:
        return ""
    if row.move_count == 0:
        return phrase("list_to_start", userid=user.userid)
    return phrase("list_turn", userid=user.userid)


def games_table(boards: Sequence[Board]) -> str:
    """pbmserv's `games` table: Board, Move, the players, Board Status."""
    width = max([10, *(len(u) for b in boards for u in b.labels)])
    players = max([2, *(len(b.players) for b in boards)])
    head = ["Board Move " + " ".join("".ljust(width) for _ in range(players)) + " Board Status"]
    head.append("----- ---- " + " ".join("-" * width for _ in range(players)) + " " + "-" * 19)
    lines = []
    for b in boards:
        names = " ".join(u.ljust(width) for u in b.labels + [""] * (players - len(b.userids)))
        row = f"{b.row.board:>5} {b.row.move_count:>4} {names}"
        status = status_text(b)
        if len(f"{row} {status}".rstrip()) <= WIDTH:
            lines.append(f"{row} {status}".rstrip())
        else:  # long names: the status goes under the players, so no line runs past 72
            lines.extend([row.rstrip(), " " * 11 + status])
    return "\n".join([h.rstrip() for h in head] + lines)


@dataclass
class Standing:
    userid: str  # the key ratings are matched by
    label: str = ""  # how tables print the player: `pbmbot (bot)` for a bot
    won: int = 0
    lost: int = 0
    ties: int = 0
    active: int = 0
    limit: int | None = None
    seeking: int = 0

    @property
    def played(self) -> int:
        return self.won + self.lost + self.ties


def standings(ctx: Context, rules: Rules) -> list[Standing]:
    """Win/loss/tie per player for one game type (the Elo/Glicko ratings of a later
    release replace the ranking key; see pbm.services.play.ratings)."""
    table: dict[int, Standing] = {}
    for row in queries.games_of_type(ctx.session, rules.name, ("finished", "active")):
        players = queries.players_of(ctx.session, row.saved_id)
        for gp, user in players:
            entry = table.setdefault(user.saved_id, Standing(user.userid, label(user)))
            if row.status == "active":
                entry.active += 1
            elif not row.rated:
                continue
            elif row.result == "tie":
                entry.ties += 1
            elif row.winner == gp.position:
                entry.won += 1
            else:
                entry.lost += 1
    for setting in queries.settings_of_type(ctx.session, rules.name):
        account = ctx.session.get(User, setting.user_id)
        if account is None:
            continue
        entry = table.setdefault(setting.user_id, Standing(account.userid, label(account)))
        entry.limit = setting.game_limit
        entry.seeking = setting.seeking
    return rank(list(table.values()))


def rank(rows: Sequence[Standing]) -> list[Standing]:
    """The won/lost/tie table's order: points (2 per win, 1 per tie), then wins."""
    return sorted(rows, key=lambda s: (-(2 * s.won + s.ties), -s.won, s.lost, s.userid.lower()))


def game_catalogue() -> str:
    """`list`: every game pbm plays, with aliases, seats and the variant names that
    stand for its options (`quadrupel-added`), folded at 72 columns."""
    lines = []
    for rules in GAMES.values():
        aliases = ", ".join(rules.aliases)
        extra = f" (also: {aliases})" if aliases else ""
        lines.append(f"{rules.title:<14} {len(rules.seats)} players{extra}")
        if rules.variant_aliases:
            lines += textwrap.wrap(
                "variants: " + " ".join(rules.variant_aliases),
                width=70,
                initial_indent=" " * 15,
                subsequent_indent=" " * 25,
                break_long_words=False,
                break_on_hyphens=False,
            )
    return "\n".join(lines)
