"""The command registry: commands register themselves, once, by scope; a second command
under a taken name is refused; help lists them in registration order."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from pbm.commands import registry
from pbm.commands.base import Command
from pbm.commands.helptext import general_help, usage_lines
from pbm.config import Config
from pbm.store.engine import make_engine, session_for
from pbm.store.schema import init_db


def test_every_verb_names_one_registered_command() -> None:
    for verbs, listing in (
        (registry.ACCOUNT_VERBS, registry.ACCOUNT_COMMANDS),
        (registry.GAME_VERBS, registry.GAME_COMMANDS),
    ):
        assert len(listing) == len({id(c) for c in listing})
        assert {id(c) for c in verbs.values()} == {id(c) for c in listing}
    assert registry.ACCOUNT_VERBS["help"] is not registry.GAME_VERBS["help"]
    assert registry.GAME_VERBS["mv"] is registry.GAME_VERBS["move"]


def test_registering_again_changes_nothing_and_a_clash_is_refused() -> None:
    before = list(registry.GAME_COMMANDS)
    groups = {key: list(commands) for key, commands in registry.HELP_GROUPS.items()}
    registry.register("help_group_game_play", *before)
    assert before == registry.GAME_COMMANDS
    assert groups == registry.HELP_GROUPS

    class Clash(Command):
        name = "mover"
        aliases = ("move",)
        usage = ""
        summary = "taken"

    with pytest.raises(ValueError, match="'move'"):
        registry.register("help_group_game_play", Clash())
    assert "mover" not in registry.GAME_VERBS  # refused whole, not half registered


def test_help_lists_commands_in_registration_order(tmp_path: Path) -> None:
    help_text = general_help(Config(data_dir=tmp_path))
    for listing in (registry.ACCOUNT_COMMANDS, registry.GAME_COMMANDS):
        # Each command by its first usage line (a usage of several forms has a line each).
        places = [help_text.index(usage_lines(c)[0] + "\n") for c in listing]
        assert places == sorted(places)


def test_a_fresh_sqlite_database_has_no_free_pages(tmp_path: Path) -> None:
    """Migrations that copy a table (SQLite batch mode) leave no free pages behind."""
    engine = make_engine(f"sqlite:///{tmp_path / 'fresh.sqlite3'}")
    init_db(engine)
    with session_for(engine) as session:
        assert session.execute(text("PRAGMA freelist_count")).scalar_one() == 0
    engine.dispose()
