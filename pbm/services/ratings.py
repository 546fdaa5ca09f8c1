"""Ranking of a standings table. Today: points (2 per win, 1 per tie), then wins.

The Elo/Glicko ratings of a later issue replace `rank` and add a rating column; the
callers (lists.standings, the `standings`/`ratings` commands) stay as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pbm.services.lists import Standing


def rank(rows: Sequence[Standing]) -> list[Standing]:
    return sorted(rows, key=lambda s: (-(2 * s.won + s.ties), -s.won, s.lost, s.userid.lower()))
