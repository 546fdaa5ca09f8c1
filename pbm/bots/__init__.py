"""Computer players: the built-in engine for every game (`choose`) and outside engines
over a line protocol (`pbm.bots.external`). A pure layer: it knows only `pbm.games`."""

from __future__ import annotations

from pbm.bots.engine import (
    DRAWN,
    LEVELS,
    LOST,
    UNCLEAR,
    WON,
    Decision,
    choose,
    seed_for,
    tactics_for,
)

__all__ = [
    "DRAWN",
    "LEVELS",
    "LOST",
    "UNCLEAR",
    "WON",
    "Decision",
    "choose",
    "seed_for",
    "tactics_for",
]
