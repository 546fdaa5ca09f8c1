"""The `pbm` command line (built in pbm.cli.root).

`app` and `main` are looked up on first use, so that importing a module of pbm.cli
does not first load every command (which would make this package an import cycle).
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name in ("app", "main"):
        from pbm.cli import root

        return getattr(root, name)
    raise AttributeError(f"module 'pbm.cli' has no attribute {name!r}")
