"""The checkout a benchmark sits in. Each benchmark measures that tree's pbm, not the one
installed in the venv, which is an editable install of whichever worktree made it: two
trees compared with one venv were otherwise the same tree twice. The scripts put the
root first on sys.path before they import pbm; a `python -m pbm` child is given it in
PYTHONPATH (`child_environment`)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child_environment() -> dict[str, str]:
    """This environment, with the tree's root first on the child's module path."""
    path = os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))
    return {**os.environ, "PYTHONPATH": path}
