"""A tool the tests need, missing: scripts/test.sh (and so CI) installs every one of
them and sets PBM_TEST_TOOLS=required, so there a missing tool fails the test rather
than skipping it unseen (a broken install would otherwise pass with the browser, mail
and deliverability tests left out). Run by hand without it, the test is skipped."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def required() -> bool:
    return os.environ.get("PBM_TEST_TOOLS", "") == "required"


def missing(reason: str) -> NoReturn:
    """Fail (tools required) or skip the test, saying what is missing."""
    if required():
        pytest.fail(f"{reason} (PBM_TEST_TOOLS=required: the test command installs it)")
    pytest.skip(reason)
