"""Vacation: a bank of days that starts at the configured allowance (`[vacation]
start_days`, the `allowance` of these functions) and accrues at pbm.timecontrol's
documented rate (30 a year, at most 60) from the day the account was made; while a
vacation runs every clock of the player stops (clocks.pauses), and no days accrue. A
vacation that uses up the bank ends by itself at the instant it ran out (the clocks count
from then, whenever a job notices).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import bindparam, func
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from pbm.errors import PbmError
from pbm.store import queries
from pbm.store.models import User
from pbm.store.models_correspondence import Vacation, VacationSpan
from pbm.texts import phrase
from pbm.timecontrol import (
    VACATION_CAP_DAYS,
    VACATION_DAYS_PER_YEAR,
    vacation_accrued,
)

DAY = timedelta(days=1)
MINIMUM_DAYS = 1 / 24  # a vacation shorter than an hour is no vacation


def account(session: Session, user: User, now: datetime, *, allowance: float) -> Vacation:
    """The player's vacation row, accrued up to `now` (not while a vacation runs); a new
    one starts with `allowance` days."""
    row = session.exec(select(Vacation).where(Vacation.user_id == user.id)).first()
    if row is None:
        row = Vacation(user_id=user.saved_id, bank_days=allowance, accrued_at=user.created_at)
    if row.started_at is None and now > row.accrued_at:
        row.bank_days = vacation_accrued(row.bank_days, row.accrued_at, now)
        row.accrued_at = now
    session.add(row)
    return row


def running_end(row: Vacation) -> datetime | None:
    """When the running vacation ends by itself (its bank runs out)."""
    return _end(row.started_at, row.bank_days)


def _end(started_at: datetime | None, bank_days: float) -> datetime | None:
    return None if started_at is None else started_at + timedelta(days=bank_days)


def running(session: Session, user: User, now: datetime) -> Vacation | None:
    """The vacation row of `user` when a vacation of his runs at `now` (read only:
    nothing accrues), else None."""
    row = session.exec(select(Vacation).where(Vacation.user_id == user.id)).first()
    end = running_end(row) if row is not None else None
    return row if end is not None and now < end else None


_VACATION = Vacation.__table__.c  # type: ignore[attr-defined]
# Two columns, not the entity: every move asks this, mostly of a player not away.
_BANK_OF = sa_select(_VACATION.started_at, _VACATION.bank_days).where(
    _VACATION.user_id == bindparam("user_id")
)


def on_vacation(session: Session, user: User, now: datetime) -> bool:
    """Whether a vacation of `user` runs at `now`."""
    found = queries.core_rows(session, _BANK_OF, {"user_id": user.id}).first()
    end = None if found is None else _end(*found)
    return end is not None and now < end


def left_days(session: Session, user: User, now: datetime, *, allowance: float) -> float:
    row = account(session, user, now, allowance=allowance)
    if row.started_at is None:
        return row.bank_days
    return max(0.0, row.bank_days - (now - row.started_at) / DAY)


def _open_span(session: Session, user_id: int) -> VacationSpan | None:
    query = select(VacationSpan).where(
        VacationSpan.user_id == user_id, col(VacationSpan.ended_at).is_(None)
    )
    return session.exec(query).first()


def start(session: Session, user: User, now: datetime, *, allowance: float) -> float:
    """Start a vacation now; returns the days banked."""
    row = account(session, user, now, allowance=allowance)
    if row.started_at is not None:
        raise PbmError(phrase("vacation_already"))
    if row.bank_days < MINIMUM_DAYS:
        raise PbmError(_empty(session, user, row.bank_days, now))
    row.started_at = now
    session.add(row)
    session.add(VacationSpan(user_id=user.saved_id, started_at=now))
    session.flush()
    return row.bank_days


def _empty(session: Session, user: User, bank_days: float, now: datetime) -> str:
    """Why no vacation can start: the days were used up, or none have accrued yet (an
    account made with no allowance), and when a whole day will be banked."""
    whole_day = now + (1.0 - bank_days) / VACATION_DAYS_PER_YEAR * timedelta(days=365)
    taken = select(VacationSpan.id).where(VacationSpan.user_id == user.id)
    used = session.exec(taken).first() is not None
    return phrase(
        "vacation_empty" if used else "vacation_none_yet",
        rate=f"{VACATION_DAYS_PER_YEAR:g}",
        cap=f"{VACATION_CAP_DAYS:g}",
        date=f"{whole_day:%Y-%m-%d}",
    )


def grant(session: Session, user: User, now: datetime, days: float, *, allowance: float) -> float:
    """Add `days` to the player's bank (at most the cap is banked); returns the days now
    banked."""
    row = account(session, user, now, allowance=allowance)
    row.bank_days = min(VACATION_CAP_DAYS, row.bank_days + days)
    session.add(row)
    session.flush()
    return row.bank_days


def stop(session: Session, user: User, now: datetime, *, allowance: float) -> float:
    """End the running vacation at `now` (or where its bank ran out); returns days used."""
    row = account(session, user, now, allowance=allowance)
    end = running_end(row)
    if row.started_at is None or end is None:
        raise PbmError(phrase("vacation_not_on"))
    end = min(end, now)
    used = (end - row.started_at) / DAY
    span = _open_span(session, user.saved_id)
    if span is not None:
        span.ended_at = end
        session.add(span)
    row.bank_days = max(0.0, row.bank_days - used)
    row.started_at = None
    row.accrued_at = end
    session.add(row)
    session.flush()
    return used


_SPAN = VacationSpan.__table__.c  # type: ignore[attr-defined]
# Two columns, not the entities: every move asks this, mostly to find nothing.
_SPANS_OF = sa_select(_SPAN.started_at, _SPAN.ended_at).where(_SPAN.user_id == bindparam("user_id"))


def clipped_spans(session: Session, user_id: int) -> list[tuple[datetime, datetime | None]]:
    """The player's vacations for the clocks: a running one ends where its bank runs out,
    so a clock is exact even before a job has closed that vacation."""
    rows = queries.core_rows(session, _SPANS_OF, {"user_id": user_id})
    spans = [(started, ended) for started, ended in rows]
    if not any(ended is None for _, ended in spans):
        return spans
    row = session.exec(select(Vacation).where(Vacation.user_id == user_id)).first()
    end = running_end(row) if row is not None else None
    return [(started, ended or end) for started, ended in spans]


_CHANGES_OF = sa_select(
    func.count().filter(_SPAN.started_at >= bindparam("since")),
    func.count().filter(_SPAN.ended_at >= bindparam("since")),
).where(_SPAN.user_id == bindparam("user_id"))


def span_changes(session: Session, user_id: int, since: datetime) -> int:
    """How often the player's vacations changed since `since`, each start and each end
    once: a vacation that starts or ends moves his deadlines without a move."""
    params = {"user_id": user_id, "since": since}
    started, ended = queries.core_rows(session, _CHANGES_OF, params).one()
    return int(started) + int(ended)


def split_running(session: Session, now: datetime) -> tuple[list[int], list[int]]:
    """The users with a vacation started: those it still runs for at `now`, and those
    whose bank has run out by then (their vacation is to be ended), in one read."""
    query = select(Vacation).where(col(Vacation.started_at).is_not(None))
    away: list[int] = []
    exhausted: list[int] = []
    for row in session.exec(query):
        end = running_end(row)
        if end is not None:
            (away if end > now else exhausted).append(row.user_id)
    return away, exhausted
