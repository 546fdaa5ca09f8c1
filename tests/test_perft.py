"""Move-count regression data ("perft") from tests/data/perft/GAME.json.

Each file is a list of cases: {"options": {...}, "position": null or a dump text,
"counts": [perft(1), perft(2), ...], "note": "where the figures come from"}.
Depths whose count exceeds SLOW_NODES are checked only with PBM_PERFT_FULL=1.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pbm.games import GAMES, get_game
from pbm.games.playout import perft

DATA = Path(__file__).parent / "data" / "perft"
SLOW_NODES = 200_000
FULL = os.environ.get("PBM_PERFT_FULL") == "1"

CASES = [
    pytest.param(path.stem, i, case, id=f"{path.stem}-{i}")
    for path in sorted(DATA.glob("*.json"))
    for i, case in enumerate(json.loads(path.read_text()))
]


def test_every_game_has_perft_data():
    assert sorted(p.stem for p in DATA.glob("*.json")) == sorted(GAMES)


@pytest.mark.parametrize(("name", "index", "case"), CASES)
def test_perft(name: str, index: int, case: dict):
    game = get_game(name)
    if case.get("position"):
        state = game.load(case["position"])
    else:
        state = game.new_state(**case.get("options", {}))
    for depth, expected in enumerate(case["counts"], start=1):
        if expected > SLOW_NODES and not FULL:
            break
        assert perft(game, state, depth) == expected, f"depth {depth}"
