"""docs/testing.md's map stays true: every pbm module is tested by a test module of its
name or listed in the map, the map lists no other, and every test file it names exists
(scripts/test_map.py rewrites it)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("test_map", ROOT / "scripts" / "test_map.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("test_map", module)
    spec.loader.exec_module(module)
    return module


def test_every_module_is_tested_by_name_or_mapped() -> None:
    script = _script()
    listed = re.findall(r"^\| `([\w.]+)` \|", script.current(), re.MULTILINE)
    untested = [name for name in script.pbm_modules() if not script.same_named(name)]
    assert listed == sorted(untested), "run: python scripts/test_map.py --write"


def test_the_map_names_only_test_files_that_exist() -> None:
    named = re.findall(r"`(tests/[\w/]+\.py)`", _script().current())
    assert named, "the map names no test file"
    assert [path for path in named if not (ROOT / path).is_file()] == []


def test_a_module_with_a_test_of_its_name_is_found() -> None:
    script = _script()
    modules = script.pbm_modules()
    assert "pbm.games.quarto" in modules and script.same_named("pbm.games.quarto")
    assert not script.same_named("pbm.cli.bot")
