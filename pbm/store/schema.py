"""pbm's schema: which migrations this pbm knows, which the database is at, and
creating or upgrading it through alembic."""

from __future__ import annotations

import logging
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Engine

from pbm.errors import SchemaNotReady
from pbm.logfmt import kv
from pbm.store.engine import sqlite_file
from pbm.store.failures import Failure, classify

if TYPE_CHECKING:
    from alembic.config import Config as AlembicConfig

log = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_REVISION = re.compile(r"^revision\s*=\s*['\"]([^'\"]+)['\"]", re.M)
_DOWN = re.compile(r"^down_revision\s*=\s*(.+)$", re.M)
_QUOTED = re.compile(r"['\"]([^'\"]+)['\"]")


@cache
def _revisions() -> tuple[frozenset[str], frozenset[str]]:
    """(every revision, the heads) of pbm's migrations, read from the files: importing
    alembic costs a tenth of a second, and most runs only need to know that the stored
    schema is current."""
    known: set[str] = set()
    parents: set[str] = set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        found = _REVISION.search(text)
        if found is None:
            continue
        known.add(found.group(1))
        down = _DOWN.search(text)
        if down is not None:
            parents.update(_QUOTED.findall(down.group(1)))
    return frozenset(known), frozenset(known - parents)


def known_revisions() -> frozenset[str]:
    """Every migration this pbm knows."""
    return _revisions()[0]


def schema_heads() -> frozenset[str]:
    """The newest migration(s) this pbm knows."""
    return _revisions()[1]


def stored_heads(engine: Engine) -> frozenset[str]:
    """The migration(s) the database's schema is at; empty when it has none."""
    try:
        with engine.connect() as conn:
            rows = conn.exec_driver_sql("SELECT version_num FROM alembic_version").all()
    except sa_exc.DBAPIError as exc:
        if classify(exc) is Failure.SCHEMA:
            return frozenset()
        raise
    return frozenset(str(r[0]) for r in rows)


def ensure_schema(engine: Engine, *, create: bool = False) -> None:
    """Make sure the schema is this pbm's: on SQLite (the embedded default) upgrade it
    after an update, and create it only when `create` says so (`pbm db init`, a first
    `pbm serve`); a database without pbm's schema otherwise raises SchemaNotReady naming
    `pbm db init`, and on any other database, where upgrades are the operator's to
    schedule, an old schema raises SchemaNotReady naming `pbm db upgrade`. One query
    when the schema is current."""
    have = stored_heads(engine)
    want = schema_heads()
    if have == want:
        return
    if not have and not (create and engine.dialect.name == "sqlite"):
        raise SchemaNotReady(
            f"the database {_shown(engine)} holds no pbm schema: create it with `pbm db init`"
        )
    _refuse_newer(have)
    if engine.dialect.name == "sqlite":
        init_db(engine)
        return
    stored = ", ".join(sorted(have)) if have else "missing"
    raise SchemaNotReady(
        f"the database schema is {stored}, this pbm needs {', '.join(sorted(want))}: "
        "run `pbm db upgrade`"
    )


def _refuse_newer(have: frozenset[str]) -> None:
    """A schema a newer pbm made (the code was rolled back, or an old copy runs beside
    the new one) is no migration of this pbm's: name it instead of failing in alembic."""
    unknown = have - _revisions()[0]
    if unknown:
        raise SchemaNotReady(
            f"the database schema ({', '.join(sorted(unknown))}) is newer than this pbm "
            f"knows ({', '.join(sorted(schema_heads()))}): run the newer pbm"
        )


def _shown(engine: Engine) -> str:
    path = sqlite_file(str(engine.url))
    return str(path) if path is not None else engine.url.render_as_string(hide_password=True)


def alembic_config(engine: Engine) -> AlembicConfig:
    from alembic.config import Config as AlembicConfig  # see _revisions: import cost

    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["engine"] = engine
    return cfg


def init_db(engine: Engine) -> None:
    """Create the schema, or upgrade it in place to the newest migration."""
    from alembic import command  # see _revisions: import cost

    _refuse_newer(stored_heads(engine))
    before = current_revision(engine)
    # "heads": a schema whose revisions branched (two features migrated side by side)
    # still upgrades to every head.
    command.upgrade(alembic_config(engine), "heads")
    after = current_revision(engine)
    if after != before:
        log.info(kv("schema_upgraded", before=before or "none", after=after))
    if engine.dialect.name == "sqlite" and after != before:
        # A migration that alters a SQLite table copies it (batch mode) and leaves the
        # old pages free in the file: give them back once, after the upgrade.
        raw = engine.raw_connection()
        try:
            driver = raw.driver_connection
            if driver is not None:  # None only for a connection already closed
                driver.execute("VACUUM")
        finally:
            raw.close()


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext  # see _revisions

    with engine.connect() as conn:
        heads = MigrationContext.configure(conn).get_current_heads()
    return ",".join(sorted(heads)) or None
