"""A tournament's rounds: the seeding and the first round at its start, each round's
pairings made into boards (byes and withdrawn players scored at once), and `advance`,
which starts the next round, a knockout replay or the end, while a round is complete.

Pairing itself is pure (pbm.tournaments); this module only stores."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sqlmodel import Session, col, select

from pbm.services.context import Context
from pbm.services.play.boards import rules_for
from pbm.services.play.challenges import ChallengeError, NewBoard, create_game
from pbm.services.tournaments.describe import champion, game_title, kind_text, standings_text
from pbm.services.tournaments.lookup import (
    TournamentError,
    entries,
    pairings,
    require_open,
    results_of,
    table,
    withdrawn_ids,
)
from pbm.services.tournaments.notices import (
    announce_replay,
    announce_round,
    tell,
    with_organiser,
)
from pbm.store import queries
from pbm.store.models import BoardRow, User
from pbm.store.models_correspondence import PlayerRating
from pbm.store.models_tournament import Tournament, TournamentEntry, TournamentPairing
from pbm.texts import phrase, render
from pbm.tournaments import knockout, roundrobin, swiss
from pbm.tournaments.standings import standings

log = logging.getLogger(__name__)


def start(ctx: Context, t: Tournament) -> None:
    """Seed the entrants (rating, then entry order) and start the first round (a round
    robin starts every game at once)."""
    if t.status in ("running", "finished"):  # "entries are closed" answered another question
        raise TournamentError(phrase("tournament_started_already", name=t.name, status=t.status))
    require_open(t)
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
        before = len(ctx.replies)
        for number, games in enumerate(schedule, 1):
            # An odd field: the player paired with None sits that round out, scoring nothing.
            real = [(a, b) for a, b in games if b is not None]
            _add_round(ctx, t, number, real)
        t.current_round = t.rounds
        announce_round(ctx, t, None, before)
    elif t.kind == "swiss":
        _pair_swiss(ctx, t)
    else:
        size = 1
        while size < len(seeded):
            size *= 2
        t.rounds = size.bit_length() - 1
        before = len(ctx.replies)
        _add_round(ctx, t, 1, knockout.first_round(seeded))
        t.current_round = 1
        announce_round(ctx, t, 1, before)
    ctx.session.add(t)
    ctx.session.flush()
    log.info("tournament %s started with %d players", t.name, len(field))
    advance(ctx, t)


def _ratings(session: Session, t: Tournament, users: Sequence[User]) -> dict[int, float]:
    ids = [u.id for u in users]
    query = select(PlayerRating).where(
        PlayerRating.game == t.game, col(PlayerRating.user_id).in_(ids)
    )
    found = {r.user_id: r.value for r in session.exec(query)}
    return {u.saved_id: found.get(u.saved_id, 1600.0) for u in users}


def _add_round(
    ctx: Context, t: Tournament, number: int, games: Sequence[tuple[object, object | None]]
) -> None:
    """Store a round's pairings and start their boards; byes and withdrawn players'
    pairings are scored at once."""
    gone = withdrawn_ids(ctx.session, t)
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
            NewBoard(
                rules,
                [first.userid, second.userid],
                params=dict(t.options),
                server_options=options,
                comment=_comment(ctx, t, pairing),
                comment_by=ctx.config.server_name,
                board_name=name,
                entered=True,
            ),
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


def _comment(ctx: Context, t: Tournament, pairing: TournamentPairing) -> str:
    """The board's comment: its tournament and round, and for a knockout replay which
    board it replays and who goes through if it is drawn too (else a new board came
    with no word of why)."""
    replayed = _replayed(ctx, t, pairing)
    if replayed is None:
        return phrase("tournament_board_comment", name=t.name, round=pairing.round)
    board, higher = replayed
    return phrase(
        "tournament_replay_comment", name=t.name, round=pairing.round, board=board, userid=higher
    )


def _replayed(ctx: Context, t: Tournament, pairing: TournamentPairing) -> tuple[str, str] | None:
    """For a knockout replay, the drawn board it replays and the higher seed, who goes
    through if it is drawn too; None for a first game."""
    if pairing.leg == 1:
        return None
    query = select(TournamentPairing).where(
        TournamentPairing.tournament_id == t.id,
        TournamentPairing.round == pairing.round,
        TournamentPairing.slot == pairing.slot,
        TournamentPairing.leg == pairing.leg - 1,
    )
    drawn = ctx.session.exec(query).one()
    row = None if drawn.game_id is None else ctx.session.get(BoardRow, drawn.game_id)
    seed = _seed_of(ctx.session, t)
    players = [u for u in (pairing.first_id, pairing.second_id) if u is not None]
    higher = ctx.session.get(User, min(players, key=lambda u: seed.get(u, 0)))
    if row is None or higher is None:  # only a game on a board is replayed
        return None
    return row.board, higher.userid


def _days(value: float) -> str:
    return f"{value:g}"


def _pair_swiss(ctx: Context, t: Tournament) -> bool:
    """Pair the next Swiss round; False when no pairing avoids a repeat."""
    field = [(e, u) for e, u in entries(ctx.session, t) if not e.withdrawn]
    done = pairings(ctx.session, t)
    results = results_of(done)
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
    before = len(ctx.replies)
    _add_round(ctx, t, t.current_round, games)
    announce_round(ctx, t, t.current_round, before)
    return True


def advance(ctx: Context, t: Tournament) -> None:
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
            if t.current_round >= t.rounds:
                _finish(ctx, t)
            elif not _pair_swiss(ctx, t):
                _finish(ctx, t, early=True)
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
    gone = withdrawn_ids(ctx.session, t)
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
        before = len(ctx.replies)
        _settle_or_play(ctx, t, replay, gone)
        replayed = _replayed(ctx, t, replay)
        if replay.game_id is not None and replayed is not None:
            announce_replay(ctx, t, replay, *replayed, before)
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
    before = len(ctx.replies)
    _add_round(ctx, t, t.current_round, knockout.next_round(winners))
    announce_round(ctx, t, t.current_round, before)
    return True


def _eliminate(session: Session, t: Tournament, user_id: int) -> None:
    query = select(TournamentEntry).where(
        TournamentEntry.tournament_id == t.id, TournamentEntry.user_id == user_id
    )
    entry = session.exec(query).first()
    if entry is not None and not entry.eliminated:
        entry.eliminated = True
        session.add(entry)


def _finish(ctx: Context, t: Tournament, *, early: bool = False) -> None:
    """End the tournament and mail every entrant the final standings; `early`: a Swiss
    whose next round could not be paired, which the mail explains (its players were
    told "round 2 of 3")."""
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
        early="\n\n"
        + phrase(
            "tournament_ended_early",
            round=t.current_round + 1,
            played=t.current_round,
            rounds=t.rounds,
        )
        if early
        else "",
        standings=standings_text(ctx.session, t, rows),
        signature=ctx.config.server_name,
    )
    people = with_organiser(ctx, t, [u for _, u in entries(ctx.session, t)])
    tell(ctx, t, people, phrase("subject_tournament_final", name=t.name, winner=winner), body)
    log.info("tournament %s finished: %s", t.name, winner)


__all__ = ["advance", "match_winner", "start"]
