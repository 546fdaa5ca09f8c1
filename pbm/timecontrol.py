"""Correspondence time: board-age nag/forfeit rules, a Fischer-style bank, weekend-free
counting and vacation pauses, as pure functions of instants (no wall clock here).

pbmserv's default is board age: a reminder when the player to move has not moved for
`nag_days`, a forfeit at `forfeit_days` (7 and 21; tournament boards 1 and 7). The
Fischer clock is pbm's option in the style of modern correspondence sites: each player
starts with `initial_days`, gains `increment_days` per move, never banks more than
`max_days`, and loses when the bank runs out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

DAY = timedelta(days=1)

# Vacation: days accrue at 30 a year, up to a bank of 60 (pbm's documented rate).
VACATION_DAYS_PER_YEAR = 30.0
VACATION_CAP_DAYS = 60.0


@dataclass(frozen=True, slots=True)
class Fischer:
    initial_days: float = 14.0
    increment_days: float = 3.0
    max_days: float = 30.0


@dataclass(frozen=True, slots=True)
class TimeControl:
    nag_days: float = 7.0
    forfeit_days: float = 21.0
    total_days: float | None = None  # pbmserv --totaltime: cap on a player's thinking time
    fischer: Fischer | None = None
    weekends_free: bool = False

    @classmethod
    def tournament_default(cls) -> TimeControl:
        return cls(nag_days=1.0, forfeit_days=7.0)


def _weekend_overlap(start: datetime, end: datetime) -> timedelta:
    """Time between start and end that falls on a Saturday or Sunday (in the instants'
    own time zone)."""
    total = timedelta()
    day = start.replace(hour=0, minute=0, second=0, microsecond=0)
    while day < end:
        nxt = day + DAY
        if day.weekday() >= 5:
            total += min(end, nxt) - max(start, day)
        day = nxt
    return total


def chargeable(
    start: datetime,
    end: datetime,
    *,
    weekends_free: bool = False,
    pauses: Iterable[tuple[datetime, datetime | None]] = (),
) -> timedelta:
    """Clock time between `start` and `end` that counts against a player: weekends
    (when free) and vacation pauses (an open pause runs to `end`) are left out."""
    if end <= start:
        return timedelta()
    # Merge pauses first so a weekend inside a vacation is not subtracted twice.
    spans = sorted((max(a, start), min(b or end, end)) for a, b in pauses)
    merged: list[list[datetime]] = []
    for a, b in spans:
        if b <= a:
            continue
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    free = sum((b - a for a, b in merged), timedelta())
    if weekends_free:
        free += _weekend_overlap(start, end)
        for a, b in merged:
            free -= _weekend_overlap(a, b)
    return end - start - free


def fischer_bank_after_move(bank: timedelta, used: timedelta, fischer: Fischer) -> timedelta:
    """The bank after a move that took `used` of it: spend, add the increment, cap."""
    left = bank - used
    if left <= timedelta():
        return timedelta()
    return min(left + timedelta(days=fischer.increment_days), timedelta(days=fischer.max_days))


def vacation_accrued(bank_days: float, since: datetime, now: datetime) -> float:
    """A player's vacation bank after accruing from `since` to `now` at the documented rate."""
    earned = (now - since) / timedelta(days=365) * VACATION_DAYS_PER_YEAR
    return min(VACATION_CAP_DAYS, bank_days + max(0.0, earned))
