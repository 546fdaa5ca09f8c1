"""Bots as players: their accounts, the challenges they take, and their moves.

A bot is a `users` row flagged `bot` (no address: nothing is ever mailed to it, and no
password: nobody can move for it) with a `bots` row of settings (pbm.store.models_bots).

A bot's move is made in three steps, so that thinking never holds a transaction and a
crash while thinking loses nothing:

1. `due` lists the boards where an enabled bot has to act (its turn, or a draw or undo
   proposal of another player), and `prepare` reads what the engine needs into a
   `Task` (the position's text, the moves so far, the move count seen);
2. `think` runs the engine on a `Task`, with no database (in a worker process under
   `pbm serve`): the built-in engine, or the bot's outside engine with its fallback to
   the built-in one after failed tries;
3. `apply` plays the `Answer` in one transaction through the same service a mailed move
   uses (pbm.services.play.moves.make_move, with `#n` the move number the bot thought about),
   so a board that moved meanwhile refuses it quietly and a move is never applied twice.

A bot never chats, never proposes a draw and never submits conditional moves; it
accepts a draw only when its search finds the position drawn or lost, rejects undo
proposals, and resigns only when its engine says so (docs/bots.md).

The due turns are served round robin over the human players waiting (`BotQueue`), and a
player has at most `[bots] max_games_per_player` active boards against bots, so that
one player cannot hold the bots for everybody else.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from itertools import count

from pbm.bots.engine import DRAWN, LEVELS, WON, Decision, choose, seed_for
from pbm.bots.external import ExternalEngine
from pbm.bots.sandbox import ENGINE_PATH, Limits, Sandbox
from pbm.config import Config
from pbm.errors import PbmError
from pbm.games import AnyGame as Rules
from pbm.games import GameError, find_game, get_game
from pbm.services.accounts.users import check_userid, delete_user, userid_key
from pbm.services.context import Context
from pbm.services.play.boards import Board, board_from_row
from pbm.services.play.moves import MoveRequest, accept, make_move, reject, resign
from pbm.store import bot_queries, queries
from pbm.store.bot_queries import BotTurn
from pbm.store.models import BoardRow, User
from pbm.store.models_bots import Bot
from pbm.texts import phrase

log = logging.getLogger(__name__)

BUILTIN = "builtin"
# The password hash of a bot: no scrypt hash, so no password ever matches it.
NO_PASSWORD = "!bot"
# Built-in bots `pbm bot add-builtin` makes, one per level.
BUILTIN_NAMES = {level: f"pbmbot{level}" for level in LEVELS}


class BotError(PbmError):
    """A bot command the administrator must correct (unknown bot, bad setting)."""


@dataclass(frozen=True)
class BotInfo:
    """A bot as `pbm bot list|show` prints it."""

    userid: str
    games: tuple[str, ...]  # empty: every game
    level: int
    engine: str
    max_games: int | None
    disabled: bool
    active: int  # its active boards
    moves: int
    failures: int
    fallbacks: int
    last_failure: str | None
    last_failure_at: datetime | None

    def as_dict(self) -> dict[str, object]:
        """For `--json`: the fields, with the games as a list and the time as text."""
        at = self.last_failure_at
        return {**asdict(self), "games": list(self.games), "last_failure_at": at and str(at)}


# -- accounts --------------------------------------------------------------------------


def _games_of(bot: Bot) -> tuple[str, ...]:
    return tuple(g for g in bot.games.split(",") if g)


def _info(ctx: Context, bot: Bot, user: User) -> BotInfo:
    return BotInfo(
        userid=user.userid,
        games=_games_of(bot),
        level=bot.level,
        engine=bot.engine,
        max_games=bot.max_games,
        disabled=bot.disabled,
        active=bot_queries.active_boards(ctx.session, user.saved_id),
        moves=bot.moves,
        failures=bot.failures,
        fallbacks=bot.fallbacks,
        last_failure=bot.last_failure,
        last_failure_at=bot.last_failure_at,
    )


def _game_names(games: Sequence[str]) -> tuple[str, ...]:
    names: list[str] = []
    for word in games:
        if not word.strip():
            continue
        try:
            rules = find_game(word.strip())[0]
        except GameError as exc:
            raise BotError(str(exc)) from None
        if rules.name not in names:
            names.append(rules.name)
    return tuple(names)


def _check_settings(level: int, engine: str, max_games: int | None) -> str:
    if level not in LEVELS:
        raise BotError(f"level {level}: a level is one of {', '.join(map(str, LEVELS))}")
    if max_games is not None and max_games < 0:
        raise BotError("--max-games is 0 or more")
    engine = engine.strip() or BUILTIN
    if engine != BUILTIN:
        try:
            argv = shlex.split(engine)
        except ValueError as exc:
            raise BotError(f"engine command {engine!r}: {exc}") from None
        if not argv:
            raise BotError("an engine command is needed")
        _check_paths(engine, argv)
    return engine


def _check_paths(engine: str, argv: Sequence[str]) -> None:
    """Refuse a path relative to this directory: an engine runs in an empty directory of
    its own (pbm.bots.sandbox), where it would not find the file. Refuse a program that
    is not there: every move of the bot would fail over to the built-in engine."""
    if os.sep not in argv[0] and shutil.which(argv[0], path=ENGINE_PATH) is None:
        raise BotError(
            f"engine command {engine!r}: there is no program {argv[0]} in the engine's "
            f"PATH ({ENGINE_PATH}): write its absolute path"
        )
    if os.path.isabs(argv[0]) and not (os.path.isfile(argv[0]) and os.access(argv[0], os.X_OK)):
        raise BotError(f"engine command {engine!r}: {argv[0]} is no executable file")
    for word in argv:
        relative = not os.path.isabs(word) and (
            os.sep in word if word is argv[0] else os.path.isfile(word)
        )
        if relative:
            raise BotError(
                f"engine command {engine!r}: {word} is a path relative to this directory, "
                "but an engine runs in an empty directory of its own: write it as "
                f"{os.path.abspath(word)}"
            )


def add_bot(
    ctx: Context,
    name: str,
    *,
    games: Sequence[str] = (),
    level: int = 4,
    engine: str = BUILTIN,
    max_games: int | None = None,
) -> BotInfo:
    """A new bot account `name` playing `games` (empty: all) at `level` with `engine`
    ("builtin" or an outside engine's command line), at most `max_games` boards."""
    engine = _check_settings(level, engine, max_games)
    names = _game_names(games)
    userid = check_userid(ctx, name)
    user = User(
        userid=userid,
        userid_key=userid_key(userid),
        password_hash=NO_PASSWORD,
        created_at=ctx.now(),
        bot=True,
    )
    ctx.session.add(user)
    ctx.session.flush()
    bot = Bot(
        user_id=user.saved_id,
        games=",".join(names),
        level=level,
        engine=engine,
        max_games=max_games,
        created_at=ctx.now(),
    )
    ctx.session.add(bot)
    ctx.session.flush()
    log.info("new bot %s level %s engine %s games %s", userid, level, engine, bot.games or "all")
    return _info(ctx, bot, user)


def add_builtin(ctx: Context) -> list[BotInfo]:
    """The built-in bots, one per level (pbmbot1 ... pbmbot4), those not there yet."""
    made: list[BotInfo] = []
    for level, name in BUILTIN_NAMES.items():
        if queries.user_by_userid(ctx.session, name) is None:
            made.append(add_bot(ctx, name, level=level))
    return made


def _find(ctx: Context, name: str) -> tuple[Bot, User]:
    user = queries.user_by_userid(ctx.session, name)
    bot = None if user is None else bot_queries.bot_of(ctx.session, user.saved_id)
    if user is None or bot is None:
        raise BotError(f"no bot named {name}")
    return bot, user


def list_bots(ctx: Context) -> list[BotInfo]:
    return [_info(ctx, bot, user) for bot, user in bot_queries.all_bots(ctx.session)]


def show_bot(ctx: Context, name: str) -> BotInfo:
    return _info(ctx, *_find(ctx, name))


def set_disabled(ctx: Context, name: str, disabled: bool = True) -> BotInfo:
    """Disable a bot (it refuses challenges and stops moving; its boards wait, and their
    clocks run) or enable it again."""
    bot, user = _find(ctx, name)
    bot.disabled = disabled
    ctx.session.add(bot)
    ctx.session.flush()
    return _info(ctx, bot, user)


def remove_bot(ctx: Context, name: str) -> None:
    """Remove a bot with no active boards; its userid stays, for the finished games."""
    bot, user = _find(ctx, name)
    delete_user(ctx, user)
    ctx.session.delete(bot)
    ctx.session.flush()


def label(user: User) -> str:
    """How lists, standings and board mails name a player: `pbmbot (bot)` for a bot."""
    return phrase("bot_label", userid=user.userid) if user.bot else user.userid


# -- challenges ------------------------------------------------------------------------


def challenge_refusal(ctx: Context, user: User, rules: Rules, *, entered: bool) -> str | None:
    """Why bot `user` cannot take a new board of `rules` (None: it takes it). Boards a
    tournament pairs (`entered`) skip the limit of active boards, as for players."""
    if not user.bot:
        return None
    bot = bot_queries.bot_of(ctx.session, user.saved_id)
    if bot is None or bot.disabled or user.disabled:
        return phrase("bot_disabled", userid=user.userid)
    games = _games_of(bot)
    if games and rules.name not in games:
        plays = ", ".join(get_game(g).title for g in games)
        return phrase("bot_game", userid=user.userid, game=rules.title, games=plays)
    if (
        not entered
        and bot.max_games is not None
        and bot_queries.active_boards(ctx.session, user.saved_id) >= bot.max_games
    ):
        return phrase("bot_busy", userid=user.userid, limit=bot.max_games)
    return None


def player_limit_refusal(ctx: Context, users: Iterable[User]) -> str | None:
    """Why a new board of `users` against a bot is refused: a human player among them
    has `[bots] max_games_per_player` active boards against bots (None: it is not)."""
    players = list(users)
    if not any(user.bot for user in players):
        return None
    limit = ctx.config.bot_games_per_player
    for user in players:
        if not user.bot and bot_queries.boards_against_bots(ctx.session, user.saved_id) >= limit:
            return phrase("bot_player_full", userid=user.userid, limit=limit)
    return None


# -- moves -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """What the engine needs to act on one board, read from one consistent view."""

    turn: BotTurn
    game: str  # the rules' name
    position: str  # the game's one-line position text (dump)
    seat: int  # the rules' seat to move (the bot's on its turn, else its opponent's)
    level: int
    engine: str
    seconds: float
    seed: int
    moves: tuple[str, ...]
    iterations: int | None = None
    mine: bool = True  # whether the bot itself is to move
    sandbox: Sandbox = field(default_factory=Sandbox)  # how an outside engine is run


@dataclass(frozen=True)
class Answer:
    """What the bot decided on a Task, and what its outside engine did wrong."""

    task: Task
    text: str  # the move, or "resign"
    resign: bool
    accepts_draw: bool
    verdict: str
    seconds: float
    fallback: bool = False
    failures: tuple[str, ...] = field(default_factory=tuple)


def due(ctx: Context) -> list[BotTurn]:
    """The boards where an enabled bot has to act now."""
    return bot_queries.due_turns(ctx.session)


class BotQueue:
    """Round robin over the human players waiting for bots: each turn is served in the
    order of `order`, where the player served longest ago (or never) comes first with
    the oldest of their turns, then the next player, and so on, before anyone's second
    turn. Boards of bots only wait together, as one player."""

    def __init__(self) -> None:
        self._served: dict[int | None, int] = {}  # a waiting player: when last served
        self._clock = count(1)

    def order(self, turns: Sequence[BotTurn]) -> list[BotTurn]:
        """`turns` (oldest first, as `due` lists them) in the order to serve them."""
        queues: dict[int | None, list[BotTurn]] = {}
        for turn in turns:
            queues.setdefault(turn.waiting, []).append(turn)
        players = sorted(queues, key=lambda player: self._served.get(player, 0))
        ordered: list[BotTurn] = []
        for depth in range(max((len(q) for q in queues.values()), default=0)):
            ordered += [queues[p][depth] for p in players if depth < len(queues[p])]
        return ordered

    def served(self, turn: BotTurn) -> None:
        """Record that `turn` is being served: its player goes to the back."""
        self._served[turn.waiting] = next(self._clock)


def engine_sandbox(config: Config) -> Sandbox:
    """How outside engines are run, from the [bots] settings."""
    limits = Limits(
        cpu_seconds=config.engine_cpu_seconds,
        memory_mb=config.engine_memory_mb,
        open_files=config.engine_open_files,
        file_mb=config.engine_file_mb,
        stderr_kb=config.engine_stderr_kb,
    )
    return Sandbox(limits=limits, user=config.engine_user)


def prepare(ctx: Context, turn: BotTurn, *, iterations: int | None = None) -> Task | None:
    """The Task for `turn`, or None when the board no longer waits on the bot."""
    row = ctx.session.get(BoardRow, turn.game_id)
    bot = bot_queries.bot_of(ctx.session, turn.user_id)
    if row is None or bot is None or bot.disabled or row.status != "active":
        return None
    if row.move_count != turn.move_count:
        return None
    board = board_from_row(ctx, row)
    seat = board.rules.to_move(board.state)
    if seat is None:
        return None
    mine = board.index_to_move() == turn.position
    if turn.kind == "move" and not mine:
        return None
    return Task(
        turn=turn,
        game=row.game,
        position=row.position or board.rules.dump(board.state),
        seat=seat,
        level=bot.level,
        engine=bot.engine,
        seconds=ctx.config.bot_seconds,
        seed=seed_for(row.saved_id, row.move_count),
        moves=tuple(m.text for m in queries.moves_of(ctx.session, row.saved_id)),
        iterations=iterations,
        mine=mine,
        sandbox=engine_sandbox(ctx.config),
    )


def _opponent_accepts(decision: Decision) -> bool:
    """Whether the bot takes a draw judged from its opponent's seat: only when that
    search proves the opponent wins or draws (its estimates are the opponent's)."""
    return decision.verdict in (WON, DRAWN)


def think(task: Task) -> Answer:
    """Run the bot's engine on `task` (no database: a worker process may call it)."""
    started = time.perf_counter()
    rules = get_game(task.game)
    if task.turn.kind == "undo":  # rejected without thinking
        return Answer(task, "", False, False, "", 0.0)
    state = rules.load(task.position)
    fallback = False
    failures: tuple[str, ...] = ()
    if task.engine == BUILTIN or not task.mine:
        # A draw answer off-turn asks the built-in engine about the opponent's move.
        decision = choose(
            rules,
            state,
            task.seat,
            level=task.level,
            seconds=task.seconds,
            seed=task.seed,
            iterations=task.iterations,
        )
    else:
        with ExternalEngine(task.engine, sandbox=task.sandbox) as engine:
            reply = engine.choose(
                rules,
                state,
                task.seat,
                level=task.level,
                seconds=task.seconds,
                seed=task.seed,
                moves=task.moves,
                iterations=task.iterations,
            )
        decision, fallback = reply.decision, reply.fallback
        failures = tuple(str(f) for f in reply.failures)
    accepts = decision.accepts_draw if task.mine else _opponent_accepts(decision)
    return Answer(
        task,
        text=decision.text,
        resign=decision.resign,
        accepts_draw=accepts,
        verdict=decision.verdict,
        seconds=time.perf_counter() - started,
        fallback=fallback,
        failures=failures,
    )


def _record(ctx: Context, bot: Bot, answer: Answer) -> None:
    if not answer.failures:
        return
    bot.failures += len(answer.failures)
    bot.fallbacks += int(answer.fallback)
    bot.last_failure = answer.failures[-1]
    bot.last_failure_at = ctx.now()
    ctx.session.add(bot)
    log.warning(
        "bot engine failed %s times on %s %s%s: %s",
        len(answer.failures),
        answer.task.game,
        answer.task.turn.game_id,
        " (built-in engine moved)" if answer.fallback else "",
        answer.failures[-1],
    )


def apply(ctx: Context, answer: Answer) -> str:
    """Play `answer` in the caller's transaction. Returns what happened: "moved",
    "resigned", "accepted", "rejected", or "stale" when the board moved on since the
    task was read (nothing is done then, and nobody is told)."""
    turn = answer.task.turn
    bot = bot_queries.bot_of(ctx.session, turn.user_id)
    if bot is None:
        return "stale"
    _record(ctx, bot, answer)
    row = ctx.session.get(BoardRow, turn.game_id)
    if row is None or bot.disabled:
        return "stale"
    found = queries.board_with_players(ctx.session, row.game, row.board)  # locks the row
    if found is None:
        return "stale"
    board = board_from_row(ctx, found.row, players=found.players)
    if not board.active or board.row.move_count != turn.move_count:
        return "stale"
    user = board.players[turn.position][1]
    savepoint = ctx.session.begin_nested()
    try:
        done = _act(ctx, board, user, answer)
    except PbmError as exc:
        savepoint.rollback()
        log.warning("bot %s on %s: %s", user.userid, board.label, exc)
        return "stale"
    savepoint.commit()
    if done != "stale":
        bot.moves += 1
        ctx.session.add(bot)
        log.info("bot %s on %s: %s %s", user.userid, board.label, done, answer.text)
    return done


def _votes(board: Board) -> list[int]:
    return list(board.row.proposal_votes or [])


def _act(ctx: Context, board: Board, user: User, answer: Answer) -> str:
    turn = answer.task.turn
    pending = board.row.proposal if turn.position not in _votes(board) else None
    if turn.kind in ("draw", "undo"):
        if pending != turn.kind:
            return "stale"
        if turn.kind == "draw" and answer.accepts_draw:
            accept(ctx, board, user)
            return "accepted"
        reject(ctx, board, user)
        return "rejected"
    if board.index_to_move() != turn.position:
        return "stale"
    if pending == "draw" and answer.accepts_draw:
        accept(ctx, board, user)
        return "accepted"
    if answer.resign:
        resign(ctx, board, user)
        return "resigned"
    # `#n`: the move is for the position the bot thought about, and no other.
    make_move(ctx, board, user, MoveRequest(answer.text, number=turn.move_count + 1))
    return "moved"
