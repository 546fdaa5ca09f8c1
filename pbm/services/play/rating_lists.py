"""The rating lists mailed by `standings`, `ratings` and `history`, in pbmserv's layout:
sections Established, Provisionals and Inactive, then everyone flagged E/P/I."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import col, select

from pbm.games import AnyGame as Rules
from pbm.ratings.pbmserv import PROVISIONAL_GAMES, Rating
from pbm.services.context import Context
from pbm.services.play.boards import Board, board_from_row
from pbm.services.play.bots import label
from pbm.services.play.lists import Standing, standings
from pbm.services.play.ratings import ratings_of_type
from pbm.store.models import BoardRow, GamePlayer, User
from pbm.store.models_correspondence import PlayerRating

HEAD = "Rank Name             Rating  Won Lost Ties   Active/Limit  Seeking"
RULE = "---- ---------------- ------ ---- ---- ----   ------------  -------"


@dataclass
class Entry:
    standing: Standing
    rating: float
    games: int

    @property
    def shown(self) -> int:
        return Rating(self.rating, self.games).shown

    @property
    def flag(self) -> str:
        """E established, P provisional, I inactive (refuses challenges, no active board)."""
        if self.standing.limit == 0 and self.standing.active == 0:
            return "I"
        return "P" if self.games < PROVISIONAL_GAMES else "E"


def entries(ctx: Context, rules: Rules) -> list[Entry]:
    held = {r.user_id: r for r, _ in ratings_of_type(ctx.session, rules.name)}
    users = {u.userid: u.id for _, u in ratings_of_type(ctx.session, rules.name)}
    found = []
    for standing in standings(ctx, rules):
        rating = held.get(users.get(standing.userid) or -1) or PlayerRating(user_id=0, game="")
        found.append(Entry(standing, rating.value, rating.games))
    found.sort(key=lambda e: (-e.rating, e.standing.userid.lower()))
    return found


def _row(rank: int, e: Entry, flag: str = "") -> str:
    s = e.standing
    limit = "" if s.limit is None else str(s.limit)
    active = f"{s.active}/{limit}" if limit else (str(s.active) if s.active else "")
    seeking = str(s.seeking) if s.seeking else ""
    lead = f"{rank:>3}{flag or ' '}"  # the E/P/I flag right after the rank, in the gap
    return (
        f"{lead} {s.label or s.userid:<16} {e.shown:>6} {s.won:>4} {s.lost:>4} {s.ties:>4}   "
        f"{active:^12}  {seeking:>7}"
    ).rstrip()


def _section(title: str, rows: Sequence[Entry]) -> list[str]:
    if not rows:
        return []
    lines = ["", " " * 16 + title, " " * 16 + "=" * len(title), HEAD, RULE]
    lines += [_row(i, e) for i, e in enumerate(rows, 1)]
    return lines


def standings_text(ctx: Context, rules: Rules) -> str:
    everyone = entries(ctx, rules)
    lines: list[str] = []
    for title, flag in (("Established", "E"), ("Provisionals", "P"), ("Inactive", "I")):
        lines += _section(title, [e for e in everyone if e.flag == flag])
    if everyone:
        lines += ["", " " * 16 + "All players", " " * 16 + "=" * 11, HEAD, RULE]
        lines += [_row(i, e, e.flag) for i, e in enumerate(everyone, 1)]
    return "\n".join(lines).strip("\n") or "(no players yet)"


def ratings_table(ctx: Context, rules: Rules) -> str:
    """Both ratings side by side (Glicko-2 with its deviation, RD)."""
    rows = ratings_of_type(ctx.session, rules.name)
    if not rows:
        return ""
    lines = [
        "Rank Name             Rating Games  Glicko-2    RD",
        "---- ---------------- ------ -----  -------- -----",
    ]
    for i, (r, user) in enumerate(rows, 1):
        mark = "P" if r.games < PROVISIONAL_GAMES else " "
        lines.append(
            f"{i:>3}  {label(user):<16} {Rating(r.value, r.games).shown:>5}{mark} {r.games:>5}  "
            f"{int(r.glicko + 0.5):>8} {int(r.glicko_rd + 0.5):>5}"
        )
    lines.append("")
    lines.append("P: provisional (fewer than 20 rated games).")
    return "\n".join(lines)


def history_boards(ctx: Context, rules: Rules, users: Sequence[User]) -> list[Board]:
    """Finished boards of the game, the latest first (of the players named, if any)."""
    query = select(BoardRow).where(BoardRow.game == rules.name, BoardRow.status == "finished")
    if users:
        query = query.join(GamePlayer, col(GamePlayer.game_id) == BoardRow.id).where(
            col(GamePlayer.user_id).in_([u.id for u in users])
        )
    rows = {r.id: r for r in ctx.session.exec(query)}.values()
    ordered = sorted(rows, key=lambda r: (r.ended_at or r.last_move_at, r.saved_id), reverse=True)
    return [board_from_row(ctx, row, rules) for row in ordered]
