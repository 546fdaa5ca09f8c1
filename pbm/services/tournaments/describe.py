"""A tournament in words: its kind, game and progress, its pairings and standings
tables, and its champion."""

from __future__ import annotations

from collections.abc import Sequence

from sqlmodel import Session

from pbm.services.play.boards import rules_for
from pbm.services.play.bots import label
from pbm.services.tournaments.lookup import entries, pairings, table
from pbm.store.models import BoardRow
from pbm.store.models_tournament import Tournament, TournamentPairing
from pbm.texts import WIDTH, phrase
from pbm.tournaments.standings import Row


def kind_text(t: Tournament) -> str:
    if t.kind == "roundrobin":
        return phrase("tournament_kind_double" if t.double else "tournament_kind_roundrobin")
    return phrase(f"tournament_kind_{t.kind}")


def progress_text(t: Tournament) -> str:
    """A tournament's status and how far it is, truthfully: a round robin plays all its
    rounds at once (its `current_round` is the last from the start), a Swiss or
    knockout one round after the other."""
    if t.status == "running" and t.kind == "roundrobin":
        return phrase("tournament_progress_all", rounds=t.rounds)
    if t.status == "running":
        return phrase("tournament_progress_round", round=t.current_round, rounds=t.rounds)
    if t.status == "finished":
        return phrase("tournament_progress_finished", rounds=t.current_round)
    return phrase("tournament_progress_other", status=t.status)


def game_title(t: Tournament) -> str:
    return rules_for(t.game).title


def standings_text(session: Session, t: Tournament, rows: Sequence[Row[int]] | None = None) -> str:
    rows = table(session, t) if rows is None else rows
    names = _names(session, t)
    state = {e.user_id: e for e, _ in entries(session, t)}
    # As wide as the longest userid (up to 20), so the numbers stay in their columns.
    width = max([16, *(len(names[r.player]) for r in rows)])
    lines = [
        f"{'Rank':>4}  {'Player':<{width}} {'Points':>6} {'S-B':>6} {'Buchh':>6}"
        f" {'W':>3} {'D':>3} {'L':>3} {'Bye':>3}"
    ]
    for r in rows:
        entry = state[r.player]
        note = ""
        if entry.withdrawn:
            note = phrase("tournament_note_withdrawn")
        elif entry.eliminated:
            note = phrase("tournament_note_out")
        row = (
            f"{r.rank:>4}  {names[r.player]:<{width}} {r.points:>6g} {r.sonneborn_berger:>6g}"
            f" {r.buchholz:>6g} {r.wins:>3} {r.draws:>3} {r.losses:>3} {r.byes:>3}"
        )
        if note and len(row) + 2 + len(note) > WIDTH:
            lines += [row, " " * 6 + note]  # under the name, not past the mail's width
        else:
            lines.append(f"{row}  {note}" if note else row)
    return "\n".join(lines)


def pairings_text(session: Session, t: Tournament, round_: int | None = None) -> str:
    """Every pairing (of one round): board, players, result."""
    names = _names(session, t)
    boards: dict[int, str] = {}
    lines: list[str] = []
    last_round = None
    resting = _sitting_out(session, t)
    for p in pairings(session, t, round_):
        if p.round != last_round:
            _rest_lines(lines, names, resting.get(last_round or 0, []))
            if lines:
                lines.append("")
            lines.append(phrase("tournament_round_heading", round=p.round))
            last_round = p.round
        if p.game_id is not None and p.game_id not in boards:
            game = session.get(BoardRow, p.game_id)
            boards[p.game_id] = game.board if game else "?"
        board = "-" if p.game_id is None else boards[p.game_id]
        first = names.get(p.first_id, "?")
        if p.second_id is None:
            lines.append(f"  {'-':<6} {first:<16} {phrase('tournament_bye')}")
            continue
        second = names.get(p.second_id, "?")
        result = _result_text(t, p)
        lines.append(f"  {board:<6} {first:<16} {second:<16} {result}")
    _rest_lines(lines, names, resting.get(last_round or 0, []))
    if lines:
        return "\n".join(lines)
    # "No pairings yet" for round 5 of 2 (or -1) would send its reader waiting for them.
    if round_ is not None and (t.status != "open" or round_ < 1):
        return phrase("tournament_no_round", name=t.name, round=round_)
    # a tournament cancelled before its start will never have any
    return phrase("tournament_no_pairings" if t.status == "open" else "tournament_none_paired")


def _sitting_out(session: Session, t: Tournament) -> dict[int, list[int]]:
    """Round -> the entrants a round robin leaves out of it (an odd field: one a round).
    They have no pairing to show, so the pairings name them, as a Swiss names its bye."""
    if t.kind != "roundrobin":
        return {}
    field = [e.user_id for e, _ in entries(session, t)]
    playing: dict[int, set[int | None]] = {}
    for p in pairings(session, t):
        playing.setdefault(p.round, set()).update((p.first_id, p.second_id))
    return {r: [u for u in field if u not in ids] for r, ids in playing.items()}


def _rest_lines(lines: list[str], names: dict[int, str], resting: Sequence[int]) -> None:
    for user_id in resting:
        lines.append(f"  {'-':<6} {names.get(user_id, '?'):<16} {phrase('tournament_sits_out')}")


def _result_text(t: Tournament, p: TournamentPairing) -> str:
    if p.score is None:
        # A cancellation removes the boards still being played without scoring them.
        return phrase(
            "tournament_game_cancelled" if t.status == "cancelled" else "tournament_playing"
        )
    text = {1.0: "1-0", 0.5: "1/2-1/2", 0.0: "0-1"}[p.score]
    if p.how not in ("game", None):
        text += f" ({p.how})"
    return text


def champion(session: Session, t: Tournament, rows: Sequence[Row[int]]) -> str:
    names = _names(session, t)
    if t.kind == "knockout":
        alive = [e.user_id for e, _ in entries(session, t) if not e.eliminated]
        if len(alive) == 1:
            return names[alive[0]]
    return ", ".join(names[r.player] for r in rows if r.rank == 1)


def _names(session: Session, t: Tournament) -> dict[int, str]:
    """The entrants as tables and mails name them: `pbmbot1 (bot)` for a bot."""
    return {u.saved_id: label(u) for _, u in entries(session, t)}


__all__ = [
    "champion",
    "game_title",
    "kind_text",
    "pairings_text",
    "progress_text",
    "standings_text",
]
