"""What every test runs in: pbm put together by its composition root (pbm.app), once,
as the daemon and the command line put it together."""

from __future__ import annotations

from pbm.app import register


def pytest_configure() -> None:
    register()
