"""A private PostgreSQL cluster for the tests: initdb in a temporary directory, listening
on 127.0.0.1 on a free port, trust authentication, stopped and removed afterwards.

Debian's `postgresql` package is installed with apt-get when its binaries are missing and
we are root; initdb and pg_ctl refuse to run as root, so they run as the `postgres` user.
The psycopg driver (`psycopg[binary]`) must be installed.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SUPERUSER = "postgres"


class ClusterUnavailable(RuntimeError):
    """No PostgreSQL could be started here (no binaries, no driver, no root to install)."""


def _bin_dir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    if found:
        return Path(found[0]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


def _install() -> None:
    """apt-get the server (root only): the test suite may set it up on a fresh machine."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise ClusterUnavailable("PostgreSQL is not installed and cannot be installed here")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, capture_output=True)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", "postgresql"], check=True, env=env, capture_output=True
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    bin_dir: Path
    data_dir: Path
    port: int
    as_postgres: bool

    def _run(self, *args: str) -> None:
        command = [str(self.bin_dir / args[0]), *args[1:]]
        if self.as_postgres:
            command = ["runuser", "-u", SUPERUSER, "--", *command]
        subprocess.run(command, check=True, capture_output=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "stop", "-D", str(self.data_dir / "data"), "-m", "immediate")
        finally:
            shutil.rmtree(self.data_dir, ignore_errors=True)


def start_cluster() -> Cluster:
    """initdb + pg_ctl start; returns once the server accepts connections."""
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise ClusterUnavailable("the psycopg driver is not installed") from exc
    bin_dir = _bin_dir()
    if bin_dir is None:
        _install()
        bin_dir = _bin_dir()
        if bin_dir is None:
            raise ClusterUnavailable("apt-get installed no initdb")
    as_postgres = os.geteuid() == 0
    root = Path(tempfile.mkdtemp(prefix="pbm-pg-"))
    if as_postgres:
        shutil.chown(root, user=SUPERUSER)
    cluster = Cluster(bin_dir, root, _free_port(), as_postgres)
    data = str(root / "data")
    cluster._run("initdb", "-D", data, "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--no-sync")
    options = (
        f"-h 127.0.0.1 -p {cluster.port} -k {root} -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=50"
    )
    cluster._run("pg_ctl", "start", "-D", data, "-w", "-l", str(root / "log"), "-o", options)
    _wait(cluster)
    return cluster


def _wait(cluster: Cluster, seconds: float = 20.0) -> None:
    import psycopg

    deadline = time.monotonic() + seconds
    while True:
        try:
            psycopg.connect(f"host=127.0.0.1 port={cluster.port} user={SUPERUSER}").close()
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def create_database(cluster: Cluster, name: str, template: str = "template1") -> str:
    """A new empty database (a copy of `template`); returns its SQLAlchemy URL."""
    import psycopg

    with psycopg.connect(
        f"host=127.0.0.1 port={cluster.port} user={SUPERUSER}", autocommit=True
    ) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    return cluster.url(name)


# -- pytest fixtures (imported by the conftest files that offer PostgreSQL) -------------


def wanted() -> bool:
    """PBM_TEST_POSTGRES=1: run the server tests against PostgreSQL (installing it)."""
    return os.environ.get("PBM_TEST_POSTGRES", "") not in ("", "0", "required")


def required() -> bool:
    """PBM_TEST_POSTGRES=required (scripts/test.sh, so CI) or 1: the PostgreSQL tests
    must run, so a PostgreSQL that cannot start fails them instead of skipping them."""
    return os.environ.get("PBM_TEST_POSTGRES", "") not in ("", "0")


def available() -> bool:
    """Whether a cluster can start without installing anything."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return False
    return _bin_dir() is not None


def truncate_all(url: str) -> None:
    """Empty every table but alembic's (much faster than a new database per test)."""
    from sqlalchemy import text

    from pbm.store.engine import make_engine

    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            names = conn.execute(
                text(
                    "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                    " AND tablename <> 'alembic_version'"
                )
            ).scalars()
            quoted = ", ".join(f'"{n}"' for n in names)
            if quoted:
                conn.execute(text(f"TRUNCATE {quoted} RESTART IDENTITY CASCADE"))
    finally:
        engine.dispose()
