"""Round trip (docs/records.md): random finished games of every game and variant,
exported and imported in every format, keep their positions, results and times.
benchmarks/records_roundtrip.py runs the same on 10,000 games."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import Engine

from pbm.clock import FrozenClock
from pbm.config import Config
from pbm.services.accounts import create_user
from pbm.services.context import Context
from pbm.store.db import init_db, make_engine, session_for
from tests.record_games import PLAYERS, random_record, roundtrip_problems, variants

START = datetime(2026, 11, 22, 2, 41, tzinfo=UTC)
VARIANTS = variants()


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    path = tmp_path_factory.mktemp("roundtrip") / "pbm.sqlite3"
    made = make_engine(f"sqlite:///{path}")
    init_db(made)
    yield made
    made.dispose()


def _context(engine: Engine, session: object) -> Context:
    config = Config(data_dir=engine.url.database or ".", password_cost=4)
    return Context(session=session, clock=FrozenClock(START), config=config, sender="")  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def players(engine: Engine) -> tuple[str, ...]:
    with session_for(engine) as session:
        ctx = _context(engine, session)
        for userid in PLAYERS:
            create_user(ctx, userid, "pw", [f"{userid}@x.example"])
        session.commit()
    return PLAYERS


def test_every_game_has_variants_to_try() -> None:
    games = {game for game, _ in VARIANTS}
    assert {"quad", "quadrature", "quadrupel", "quarod", "quarto"} <= games
    assert ("quadrupel", {"variant": "points", "goal": "minimum"}) in VARIANTS


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(which=st.sampled_from(VARIANTS), seed=st.integers(0, 2**32 - 1))
def test_roundtrip_in_every_format(
    engine: Engine, players: tuple[str, ...], which: tuple[str, dict[str, str]], seed: int
) -> None:
    game, options = which
    record = random_record(random.Random(seed), game, options, START)
    with session_for(engine) as session:
        assert roundtrip_problems(_context(engine, session), record) == []
        session.rollback()


def test_the_roundtrip_sees_a_lost_time(engine: Engine, players: tuple[str, ...]) -> None:
    record = random_record(random.Random(7), "quadrature", {}, START)
    with session_for(engine) as session:
        ctx = _context(engine, session)
        assert roundtrip_problems(ctx, record) == []
        record.moves[-1].at = record.moves[-1].at.replace(microsecond=1)
        assert roundtrip_problems(ctx, record) != []
        session.rollback()
