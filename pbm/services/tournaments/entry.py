"""A tournament made and entered: its creation with its kind, game and days, entries
before the start, and leaving (before the start the entry goes; after it, the player
withdraws)."""

from __future__ import annotations

import logging
import re
from typing import Literal

from sqlmodel import Session, select

from pbm.games import GameError, find_game
from pbm.services.accounts import consent
from pbm.services.context import Context
from pbm.services.correspondence.clocks import check_floors
from pbm.services.play.boards import rules_for
from pbm.services.play.bots import challenge_refusal
from pbm.services.tournaments.lookup import TournamentError, entry_of, require_open
from pbm.services.tournaments.results import withdraw
from pbm.store.models import User
from pbm.store.models_tournament import Tournament, TournamentEntry
from pbm.texts import phrase, prose

log = logging.getLogger(__name__)


# The words `type=` takes, and the kind each stands for ("double": a double round robin).
KIND_WORDS = {
    "roundrobin": "roundrobin",
    "rr": "roundrobin",
    "round-robin": "roundrobin",
    "double": "double",
    "swiss": "swiss",
    "knockout": "knockout",
    "ko": "knockout",
}


NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


# pbmserv's tournament boards: a reminder after 1 day, a forfeit after 7.
NAG_DAYS = 1.0


FORFEIT_DAYS = 7.0


def create(
    ctx: Context,
    name: str,
    game_word: str,
    *,
    kind: str = "roundrobin",
    rounds: int = 0,
    params: dict[str, str] | None = None,
    nag_days: float = NAG_DAYS,
    forfeit_days: float = FORFEIT_DAYS,
    creator: User | None = None,
    bots: bool = False,
) -> Tournament:
    """A tournament open for entries; `kind` is roundrobin, double, swiss or knockout;
    computer players may enter only when `bots` is true."""
    key = name.lower()
    if not NAME_PATTERN.match(key):
        raise TournamentError(prose("tournament_bad_name", name=name))
    if ctx.session.exec(select(Tournament).where(Tournament.name == key)).first() is not None:
        raise TournamentError(phrase("tournament_exists", name=name))
    kind_key = KIND_WORDS.get(kind.lower())
    if kind_key is None:
        raise TournamentError(phrase("tournament_bad_kind", kind=kind))
    try:
        rules, options = find_game(game_word)
        options.update(params or {})
        rules.new_state(**options)  # refuse bad variant options now, not at the start
    except GameError as exc:
        raise TournamentError(str(exc)) from None
    if len(rules.seats) != 2:
        raise TournamentError(phrase("tournament_two_players", game=rules.title))
    if kind_key == "swiss" and rounds < 1:
        raise TournamentError(phrase("tournament_swiss_rounds"))
    if ctx.sender:
        check_floors(ctx.config, nag_days, forfeit_days)
    if not (0 < nag_days <= forfeit_days <= 3650):
        raise TournamentError(phrase("tournament_bad_days"))
    row = Tournament(
        name=key,
        game=rules.name,
        options=dict(options),
        kind="roundrobin" if kind_key == "double" else kind_key,
        double=kind_key == "double",
        rounds=rounds if kind_key == "swiss" else 0,
        prefix=_free_prefix(ctx.session),
        nag_days=nag_days,
        forfeit_days=forfeit_days,
        bots=bots,
        created_by=creator.id if creator else None,
        created_at=ctx.now(),
    )
    ctx.session.add(row)
    ctx.session.flush()
    log.info("tournament %s created (%s, %s)", key, rules.name, row.kind)
    return row


def _free_prefix(session: Session) -> str:
    """The first unused board-name prefix: a, b, ... z, aa, ab, ..."""
    used = set(session.exec(select(Tournament.prefix)))
    letters = "abcdefghijklmnopqrstuvwxyz"
    candidates = list(letters) + [a + b for a in letters for b in letters]
    return next(p for p in candidates if p not in used)


def join(ctx: Context, t: Tournament, user: User) -> TournamentEntry:
    """Enter `user`; a bot only where the tournament takes bots and only when it plays
    the game (refused now, rather than as a drawn pairing once started)."""
    require_open(t)
    if entry_of(ctx.session, t, user) is not None:
        raise TournamentError(phrase("tournament_already_in", name=t.name, userid=user.userid))
    if user.bot and not t.bots:
        raise TournamentError(phrase("bot_tournament", userid=user.userid, name=t.name))
    refusal = challenge_refusal(ctx, user, rules_for(t.game), entered=True)
    if refusal is None and ctx.sender:
        refusal = consent.require_confirmed(ctx, user)
    if refusal is not None:
        raise TournamentError(refusal)
    entry = TournamentEntry(tournament_id=t.saved_id, user_id=user.saved_id, joined_at=ctx.now())
    ctx.session.add(entry)
    ctx.session.flush()
    return entry


def leave(ctx: Context, t: Tournament, user: User) -> str:
    """Before the start the entry goes; after it, the player withdraws (his mailed
    `tournament leave` answered where it came from). Returns which."""
    entry = entry_of(ctx.session, t, user)
    if entry is None or entry.withdrawn:
        raise TournamentError(phrase("tournament_not_in", name=t.name, userid=user.userid))
    if t.status == "open":
        ctx.session.delete(entry)
        ctx.session.flush()
        return "left"
    withdraw(ctx, t, user)
    return "withdrawn"


def may_manage(t: Tournament, user: User, action: Literal["start", "cancel"]) -> None:
    """Only the player who created a tournament by mail starts or cancels it (the admin
    uses the CLI); `action` names which, for the refusal."""
    if t.created_by != user.id:
        raise TournamentError(phrase("tournament_not_yours", name=t.name, action=action))


__all__ = [
    "FORFEIT_DAYS",
    "KIND_WORDS",
    "NAG_DAYS",
    "NAME_PATTERN",
    "create",
    "join",
    "leave",
    "may_manage",
]
