"""The PostgreSQL tests skip only when a person runs them without PostgreSQL: with
PBM_TEST_POSTGRES=required (scripts/test.sh, so CI) a PostgreSQL that cannot be had
fails them, loudly. Run in a child pytest on a machine made to look as if it had no
PostgreSQL and no root to install one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# pytest on one PostgreSQL test, with pg_cluster finding no initdb and not being root.
CHILD = """
import os, sys, pytest
from tests import pg_cluster
pg_cluster._bin_dir = lambda: None
os.geteuid = lambda: 1000
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider",
    "tests/pg/test_postgres.py::test_migrations_build_the_models_schema_on_postgres"]))
"""


def _run(setting: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PBM_TEST_POSTGRES"}
    if setting:
        env["PBM_TEST_POSTGRES"] = setting
    return subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_without_postgresql_a_person_sees_the_tests_skipped() -> None:
    child = _run("")
    assert child.returncode == 0, child.stdout + child.stderr
    assert "1 skipped" in child.stdout


@pytest.mark.parametrize("setting", ["required", "1"])
def test_without_postgresql_ci_fails_them(setting: str) -> None:
    child = _run(setting)
    assert child.returncode == 1, child.stdout + child.stderr
    told = f"PBM_TEST_POSTGRES={setting}, but no PostgreSQL: PostgreSQL is not installed"
    assert told in child.stdout
