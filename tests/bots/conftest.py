"""The server fixtures (a fresh database, a frozen clock, a mail helper) for the tests
of bots as players."""

from tests.server.conftest import cfg, config, postgres_url, server  # noqa: F401
