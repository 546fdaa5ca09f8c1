"""Golden playthroughs: tests/golden/NAME.moves holds a game, its options and its moves
(JSON); tests/golden/NAME.txt is the transcript (every move's echo and every board) that
replaying them must print, reviewed in diffs. PBM_UPDATE_GOLDEN=1 rewrites the .txt files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pbm.games import get_game

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("PBM_UPDATE_GOLDEN") == "1"


def transcript(spec: dict) -> str:
    game = get_game(spec["game"])
    state = game.load(spec["position"]) if spec.get("position") else None
    if state is None:
        state = game.new_state(**spec.get("options", {}))
    seats = spec.get("render_seats", [None])
    out = [f"# {game.title} {json.dumps(spec.get('options', {}), sort_keys=True)}"]

    def boards():
        for seat in seats:
            label = "everyone" if seat is None else game.seat_name(seat)
            out.append(f"[board as seen by {label}]")
            out.append(game.render(state, seat).rstrip("\n"))

    boards()
    for ply, text in enumerate(spec["moves"], start=1):
        seat = game.to_move(state)
        assert seat is not None, f"move {ply} '{text}' after the game ended"
        move = game.parse_move(state, text)
        out.append(f"{ply}. {game.seat_name(seat)}: {game.describe_move(state, move)}")
        state = game.apply(state, move)
        boards()
    out.append(f"position: {game.dump(state)}")
    result = game.outcome(state)
    if result is None:
        out.append("result: game continues")
    else:
        who = "draw" if result.winner is None else f"{game.seat_name(result.winner)} wins"
        scores = f" scores {list(result.scores)}" if result.scores else ""
        out.append(f"result: {who} ({result.reason}){scores}")
    return "\n".join(out) + "\n"


SPECS = sorted(GOLDEN.glob("*.moves"))


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_golden_playthrough(path: Path):
    spec = json.loads(path.read_text())
    got = transcript(spec)
    expected_path = path.with_suffix(".txt")
    if UPDATE or not expected_path.exists():
        expected_path.write_text(got)
        if not UPDATE:
            pytest.fail(f"wrote new golden file {expected_path.name}; review it and run again")
    assert got == expected_path.read_text()
    if "result" in spec:
        assert got.rstrip().endswith(spec["result"]), "the playthrough must end as the spec says"
