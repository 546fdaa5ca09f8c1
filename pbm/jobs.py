"""The periodic jobs of correspondence play, as one service call on the injected clock:
end vacations whose days ran out, forfeit boards whose time is up, send reminders, tell
the opponents of a player on vacation which boards wait for him, and send the day's
digests.

Every board (and every player's digest) is handled in its own transaction, and what was
done is recorded in the database (a board's result, a nag's JobMark for the move number,
a vacation notice's for the board and the vacation, a digest's for the day), so running
the job again, or after a restart, never repeats anything; a job missed while the server
was down does its work once when it comes back. The daemon runs `run_due` every
JOB_SECONDS (listed in pbm.app.PERIODIC_JOBS); `pbm jobs run` runs it once, for cron, and
plays the bots' due moves (`play_bots`; the daemon thinks for them in worker processes
instead, see pbm.daemon).

Several daemons on one PostgreSQL run each job through `run_for_cluster`: one of them,
under the job's advisory lock, once per due time (pbm.store.claims), since two runs of
one board's forfeit at the same moment would both see it due.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial

from sqlalchemy.engine import Engine
from sqlmodel import select

from pbm.clock import Clock
from pbm.config import Config
from pbm.errors import PbmError
from pbm.services.accounts.users import delete_user
from pbm.services.context import Context
from pbm.services.correspondence import timeouts, vacation, vacation_notices
from pbm.services.correspondence.digest import digest_readers, send_digest
from pbm.services.play import bots
from pbm.services.play.boards import board_from_row
from pbm.services.play.moves import abort
from pbm.store import addresses, claims, queries
from pbm.store.bot_queries import BotTurn
from pbm.store.engine import session_for
from pbm.store.failures import unavailable_on_failure
from pbm.store.models import BoardRow, User
from pbm.texts import phrase
from pbm.work import run_work

log = logging.getLogger(__name__)

JOB_SECONDS = 300.0
# What `run_due` counts (docs/correspondence.md lists them; `pbm jobs run --json`).
DONE_KINDS = ("vacations_ended", "forfeits", "nags", "vacation_notices", "digests", "unconfirmed")


@dataclass(frozen=True)
class PeriodicJob:
    """Work the daemon runs every `every_seconds` (each call makes its own transaction);
    the composition root (pbm.app) lists them."""

    name: str
    every_seconds: float
    run: Callable[[Engine, Clock, Config], dict[str, int]]  # what it did, by kind


def due_time(now: datetime, every_seconds: float) -> datetime:
    """The due time `now` falls in: the last multiple of `every_seconds` since the epoch,
    the same on every host."""
    return datetime.fromtimestamp(now.timestamp() // every_seconds * every_seconds, UTC)


def did(done: Mapping[str, int]) -> dict[str, int]:
    """What a job did: its counts that are not zero (a line of zeros says nothing)."""
    return {kind: count for kind, count in done.items() if count}


def run_for_cluster(
    engine: Engine,
    clock: Clock,
    config: Config,
    name: str,
    every_seconds: float,
    run: Callable[[Engine, Clock, Config], dict[str, int]],
) -> dict[str, int] | None:
    """Run the job `name` unless another daemon is running it or it already ran for
    the current due time; returns what it did (its counts), None when it did not run.
    On SQLite (one daemon per file) it simply runs. The lock and the mark are one
    transaction, held while the job runs in its own: a daemon that dies mid-run leaves
    no mark, so another runs the due time."""
    if not claims.is_postgres(engine):
        return run(engine, clock, config)
    due_at = due_time(clock.now(), every_seconds)
    with unavailable_on_failure(), session_for(engine) as lock:
        if not claims.try_job_lock(lock, name) or not claims.job_due(lock, name, due_at):
            return None
        done = run(engine, clock, config)
        claims.mark_job(lock, name, due_at)
        lock.commit()
    return done


def run_due(engine: Engine, clock: Clock, config: Config) -> dict[str, int]:
    """Everything due at `clock.now()`; returns how many of each thing were done."""
    done = dict.fromkeys(DONE_KINDS, 0)
    cutoff = clock.now() - timedelta(days=config.unconfirmed_days)
    with session_for(engine) as session:
        unconfirmed = [u.saved_id for u in addresses.unconfirmed_users(session, cutoff)]
        away, ending = vacation.split_running(session, clock.now())
        boards = list(session.exec(select(BoardRow.id).where(BoardRow.status == "active")))
        readers = sorted(digest_readers(session))
    for user_id in ending:
        done["vacations_ended"] += run_work(
            engine, partial(_end_vacation, user_id=user_id), clock=clock, config=config
        )
    for game_id in boards:
        action = run_work(engine, partial(_board, game_id=game_id), clock=clock, config=config)
        if action:
            done[action + "s"] += 1
    for user_id in away:  # after the boards: a forfeit or a move ends a wait
        done["vacation_notices"] += run_work(
            engine,
            partial(vacation_notices.tell_opponents, user_id=user_id),
            clock=clock,
            config=config,
        )
    for user_id in readers:
        done["digests"] += run_work(
            engine, partial(_digest, user_id=user_id), clock=clock, config=config
        )
    for user_id in unconfirmed:
        done["unconfirmed"] += run_work(
            engine,
            partial(_remove_unconfirmed, user_id=user_id, cutoff=cutoff),
            clock=clock,
            config=config,
        )
    return done


def _remove_unconfirmed(ctx: Context, user_id: int, cutoff: datetime) -> int:
    """Remove an account nobody confirmed an address of since `cutoff`, with the boards
    named for it that never started (no move played): nobody asked for its mail."""
    found = addresses.unconfirmed_users(ctx.session, cutoff, user_id)
    if not found:
        return 0  # confirmed, asked again, or removed since the list was read
    user = found[0]
    for row in queries.games_of_user(ctx.session, user.saved_id, statuses=("active",)):
        board = board_from_row(ctx, row)
        if row.move_count == 0:
            abort(ctx, board, phrase("unconfirmed_board_removed", userid=user.userid))
    try:
        delete_user(ctx, user)
    except PbmError:
        log.warning("unconfirmed %s kept: it plays started boards", user.userid)
        return 0
    log.warning("unconfirmed %s removed after %g days", user.userid, ctx.config.unconfirmed_days)
    return 1


def _end_vacation(ctx: Context, user_id: int) -> int:
    user = ctx.session.get(User, user_id)
    if user is None:
        return 0
    row = vacation.account(ctx.session, user, ctx.now(), allowance=ctx.config.vacation_start_days)
    end = vacation.running_end(row)
    if end is None or end > ctx.now():
        return 0  # stopped, or restarted with more days, since the list was read
    vacation.stop(ctx.session, user, ctx.now(), allowance=ctx.config.vacation_start_days)
    return 1


def _board(ctx: Context, game_id: int | None) -> str:
    row = ctx.session.get(BoardRow, game_id)
    if row is None or row.status != "active" or row.to_move is None:
        return ""
    board = board_from_row(ctx, row)
    what = timeouts.due(ctx, board)
    if what is None:
        return ""
    timeouts.apply(ctx, board, what)
    return what.action


def _digest(ctx: Context, user_id: int) -> int:
    user = ctx.session.get(User, user_id)
    return int(user is not None and send_digest(ctx, user))


def bot_task(
    engine: Engine, clock: Clock, config: Config, turn: BotTurn, iterations: int | None = None
) -> bots.Task | None:
    """Read what a bot needs to think about `turn`, in a transaction closed before the
    thinking starts."""
    with session_for(engine) as session:
        ctx = Context(session=session, clock=clock, config=config, sender="")
        return bots.prepare(ctx, turn, iterations=iterations)


def due_bot_turns(engine: Engine, clock: Clock, config: Config) -> list[BotTurn]:
    with session_for(engine) as session:
        return bots.due(Context(session=session, clock=clock, config=config, sender=""))


def apply_bot_answer(engine: Engine, clock: Clock, config: Config, answer: bots.Answer) -> str:
    """Play a bot's answer in its own transaction, with the board mails it causes."""
    return run_work(engine, partial(bots.apply, answer=answer), clock=clock, config=config)


def play_bots(
    engine: Engine,
    clock: Clock,
    config: Config,
    *,
    limit: int | None = None,
    iterations: int | None = None,
) -> int:
    """Play the bots' due moves (and draw answers) here, one after the other (round
    robin over the players waiting), until no bot has anything to do or `limit` were
    played; returns how many were. Bots playing each other play on until their games
    end."""
    played = 0
    queue = bots.BotQueue()
    while limit is None or played < limit:
        progress = False
        for turn in queue.order(due_bot_turns(engine, clock, config)):
            if limit is not None and played >= limit:
                break
            task = bot_task(engine, clock, config, turn, iterations)
            if task is None:
                continue
            queue.served(turn)
            if apply_bot_answer(engine, clock, config, bots.think(task)) != "stale":
                played += 1
                progress = True
        if not progress:
            break
    return played
