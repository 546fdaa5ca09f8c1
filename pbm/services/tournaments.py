"""Tournaments on the stored boards: creation and entries, seeding, rounds made into
boards, results taken from ended games (`game_ended`, a game-end handler of
pbm.services.endings), the next round started in the same transaction, withdrawals,
standings and the final mail.

Pairing itself is pure (pbm.tournaments); this module only stores and mails. The rules
players read are in docs/tournaments.md.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from sqlmodel import Session, col, select

from pbm.errors import NotFoundError, PbmError
from pbm.games import GameError, find_game
from pbm.services import consent
from pbm.services.accounts import reply_addresses
from pbm.services.boards import board_by_id, rules_for
from pbm.services.bots import challenge_refusal, label
from pbm.services.challenges import ChallengeError, create_game
from pbm.services.clocks import check_floors, days_text
from pbm.services.context import Context, Reply, ReplyKind
from pbm.services.endings import GameEnd
from pbm.services.play import abort
from pbm.services.timeouts import forfeit
from pbm.store import queries
from pbm.store.models import EndReason, Game, User
from pbm.store.models_correspondence import PlayerRating
from pbm.store.models_tournament import Tournament, TournamentEntry, TournamentPairing
from pbm.texts import phrase, render
from pbm.tournaments import knockout, roundrobin, swiss
from pbm.tournaments.standings import Result, Row, standings

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


class TournamentError(PbmError):
    """A refused tournament request."""


# -- reading -------------------------------------------------------------------------


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


def pairings(session: Session, t: Tournament, round_: int | None = None) -> list[TournamentPairing]:
    query = select(TournamentPairing).where(TournamentPairing.tournament_id == t.id)
    if round_ is not None:
        query = query.where(TournamentPairing.round == round_)
    order = (col(TournamentPairing.round), col(TournamentPairing.slot), col(TournamentPairing.leg))
    return list(session.exec(query.order_by(*order)))


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


# -- creating and entering -------------------------------------------------------------


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
        raise TournamentError(phrase("tournament_bad_name", name=name))
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


def _open(t: Tournament) -> None:
    if t.status != "open":
        raise TournamentError(phrase("tournament_not_open", name=t.name, status=t.status))


def join(ctx: Context, t: Tournament, user: User) -> TournamentEntry:
    """Enter `user`; a bot only where the tournament takes bots and only when it plays
    the game (refused now, rather than as a drawn pairing once started)."""
    _open(t)
    if _entry(ctx.session, t, user) is not None:
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


def _entry(session: Session, t: Tournament, user: User) -> TournamentEntry | None:
    query = select(TournamentEntry).where(
        TournamentEntry.tournament_id == t.id, TournamentEntry.user_id == user.id
    )
    return session.exec(query).first()


def leave(ctx: Context, t: Tournament, user: User) -> str:
    """Before the start the entry goes; after it, the player withdraws. Returns which."""
    entry = _entry(ctx.session, t, user)
    if entry is None or entry.withdrawn:
        raise TournamentError(phrase("tournament_not_in", name=t.name, userid=user.userid))
    if t.status == "open":
        ctx.session.delete(entry)
        ctx.session.flush()
        return "left"
    withdraw(ctx, t, user)
    return "withdrawn"


def may_manage(t: Tournament, user: User) -> None:
    """Only the player who created a tournament by mail starts it (the admin uses the CLI)."""
    if t.created_by != user.id:
        raise TournamentError(phrase("tournament_not_yours", name=t.name))


# -- starting and running -----------------------------------------------------------


def start(ctx: Context, t: Tournament) -> None:
    """Seed the entrants (rating, then entry order) and start the first round (a round
    robin starts every game at once)."""
    _open(t)
    field = entries(ctx.session, t)
    if len(field) < 2:
        raise TournamentError(phrase("tournament_too_few", name=t.name))
    if t.kind == "swiss" and t.rounds > len(field) - 1:
        raise TournamentError(
            phrase("tournament_too_many_rounds", rounds=t.rounds, count=len(field))
        )
    rating = _ratings(ctx.session, t, [u for _, u in field])
    ordered = sorted(field, key=lambda eu: (-rating[eu[1].saved_id], eu[0].saved_id))
    for seed, (entry, _) in enumerate(ordered, 1):
        entry.seed = seed
        ctx.session.add(entry)
    t.status = "running"
    t.started_at = ctx.now()
    ctx.session.add(t)
    ctx.session.flush()
    seeded = [u.id for _, u in ordered]
    if t.kind == "roundrobin":
        schedule = roundrobin.round_robin(seeded, double=t.double)
        t.rounds = len(schedule)
        for number, games in enumerate(schedule, 1):
            # An odd field: the player paired with None sits that round out, scoring nothing.
            real = [(a, b) for a, b in games if b is not None]
            _add_round(ctx, t, number, real)
        t.current_round = t.rounds
        _announce_round(ctx, t, None)
    elif t.kind == "swiss":
        _pair_swiss(ctx, t)
    else:
        size = 1
        while size < len(seeded):
            size *= 2
        t.rounds = size.bit_length() - 1
        _add_round(ctx, t, 1, knockout.first_round(seeded))
        t.current_round = 1
        _announce_round(ctx, t, 1)
    ctx.session.add(t)
    ctx.session.flush()
    log.info("tournament %s started with %d players", t.name, len(field))
    _advance(ctx, t)


def _ratings(session: Session, t: Tournament, users: Sequence[User]) -> dict[int, float]:
    ids = [u.id for u in users]
    query = select(PlayerRating).where(
        PlayerRating.game == t.game, col(PlayerRating.user_id).in_(ids)
    )
    found = {r.user_id: r.value for r in session.exec(query)}
    return {u.saved_id: found.get(u.saved_id, 1600.0) for u in users}


def _withdrawn(session: Session, t: Tournament) -> set[int]:
    return {e.user_id for e, _ in entries(session, t) if e.withdrawn}


def _add_round(
    ctx: Context, t: Tournament, number: int, games: Sequence[tuple[object, object | None]]
) -> None:
    """Store a round's pairings and start their boards; byes and withdrawn players'
    pairings are scored at once."""
    gone = _withdrawn(ctx.session, t)
    for slot, (first, second) in enumerate(games, 1):
        assert isinstance(first, int) or first is None
        if first is None:  # a knockout slot whose both sides are byes cannot happen
            continue
        pairing = TournamentPairing(
            tournament_id=t.saved_id,
            round=number,
            slot=slot,
            first_id=first,
            second_id=second if isinstance(second, int) else None,
        )
        _settle_or_play(ctx, t, pairing, gone)


def _settle_or_play(
    ctx: Context, t: Tournament, pairing: TournamentPairing, gone: set[int]
) -> None:
    if pairing.second_id is None:
        pairing.score, pairing.how = 1.0, "bye"
    elif pairing.first_id in gone or pairing.second_id in gone:
        both = pairing.first_id in gone and pairing.second_id in gone
        pairing.score = 0.5 if both else (0.0 if pairing.first_id in gone else 1.0)
        pairing.how = "withdrawal"
    ctx.session.add(pairing)
    ctx.session.flush()
    if pairing.score is None:
        _make_board(ctx, t, pairing)


def _make_board(ctx: Context, t: Tournament, pairing: TournamentPairing) -> None:
    rules = rules_for(t.game)
    first = ctx.session.get(User, pairing.first_id)
    second = ctx.session.get(User, pairing.second_id)
    assert first is not None and second is not None
    while True:
        t.boards_made += 1
        name = f"{t.prefix}{100 + t.boards_made}"
        if queries.game_by_board(ctx.session, rules.name, name) is None:
            break
    ctx.session.add(t)
    options = {"nagtime": _days(t.nag_days), "forfeittime": _days(t.forfeit_days)}
    try:
        board = create_game(
            ctx,
            rules,
            [first.userid, second.userid],
            params=dict(t.options),
            server_options=options,
            comment=phrase("tournament_board_comment", name=t.name, round=pairing.round),
            comment_by=ctx.config.server_name,
            board_name=name,
            entered=True,
        )
    except ChallengeError as exc:
        # An entrant who refuses all challenges (signed off, limit 0) cannot get his
        # board: the pairing is scored as a draw and the admin sees why in the log.
        log.warning("tournament %s: no board for %s-%s: %s", t.name, first, second, exc)
        pairing.score, pairing.how = 0.5, "refused"
    else:
        pairing.game_id = board.id
    ctx.session.add(pairing)
    ctx.session.flush()


def _days(value: float) -> str:
    return f"{value:g}"


def _pair_swiss(ctx: Context, t: Tournament) -> bool:
    """Pair the next Swiss round; False when no pairing avoids a repeat."""
    field = [(e, u) for e, u in entries(ctx.session, t) if not e.withdrawn]
    done = pairings(ctx.session, t)
    results = _results(done)
    ids = [u.saved_id for _, u in field]
    table = {r.player: r.points for r in standings(ids, results)}
    colours: dict[int, str] = {u.saved_id: "" for _, u in field}
    opponents: dict[int, set[int]] = {u.saved_id: set() for _, u in field}
    for p in done:
        if p.first_id in colours:
            colours[p.first_id] += "W" if p.second_id is not None else "-"
        if p.second_id is not None and p.second_id in colours:
            colours[p.second_id] += "B"
        if p.second_id is not None:
            opponents.setdefault(p.first_id, set()).add(p.second_id)
            opponents.setdefault(p.second_id, set()).add(p.first_id)
    players = [
        swiss.SwissPlayer(
            id=u.id,
            points=table.get(u.saved_id, 0.0),
            rating=float(len(field) - e.seed),  # the seeding order decides within a score
            colours=colours[u.saved_id],
            opponents=frozenset(opponents.get(u.saved_id, set())),
            had_bye="-" in colours[u.saved_id],
        )
        for e, u in field
    ]
    try:
        paired = swiss.pair_round(players)
    except swiss.PairingError:
        return False
    games: list[tuple[object, object | None]] = list(paired.pairs)
    if paired.bye is not None:
        games.append((paired.bye, None))
    t.current_round += 1
    ctx.session.add(t)
    _add_round(ctx, t, t.current_round, games)
    _announce_round(ctx, t, t.current_round)
    return True


def _results(done: Sequence[TournamentPairing]) -> list[Result[int]]:
    return [Result(p.first_id, p.second_id, p.score) for p in done if p.score is not None]


# -- results ----------------------------------------------------------------------------


def game_ended(ctx: Context, end: GameEnd) -> None:
    """A game-end handler (pbm.services.endings): a tournament board that ended (finished
    or removed) records its result and starts what comes next. `end.loser_id` names a
    player who declined the board (a resignation before everyone moved): he loses it."""
    board, loser_id = end.board, end.loser_id
    query = select(TournamentPairing).where(TournamentPairing.game_id == board.id)
    pairing = ctx.session.exec(query).first()
    if pairing is None or pairing.score is not None:
        return
    # Locked, so two boards of a round ending at once cannot both miss the round's end
    # (SQLite's BEGIN IMMEDIATE serialises anyway; other databases need the row lock).
    query_t = select(Tournament).where(Tournament.id == pairing.tournament_id).with_for_update()
    t = ctx.session.exec(query_t).first()
    if t is None or t.status != "running":
        return
    row = board.row
    if loser_id is not None:
        pairing.score, pairing.how = (0.0 if loser_id == pairing.first_id else 1.0), "game"
    elif row.status == "removed":
        pairing.score, pairing.how = 0.5, "aborted"
    elif row.result == "won" and row.winner is not None:
        winner = board.players[row.winner][1].id
        pairing.score, pairing.how = (1.0 if winner == pairing.first_id else 0.0), "game"
    else:
        pairing.score, pairing.how = 0.5, "game"
    ctx.session.add(pairing)
    ctx.session.flush()
    _advance(ctx, t)


def _advance(ctx: Context, t: Tournament) -> None:
    """Start the next round (or end the tournament) while the current one is complete."""
    while t.status == "running":
        # A round robin's games all run at once: the tournament waits for every one.
        whole = t.kind == "roundrobin"
        current = pairings(ctx.session, t, None if whole else t.current_round)
        if t.kind == "knockout" and _replays(ctx, t, current):
            continue  # a drawn game is replayed at once, not at the end of the round
        if any(p.score is None for p in current):
            return
        if t.kind == "roundrobin":
            _finish(ctx, t)
        elif t.kind == "swiss":
            if t.current_round >= t.rounds or not _pair_swiss(ctx, t):
                _finish(ctx, t)
        elif not _knockout_step(ctx, t, current):
            return


def _seed_of(session: Session, t: Tournament) -> dict[int, int]:
    return {e.user_id: e.seed for e, _ in entries(session, t)}


def match_winner(legs: Sequence[TournamentPairing], seed: dict[int, int]) -> int | None:
    """The winner of a knockout match, None while it is undecided. A drawn game is
    replayed once with colours reversed; if the replay is drawn too, the higher seed
    advances."""
    last = legs[-1]
    if last.score is None:
        return None
    if last.second_id is None:
        return last.first_id
    if last.score == 1.0:
        return last.first_id
    if last.score == 0.0:
        return last.second_id
    if last.leg == 1 and last.how in ("game", "aborted"):
        return None  # a replay is due
    return min(last.first_id, last.second_id, key=lambda u: seed.get(u, 0))


def _slots(current: Sequence[TournamentPairing]) -> dict[int, list[TournamentPairing]]:
    slots: dict[int, list[TournamentPairing]] = {}
    for p in current:
        slots.setdefault(p.slot, []).append(p)
    return dict(sorted(slots.items()))


def _replays(ctx: Context, t: Tournament, current: Sequence[TournamentPairing]) -> bool:
    """Start the replay of every match whose last game was drawn; whether any was."""
    seed = _seed_of(ctx.session, t)
    gone = _withdrawn(ctx.session, t)
    made = False
    for slot, legs in _slots(current).items():
        last = legs[-1]
        if last.second_id is None or last.score is None or match_winner(legs, seed) is not None:
            continue  # a bye, a game still running, or a match decided
        replay = TournamentPairing(
            tournament_id=t.saved_id,
            round=t.current_round,
            slot=slot,
            leg=last.leg + 1,
            first_id=last.second_id,  # colours reversed
            second_id=last.first_id,
        )
        _settle_or_play(ctx, t, replay, gone)
        made = True
    return made


def _knockout_step(ctx: Context, t: Tournament, current: Sequence[TournamentPairing]) -> bool:
    """A complete round: eliminate the losers, then the next round or the end."""
    seed = _seed_of(ctx.session, t)
    winners: list[int] = []
    for legs in _slots(current).values():
        winner = match_winner(legs, seed)
        assert winner is not None  # every game is scored and replays are made first
        winners.append(winner)
        for p in legs:
            for u in (p.first_id, p.second_id):
                if u is not None and u != winner:
                    _eliminate(ctx.session, t, u)
    if len(winners) == 1:
        _finish(ctx, t)
        return True
    t.current_round += 1
    ctx.session.add(t)
    _add_round(ctx, t, t.current_round, knockout.next_round(winners))
    _announce_round(ctx, t, t.current_round)
    return True


def _eliminate(session: Session, t: Tournament, user_id: int) -> None:
    query = select(TournamentEntry).where(
        TournamentEntry.tournament_id == t.id, TournamentEntry.user_id == user_id
    )
    entry = session.exec(query).first()
    if entry is not None and not entry.eliminated:
        entry.eliminated = True
        session.add(entry)


def withdraw(ctx: Context, t: Tournament, user: User) -> None:
    """The player is not paired again; his boards still being played are forfeited."""
    if t.status != "running":
        raise TournamentError(phrase("tournament_not_running", name=t.name))
    entry = _entry(ctx.session, t, user)
    if entry is None or entry.withdrawn:
        raise TournamentError(phrase("tournament_not_in", name=t.name, userid=user.userid))
    entry.withdrawn = True
    ctx.session.add(entry)
    ctx.session.flush()
    reason = phrase("tournament_withdrew", userid=user.userid, name=t.name)
    for p in pairings(ctx.session, t):
        if p.score is not None or p.game_id is None or user.id not in (p.first_id, p.second_id):
            continue
        board = board_by_id(ctx, p.game_id)
        if not board.active:
            continue
        index = board.index_of(user.id)
        assert index is not None
        forfeit(
            ctx, board, index, reason, EndReason.WITHDREW
        )  # ends the board: game_ended scores it
    _tell(
        ctx,
        t,
        [user],
        phrase("subject_tournament", name=t.name),
        phrase("tournament_withdrawn", name=t.name, userid=user.userid) + "\n",
    )
    # Waiting pairings of the round may now be settled (a knockout bye-winner withdrawn).
    if t.status == "running":
        _advance(ctx, t)


def cancel(ctx: Context, t: Tournament) -> None:
    """Stop a tournament: its boards still being played are removed unrated."""
    if t.status in ("finished", "cancelled"):
        raise TournamentError(phrase("tournament_over", name=t.name))
    t.status = "cancelled"
    t.ended_at = ctx.now()
    ctx.session.add(t)
    ctx.session.flush()
    for p in pairings(ctx.session, t):
        if p.game_id is not None and p.score is None:
            board = board_by_id(ctx, p.game_id)
            if board.active:
                abort(ctx, board, phrase("tournament_cancelled", name=t.name))
    _tell(
        ctx,
        t,
        [u for _, u in entries(ctx.session, t)],
        phrase("subject_tournament", name=t.name),
        phrase("tournament_cancelled", name=t.name) + "\n",
    )


def _finish(ctx: Context, t: Tournament) -> None:
    t.status = "finished"
    t.ended_at = ctx.now()
    ctx.session.add(t)
    ctx.session.flush()
    rows = table(ctx.session, t)
    winner = champion(ctx.session, t, rows)
    body = render(
        "tournament_final",
        tournament=t.name,
        game=game_title(t),
        kind=kind_text(t),
        winner=winner,
        standings=standings_text(ctx.session, t, rows),
        signature=ctx.config.server_name,
    )
    people = [u for _, u in entries(ctx.session, t)]
    _tell(ctx, t, people, phrase("subject_tournament_final", name=t.name, winner=winner), body)
    log.info("tournament %s finished: %s", t.name, winner)


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


def _tell(ctx: Context, t: Tournament, people: Sequence[User], subject: str, body: str) -> None:
    for user in people:
        to = reply_addresses(ctx, user)
        if to:
            ctx.reply(
                Reply(
                    to=to,
                    subject=subject,
                    body=body,
                    kind=ReplyKind.TOURNAMENT,
                    user_id=user.id,
                    to_sender=ctx.sender in to,
                    tournament=t.name,
                )
            )


def _announce_round(ctx: Context, t: Tournament, number: int | None) -> None:
    people = [u for e, u in entries(ctx.session, t) if not e.withdrawn and not e.eliminated]
    body = render(
        "tournament_round",
        tournament=t.name,
        game=game_title(t),
        kind=kind_text(t),
        round=phrase("tournament_all_rounds")
        if number is None
        else phrase("tournament_round_of", round=number, rounds=t.rounds),
        pairings=pairings_text(ctx.session, t, number),
        nag=days_text(t.nag_days),
        forfeit=days_text(t.forfeit_days),
        signature=ctx.config.server_name,
    )
    subject = phrase(
        "subject_tournament_round",
        name=t.name,
        round="1-" + str(t.rounds) if number is None else number,
    )
    _tell(ctx, t, people, subject, body)


# -- tables ---------------------------------------------------------------------------


def table(session: Session, t: Tournament) -> list[Row[int]]:
    field = [u.saved_id for _, u in entries(session, t)]
    return standings(field, _results(pairings(session, t)))


def standings_text(session: Session, t: Tournament, rows: Sequence[Row[int]] | None = None) -> str:
    rows = table(session, t) if rows is None else rows
    names = _names(session, t)
    state = {e.user_id: e for e, _ in entries(session, t)}
    lines = [
        f"{'Rank':>4}  {'Player':<16} {'Points':>6} {'S-B':>6} {'Buchh':>6}"
        f" {'W':>3} {'D':>3} {'L':>3} {'Bye':>3}"
    ]
    for r in rows:
        entry = state[r.player]
        note = ""
        if entry.withdrawn:
            note = "  " + phrase("tournament_note_withdrawn")
        elif entry.eliminated:
            note = "  " + phrase("tournament_note_out")
        lines.append(
            f"{r.rank:>4}  {names[r.player]:<16} {r.points:>6g} {r.sonneborn_berger:>6g}"
            f" {r.buchholz:>6g} {r.wins:>3} {r.draws:>3} {r.losses:>3} {r.byes:>3}{note}"
        )
    return "\n".join(lines)


def pairings_text(session: Session, t: Tournament, round_: int | None = None) -> str:
    """Every pairing (of one round): board, players, result."""
    names = _names(session, t)
    boards: dict[int, str] = {}
    lines: list[str] = []
    last_round = None
    for p in pairings(session, t, round_):
        if p.round != last_round:
            if lines:
                lines.append("")
            lines.append(phrase("tournament_round_heading", round=p.round))
            last_round = p.round
        if p.game_id is not None and p.game_id not in boards:
            game = session.get(Game, p.game_id)
            boards[p.game_id] = game.board if game else "?"
        board = "-" if p.game_id is None else boards[p.game_id]
        first = names.get(p.first_id, "?")
        if p.second_id is None:
            lines.append(f"  {'-':<6} {first:<16} {phrase('tournament_bye')}")
            continue
        second = names.get(p.second_id, "?")
        result = _result_text(p)
        lines.append(f"  {board:<6} {first:<16} {second:<16} {result}")
    return "\n".join(lines) if lines else phrase("tournament_no_pairings")


def _result_text(p: TournamentPairing) -> str:
    if p.score is None:
        return phrase("tournament_playing")
    text = {1.0: "1-0", 0.5: "1/2-1/2", 0.0: "0-1"}[p.score]
    if p.how not in ("game", None):
        text += f" ({p.how})"
    return text
