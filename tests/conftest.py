"""What every test runs in: pbm put together by its composition root (pbm.app), once,
as the daemon and the command line put it together (the registries, and the words of
the templates shipped with pbm)."""

from __future__ import annotations

from pbm.app import initialize
from pbm.config import Config


def pytest_configure() -> None:
    initialize(Config())
