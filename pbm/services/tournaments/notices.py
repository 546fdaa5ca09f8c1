"""The mails a tournament sends its entrants and its organiser: a round's pairings, a
knockout replay, a withdrawal, a cancellation and the final standings go out through `tell`."""

from __future__ import annotations

from collections.abc import Sequence

from pbm.services.accounts.users import reply_addresses
from pbm.services.context import Context, Reply, ReplyKind
from pbm.services.correspondence.clocks import days_text
from pbm.services.play.bots import label
from pbm.services.tournaments.describe import game_title, kind_text, pairings_text
from pbm.services.tournaments.lookup import entries, organiser, pairings
from pbm.store.models import BoardRow, User
from pbm.store.models_tournament import Tournament, TournamentPairing
from pbm.texts import phrase, prose, render


def tell(
    ctx: Context,
    t: Tournament,
    people: Sequence[User],
    subject: str,
    body: str,
    answering: User | None = None,
) -> None:
    """Mail `body` to each of `people` at his first confirmed address, but `answering`,
    the player whose command caused it, at the address his mail came from (as every
    command's answer goes) when it came by mail."""
    for user in people:
        answered = answering is not None and user.id == answering.id and bool(ctx.sender)
        to = [ctx.sender] if answered else reply_addresses(ctx, user)
        if to:
            ctx.reply(
                Reply(
                    to=to,
                    subject=subject,
                    body=body,
                    kind=ReplyKind.TOURNAMENT,
                    user_id=user.id,
                    to_sender=ctx.sender in to,
                    answer=answered,
                    tournament=t.name,
                )
            )


def with_organiser(ctx: Context, t: Tournament, people: Sequence[User]) -> list[User]:
    """`people` and the organiser, when he is not among them: he made the tournament
    happen, so he hears how it goes even when he does not play."""
    maker = organiser(ctx.session, t)
    if maker is None or maker.id in {u.id for u in people}:
        return list(people)
    return [*people, maker]


def announce_round(ctx: Context, t: Tournament, number: int | None, before: int) -> None:
    """Mail the round's pairings to the players still in, ahead of the round's board
    mails (those queued from `before` on, when its boards were made): the round's mail
    tells them the boards are coming. The organiser gets it too: the player's mail when
    he plays in the round, else one that says he organises it."""
    people = [u for e, u in entries(ctx.session, t) if not e.withdrawn and not e.eliminated]
    # The player with a bye, or whose opponent has withdrawn (a knockout), gets no
    # board: told that boards are coming, he waited for one.
    round_ = [] if number is None else pairings(ctx.session, t, number)
    byes = {p.first_id for p in round_ if p.second_id is None}
    walkovers = {u for p in round_ if p.how == "withdrawal" for u in (p.first_id, p.second_id)}
    bye_key = "tournament_round_bye_knockout" if t.kind == "knockout" else "tournament_round_bye"
    subject = phrase(
        "subject_tournament_round",
        name=t.name,
        # A round robin's rounds all start at once: "1-5", but one round is "1".
        round=f"1-{t.rounds}" if number is None and t.rounds > 1 else number or 1,
    )
    playing = {u.id for u in people}
    told: list[tuple[User, str]] = []
    for user in with_organiser(ctx, t, people):
        if user.id not in playing:
            yours = phrase("tournament_round_organiser")
        elif user.id in byes:
            yours = phrase(bye_key)
        elif user.id in walkovers:  # the withdrawn side is not among `people`
            yours = phrase("tournament_round_walkover")
        else:
            yours = phrase("tournament_round_boards")
        told.append((user, yours))
    _announce(ctx, t, number, subject, told, before)


def announce_replay(
    ctx: Context, t: Tournament, replay: TournamentPairing, drawn: str, higher: str, before: int
) -> None:
    """Mail a knockout replay's two players and the organiser, as a round's mail does,
    ahead of the replay's board mails (queued from `before` on): board `drawn` was drawn,
    and `higher` goes through if the replay is drawn too."""
    board = ctx.session.get(BoardRow, replay.game_id)
    assert board is not None
    entrant = {u.id: u for _, u in entries(ctx.session, t)}
    players = [entrant[replay.first_id], entrant[replay.second_id or 0]]
    words = {"board": drawn, "replay": board.board, "userid": higher}
    names = {"first": label(players[0]), "second": label(players[1])}
    told = [
        (user, prose("tournament_replay_yours", **words))
        if user.id in (replay.first_id, replay.second_id)
        else (user, prose("tournament_replay_organiser", **names, **words))
        for user in with_organiser(ctx, t, players)
    ]
    subject = phrase("subject_tournament_replay", name=t.name, round=replay.round, board=drawn)
    _announce(ctx, t, replay.round, subject, told, before)


def _announce(
    ctx: Context,
    t: Tournament,
    number: int | None,
    subject: str,
    told: Sequence[tuple[User, str]],
    before: int,
) -> None:
    """Mail each user of `told` the round's pairings and what it holds for him, ahead of
    the mails queued from `before` on (the boards the round's mail announces)."""
    table = pairings_text(ctx.session, t, number)
    made = len(ctx.replies)
    for user, yours in told:
        tell(ctx, t, [user], subject, _round_body(ctx, t, number, table, yours))
    announced = ctx.replies[made:]
    del ctx.replies[made:]
    ctx.replies[before:before] = announced


def _round_body(ctx: Context, t: Tournament, number: int | None, table: str, yours: str) -> str:
    return render(
        "tournament_round",
        tournament=t.name,
        game=game_title(t),
        kind=kind_text(t),
        round=phrase("tournament_all_rounds")
        if number is None and t.rounds > 1
        else phrase("tournament_round_of", round=number or 1, rounds=t.rounds),
        pairings=table,
        nag=days_text(t.nag_days),
        forfeit=days_text(t.forfeit_days),
        yours=yours,
        signature=ctx.config.server_name,
    )


__all__ = ["announce_replay", "announce_round", "tell", "with_organiser"]
