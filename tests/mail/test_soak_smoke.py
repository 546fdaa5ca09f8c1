"""benchmarks/soak.py in a tiny configuration (3 SIGKILLs, a bounded number of moves,
pbm's own SMTP listener and the Maildir outbox: no root needed, about 15 s), strict about
repeated replies (at most the one mail in flight per kill), and its checks on a database
that was tampered with, so that a soak reporting 0 lost means something."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pbm.games import get_game

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "soak.py"


def load_soak() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pbm_soak_benchmark", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_a_small_soak_kills_restarts_and_loses_no_move(tmp_path: Path) -> None:
    figures_path = tmp_path / "soak.json"
    args = ["--kills", "3", "--boards", "3", "--pool", "2", "--max-moves", "150"]
    # --strict: a kill may cause at most one repeated reply (the mail in flight)
    args += ["--seconds", "50", "--seed", "3", "--strict", "--json", str(figures_path)]
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=ROOT,
    )
    shown = proc.stdout + proc.stderr
    assert proc.returncode == 0, shown
    figures = json.loads(figures_path.read_text(encoding="utf-8"))
    assert figures["kills"] == 3, shown
    assert len(figures["duplicates_by_kill"]) == 3
    assert 0 < figures["accepted"] <= 150
    assert figures["applied"] == figures["accepted"]
    assert (figures["lost"], figures["twice"], figures["differ"]) == (0, 0, 0)
    assert figures["max_duplicates_per_kill"] <= 1
    # each board's next move went out before the last was processed (--ahead 2): after
    # the kills, still processed in the order accepted, and none waited for a lease
    assert figures["out_of_order"] == 0
    # (0 when no move was in flight at any of the three kills, which timing allows)
    assert 0 <= figures["longest_wait_after_restart"] <= figures["longest_wait"]
    assert figures["longest_wait_after_restart"] <= 20
    # every queued reply (the board mails of the start and of each move) arrived
    assert figures["outbox_undelivered"] == 0
    assert figures["delivered"] >= figures["outbox_rows"] >= 2 * figures["accepted"]
    assert "moves lost" in proc.stdout and "result: PASS" in proc.stdout


def test_the_checks_count_a_lost_move_a_wrong_position_and_a_duplicate(
    tmp_path: Path,
) -> None:
    soak = load_soak()
    args = soak.parse_args(["--boards", "1", "--pool", "1", "--game", "quarto"])
    data = tmp_path / "var"
    data.mkdir()
    config = tmp_path / "pbm.toml"
    maildir = data / "outbox"
    soak.write_config(config, data, 2525, None, maildir)
    (loop,) = soak.create_players_and_boards(config, args)
    (board,) = loop.pool
    # the driver believes one move was accepted, but the daemon never stored it
    rules = get_game("quarto")
    state = rules.new_state()
    text = rules.format_move(state, next(iter(rules.legal_moves(state))))
    loop.accepted[board.game_id] = [text]
    loop.message_ids[board.game_id] = ["<lost.1@example.test>"]
    db_path = data / "pbm.sqlite3"
    with sqlite3.connect(db_path) as db:
        db.execute("UPDATE games SET position = 'garbage' WHERE id = ?", (board.game_id,))
    db.close()
    # one reply delivered by run 0 and again by run 1: a duplicate caused by kill 1
    (maildir / "new").mkdir(parents=True)
    deliveries = soak.Deliveries(maildir, None)
    reply = b"From: pbm@example.test\r\nMessage-ID: <reply.1@example.test>\r\n\r\nboard\r\n"
    (maildir / "new" / "1.first").write_bytes(reply)
    deliveries.close_run(0)
    (maildir / "new" / "2.again").write_bytes(reply)
    deliveries.close_run(1)

    # two messages of the loop processed the other way round from their acceptance
    loop.order = ["<first.1@example.test>", "<second.1@example.test>"]
    with sqlite3.connect(db_path) as db:
        for mid, processed in zip(loop.order, ("12:00:09", "12:00:05"), strict=True):
            db.execute(
                "INSERT INTO inbound_messages (message_id, received_at, via, raw, status, "
                "processed_at, attempts) VALUES (?, ?, 'smtp', x'00', 'done', ?, 0)",
                (mid, "2026-11-26 12:00:00.000000", f"2026-11-26 {processed}.000000"),
            )
    db.close()

    restarted = soak.datetime.fromisoformat("2026-11-26 12:00:02")
    v = soak.verify(db_path, "quarto", [loop], deliveries, 1, [restarted])

    assert (v.accepted, v.applied, v.lost, v.twice) == (1, 0, 1, 0)
    assert v.differ == 1
    assert v.out_of_order == 1 and v.longest_wait == 9.0
    assert v.longest_wait_after_restart == 7.0  # processed at :09, up again at :02
    assert "<lost.1@example.test>: never stored" in "\n".join(v.details)
    assert v.duplicates == 1 and v.duplicates_by_kill == [0, 1]
    assert v.same_run_duplicates == 0
    # the two board mails of the new board were queued but no daemon ever sent them
    assert v.outbox_rows == 2 and v.outbox_undelivered == 2
