"""A tournament's rows read back: the tournament by name, its entrants, its pairings,
its results and its standings rows; and the refusal its requests raise."""

from __future__ import annotations

from collections.abc import Sequence

from sqlmodel import Session, col, select

from pbm.errors import NotFoundError, PbmError
from pbm.store.models import User
from pbm.store.models_tournament import Tournament, TournamentEntry, TournamentPairing
from pbm.texts import phrase
from pbm.tournaments import knockout
from pbm.tournaments.standings import Result, Row, standings


class TournamentError(PbmError):
    """A refused tournament request."""


def find(session: Session, name: str) -> Tournament:
    row = session.exec(select(Tournament).where(Tournament.name == name.lower())).first()
    if row is None:
        raise NotFoundError(phrase("tournament_unknown", name=name))
    return row


def all_tournaments(session: Session) -> list[Tournament]:
    return list(session.exec(select(Tournament).order_by(col(Tournament.id))))


def entries(session: Session, t: Tournament) -> list[tuple[TournamentEntry, User]]:
    """Entrants in seeding order (join order before the start)."""
    query = (
        select(TournamentEntry, User)
        .where(TournamentEntry.tournament_id == t.id, TournamentEntry.user_id == User.id)
        .order_by(col(TournamentEntry.seed), col(TournamentEntry.id))
    )
    return list(session.exec(query).all())


def organiser(session: Session, t: Tournament) -> User | None:
    """The player who created the tournament by mail (None for one the admin made)."""
    return None if t.created_by is None else session.get(User, t.created_by)


def entry_of(session: Session, t: Tournament, user: User) -> TournamentEntry | None:
    query = select(TournamentEntry).where(
        TournamentEntry.tournament_id == t.id, TournamentEntry.user_id == user.id
    )
    return session.exec(query).first()


def pairings(session: Session, t: Tournament, round_: int | None = None) -> list[TournamentPairing]:
    query = select(TournamentPairing).where(TournamentPairing.tournament_id == t.id)
    if round_ is not None:
        query = query.where(TournamentPairing.round == round_)
    order = (col(TournamentPairing.round), col(TournamentPairing.slot), col(TournamentPairing.leg))
    return list(session.exec(query.order_by(*order)))


def pairing_of_board(session: Session, game_id: int) -> TournamentPairing | None:
    """The tournament pairing played on the board, None for a board of no tournament."""
    query = select(TournamentPairing).where(TournamentPairing.game_id == game_id)
    return session.exec(query).first()


def withdrawn_ids(session: Session, t: Tournament) -> set[int]:
    return {e.user_id for e, _ in entries(session, t) if e.withdrawn}


def results_of(done: Sequence[TournamentPairing]) -> list[Result[int]]:
    return [Result(p.first_id, p.second_id, p.score) for p in done if p.score is not None]


def table(session: Session, t: Tournament) -> list[Row[int]]:
    field = [u.saved_id for _, u in entries(session, t)]
    played = pairings(session, t)
    rows = standings(field, results_of(played))
    if t.kind != "knockout":
        return rows
    last = dict.fromkeys(field, 0)
    for p in played:
        for user in (p.first_id, p.second_id):
            if user is not None:
                last[user] = max(last.get(user, 0), p.round)
    still_in = {e.user_id: not (e.eliminated or e.withdrawn) for e, _ in entries(session, t)}
    return knockout.by_round_reached(rows, {u: (last[u], still_in[u]) for u in field})


def require_open(t: Tournament) -> None:
    if t.status != "open":
        raise TournamentError(phrase("tournament_not_open", name=t.name, status=t.status))


__all__ = [
    "TournamentError",
    "all_tournaments",
    "entries",
    "entry_of",
    "find",
    "organiser",
    "pairing_of_board",
    "pairings",
    "require_open",
    "results_of",
    "table",
    "withdrawn_ids",
]
