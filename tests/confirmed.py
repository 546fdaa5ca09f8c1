"""Every address in a database confirmed at once, as the operator's `pbm user confirm`
does: for tests and benchmarks whose subject is not the confirmation round trip."""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlmodel import select

from pbm.clock import SystemClock
from pbm.config import Config
from pbm.services.accounts import consent
from pbm.services.context import Context
from pbm.store.engine import session_for
from pbm.store.models import UserAddress


def confirm_every_address(engine: Engine, config: Config) -> None:
    with session_for(engine) as session:
        ctx = Context(session=session, clock=SystemClock(), config=config, sender="")
        for row in session.exec(select(UserAddress)).all():
            consent.confirm(ctx, row)
        session.commit()
