"""Round trip (docs/records.md): random finished games of every game and variant,
exported and imported in every format, keep their positions, results and times.
benchmarks/records_roundtrip.py runs the same on 10,000 games."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import Engine

from pbm.config import Config
from pbm.store.engine import session_for
from tests.record_games import (
    START,
    context,
    players_database,
    random_record,
    roundtrip_problems,
    variants,
)

VARIANTS = variants()


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, Config]]:
    engine, config = players_database(tmp_path_factory.mktemp("roundtrip"))
    yield engine, config
    engine.dispose()


def test_every_game_has_variants_to_try() -> None:
    games = {game for game, _ in VARIANTS}
    assert {"quad", "quadrature", "quadrupel", "quarod", "quarto"} <= games
    assert ("quadrupel", {"variant": "points", "goal": "minimum"}) in VARIANTS


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(which=st.sampled_from(VARIANTS), seed=st.integers(0, 2**32 - 1))
def test_roundtrip_in_every_format(
    database: tuple[Engine, Config], which: tuple[str, dict[str, str]], seed: int
) -> None:
    game, options = which
    record = random_record(random.Random(seed), game, options, START)
    engine, config = database
    with session_for(engine) as session:
        assert roundtrip_problems(context(session, config), record) == []
        session.rollback()


def test_the_roundtrip_sees_a_lost_time(database: tuple[Engine, Config]) -> None:
    record = random_record(random.Random(7), "quadrature", {}, START)
    engine, config = database
    with session_for(engine) as session:
        ctx = context(session, config)
        assert roundtrip_problems(ctx, record) == []
        record.moves[-1].at = record.moves[-1].at.replace(microsecond=1)
        assert roundtrip_problems(ctx, record) != []
        session.rollback()
