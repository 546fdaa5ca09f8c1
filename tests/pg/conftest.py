"""The PostgreSQL tests: every test here runs on a private cluster (tests/pg_cluster.py).

They run whenever PostgreSQL's binaries and the psycopg driver are installed, and are
skipped otherwise, unless PBM_TEST_POSTGRES=required (scripts/test.sh sets it, so CI
never skips them): then PostgreSQL is installed when it is missing (as root) and a
cluster that cannot start fails them. PBM_TEST_POSTGRES=1 does the same and also runs
the whole tests/server suite on PostgreSQL.
"""

from __future__ import annotations

import pytest

from tests.server.conftest import config, postgres_url, server  # noqa: F401 (fixtures)


@pytest.fixture(autouse=True)
def _on_postgres(postgres_url: str) -> None:  # noqa: F811
    """Naming `postgres_url` makes the `config` fixture use PostgreSQL."""
