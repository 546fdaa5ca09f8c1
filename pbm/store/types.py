"""Column types shared by the models, the `Stored` base every table has, and the typed
Core table of a model."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Table, inspect
from sqlalchemy.types import DateTime, String, Text, TypeDecorator
from sqlmodel import SQLModel


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp stored as naive UTC and read back as aware UTC on every database.

    SQLite keeps no time zone, PostgreSQL would convert; storing naive UTC everywhere
    makes both behave the same.
    """

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is not None:
            value = value.astimezone(UTC)
        return value.replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class JSONText(TypeDecorator[Any]):
    """JSON kept in a text column, written as pbm always wrote it (keys sorted) and read
    back as dicts and lists: the one place that encodes and decodes such columns."""

    impl: type[String] = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> str | None:
        return None if value is None else json.dumps(value, sort_keys=True)

    def process_result_value(self, value: str | None, dialect: Any) -> Any:
        return None if value is None else json.loads(value)


class ShortJSON(JSONText):
    """`JSONText` in a VARCHAR of a given length (short lists: scores, votes)."""

    impl = String
    cache_ok = True


class UnsavedRowError(RuntimeError):
    """A row's id was asked for before the row was flushed to the database."""


class Stored:
    """What every table has: `id`, None until the row is flushed (the database assigns
    it), and `saved_id`, the id of a row that has one. Code that holds a row read from
    the database, or flushed, uses `saved_id` and gets an `int`."""

    id: int | None

    @property
    def saved_id(self) -> int:
        if self.id is None:
            raise UnsavedRowError(f"{type(self).__name__} has no id until it is flushed")
        return self.id


def table_of(model: type[SQLModel]) -> Table:
    """The Core table of a table model, typed: sqlmodel sets `__table__` but does not
    declare it, so `Model.__table__` fails the type check."""
    table = inspect(model).local_table
    if not isinstance(table, Table):
        raise TypeError(f"{model.__name__} is not a table model")
    return table
