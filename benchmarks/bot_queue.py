"""How long one player's bot game waits behind another player's many bot boards.

alice challenges a bot to BOARDS Quarto boards in one mail, then bob challenges it to
one. The bot's moves are then thought (level 4, the whole --seconds each) and played one
at a time, as one `pbm serve` bots worker plays them, until bob's board has its move;
printed: the bot moves played before bob's, and the wall time until bob's board moved.
Twice: in pbm's order (round robin over the players waiting, pbm.services.play.bots.BotQueue)
and, for comparison, oldest board first (the order before it). The run raises `[bots]
max_games_per_player` to BOARDS, so that alice's boards are all taken.

Usage: python benchmarks/bot_queue.py [--boards 50] [--seconds 0.2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbm.app import register
from pbm.clock import SystemClock
from pbm.config import Config
from pbm.intake import process_message
from pbm.jobs import apply_bot_answer, bot_task, due_bot_turns
from pbm.services.context import Context
from pbm.services.play import bots
from pbm.store.bot_queries import BotTurn
from pbm.store.engine import make_engine, session_for
from pbm.store.models import BoardRow
from pbm.store.schema import init_db
from tests.confirmed import confirm_every_address

SERVER = "pbm@example.org"


def mail(sender: str, subject: str, body: str = "") -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, SERVER, subject
    msg.set_content(body or "\n")
    return msg.as_bytes()


def run(
    boards: int, seconds: float, order: Callable[[list[BotTurn]], list[BotTurn]]
) -> tuple[int, float]:
    """Bot moves played before bob's board moved, and the seconds until it did."""
    with tempfile.TemporaryDirectory() as tmp:
        config = Config(
            data_dir=Path(tmp),
            database_url=f"sqlite:///{tmp}/pbm.sqlite3",
            server_address=SERVER,
            password_cost=4,
            max_commands=boards + 2,
            bot_seconds=seconds,
            bot_games_per_player=boards,
        )
        engine, clock = make_engine(config.database_url), SystemClock()
        init_db(engine)

        def send(sender: str, subject: str, body: str = "") -> None:
            raw = mail(sender, subject, body)
            assert process_message(engine, raw, via="cli", clock=clock, config=config) == "done"

        for user in ("alice", "bob"):
            send(f"{user}@example.org", f"signup {user} secret")
        confirm_every_address(engine, config)  # pbm mails boards only to confirmed addresses
        with session_for(engine) as session:
            bots.add_bot(Context(session=session, clock=clock, config=config, sender=""), "pbmbot")
            session.commit()
        send("alice@example.org", "multiple", "\n".join(["quarto challenge pbmbot alice"] * boards))
        send("bob@example.org", "quarto challenge pbmbot bob")
        with session_for(engine) as session:
            bobs = session.get(BoardRow, boards + 1)
            assert bobs is not None and bobs.board == str(101 + boards), "a challenge failed"
        started = time.perf_counter()
        played = 0
        while True:
            turn = order(due_bot_turns(engine, clock, config))[0]
            task = bot_task(engine, clock, config, turn)
            assert task is not None
            assert apply_bot_answer(engine, clock, config, bots.think(task)) == "moved"
            if turn.game_id == boards + 1:
                engine.dispose()
                return played, time.perf_counter() - started
            played += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=50, help="alice's boards")
    parser.add_argument("--seconds", type=float, default=0.2, help="a bot move's time")
    args = parser.parse_args()
    queue = bots.BotQueue()

    def fair(turns: list[BotTurn]) -> list[BotTurn]:
        ordered = queue.order(turns)
        queue.served(ordered[0])
        return ordered

    print(f"alice: {args.boards} bot boards, bob: 1; {args.seconds} s a bot move")
    print(f"{'order':<22}{'moves before bob':>18}{'bob waited s':>14}")
    for name, order in (("round robin (pbm)", fair), ("oldest first (before)", list)):
        before, waited = run(args.boards, args.seconds, order)
        print(f"{name:<22}{before:>18}{waited:>14.2f}")


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()
