"""Command groups that import a command's module only when the command is looked up.

`pbm --help` lists the names and help lines, and `pbm mail send` runs one command, so
neither should pay for the database, the services or the pictures that other commands
import. A group holds a LazyCommands mapping: the names (in the order `--help` lists
them) with where each command is defined; the module is imported, and typer turns the
function into a click command, the first time that name is read. The help text is the
function's docstring and typer's annotations, as when the commands were registered
eagerly.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

import typer
from typer.core import TyperGroup

PACKAGE = "pbm.cli"


@dataclass(frozen=True)
class Group:
    """A sub-app (`pbm user ...`): its help line, and its commands by name, each
    written "module:function" for a function of a module of pbm.cli."""

    help: str
    commands: dict[str, str] = field(default_factory=dict)


Entry = str | Group  # "module:function" for a command, or a Group


def build(name: str, entry: Entry) -> Any:
    """The click command for `entry`, built the way typer builds a registered one."""
    if isinstance(entry, Group):
        group = LazyGroup(name=name, help=entry.help, no_args_is_help=True, rich_markup_mode=None)
        group.commands = LazyCommands(entry.commands)
        return group
    module, _, function = entry.partition(":")
    single = typer.Typer(add_completion=False, rich_markup_mode=None)
    single.command(name)(getattr(import_module(f"{PACKAGE}.{module}"), function))
    return typer.main.get_command(single)


class LazyCommands(MutableMapping[str, Any]):
    """A group's commands by name; each built (and its module imported) when first read."""

    def __init__(self, entries: Mapping[str, Entry]) -> None:
        self._entries = dict(entries)
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            self._built[name] = build(name, self._entries[name])
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        found = self._entries.pop(name, None) is not None
        if self._built.pop(name, None) is None and not found:
            raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        yield from self._entries
        yield from (name for name in self._built if name not in self._entries)

    def __len__(self) -> int:
        return len(self._entries.keys() | self._built.keys())

    def __contains__(self, name: object) -> bool:
        return name in self._entries or name in self._built


class LazyGroup(TyperGroup):
    """A typer group over LazyCommands: listing its names imports nothing."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)
