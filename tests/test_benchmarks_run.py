"""Every script under benchmarks/ runs to its last line, in a tiny configuration.

The figures in docs/ and in the issues' closing notes come from these scripts, and a
script that nothing runs breaks unseen when the code under it changes (three of them
had: a signature changed, addresses that must now be confirmed, a spawned worker with
empty registries). The figures themselves are not checked here: speed is the scripts'
business, run on a quiet machine. soak.py runs in tests/mail/test_soak_smoke.py, with
checks of its own; process_instructions.py runs the processing under valgrind for two
minutes and is left to be run by hand."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"

# (script, arguments that make it small, a fragment of what it prints last)
QUICK = [
    ("bot_checks.py", ["--games", "1", "--plies", "12", "quarto"], "quarto"),
    ("bot_queue.py", ["--boards", "6", "--seconds", "0.02"], "round robin (pbm)"),
    ("bots.py", ["--games", "2", "--seconds", "0.02", "quarto"], "targets:"),
    ("cli_startup.py", ["--runs", "2"], "imports of pbm.cli"),
    ("consent_attacks.py", [], "forged failures"),
    ("deliverability.py", [], "attributed to their exact mail: 75/75"),
    ("export_zip.py", ["--games", "5"], "time to make it"),
    ("html_mail.py", [], "quarto"),
    ("pictures.py", ["--games", "1", "quarto"], "pictures at zlib-ng level"),
    # What --instructions runs under valgrind, run here without it.
    ("pictures.py", ["--inner", "1", "--games", "1", "quarto"], "drew 15"),
    ("passwords_outside.py", ["--messages", "4"], "0 of 4"),
    ("pie_budget.py", ["--seconds", "0.01", "--seeds", "2"], "within"),
    ("process.py", ["--games", "200", "--moves-per-game", "5", "--messages", "20"], "show:"),
    ("quarto_exact.py", ["--counts", "7", "--per-count", "2", "--small", "2"], "0 mismatches"),
    ("records_roundtrip.py", ["--games", "20", "--max-seconds", "60"], "problems: 0"),
    ("rules.py", ["--seconds", "0.05"], "quarto"),
    ("sender_cpu.py", ["--moves", "10", "--rounds", "1"], "CPU milliseconds per mail"),
    ("tournament.py", ["--players", "16", "--rounds", "2"], "standings"),
    ("visible_text.py", [], "compose, the whole mail"),
    ("web_confirm.py", ["--people", "5", "--seconds", "10"], "confirmations by POST"),
]

# The same, for the scripts that take longer (a server, PostgreSQL, several rounds).
SLOW = [
    ("bot_ladder.py", ["--games", "1", "--seconds", "8", "--budget", "0.02"], "run time"),
    (
        "web.py",
        ["--games", "20", "--users", "10", "--requests", "20", "--seconds", "5"],
        "moves by mail while board pages load",
    ),
    ("scale_out.py", ["--boards", "6", "--rounds", "1"], "SQLite, 1 daemon"),
    ("spam_scores.py", [], "highest"),
]


def run_script(script: str, args: list[str], timeout: float) -> str:
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    shown = f"{script} {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert proc.returncode == 0, shown
    return proc.stdout


@pytest.mark.parametrize(
    ("script", "args", "last"), QUICK, ids=[" ".join([q[0], *q[1][:1]]) for q in QUICK]
)
def test_a_benchmark_runs_to_its_figures(script: str, args: list[str], last: str) -> None:
    printed = run_script(script, args, timeout=120)
    assert last in printed, printed


@pytest.mark.slow
@pytest.mark.parametrize(("script", "args", "last"), SLOW, ids=[s[0] for s in SLOW])
def test_a_longer_benchmark_runs_to_its_figures(script: str, args: list[str], last: str) -> None:
    printed = run_script(script, args, timeout=300)
    assert last in printed, printed


@pytest.mark.slow
@pytest.mark.mailstack
def test_the_end_to_end_benchmark_runs_through_postfix_and_dovecot() -> None:
    """benchmarks/mail_e2e.py starts a stack of its own (.ci/mailstack.sh, free ports)."""
    args = ["--boards", "2", "--seconds", "3", "--warmup", "30"]
    printed = run_script("mail_e2e.py", args, timeout=300)
    assert "pbm/echo throughput ratio" in printed, printed
    assert "inside pbm (medians of" in printed, printed


def test_every_benchmark_script_is_run_or_named_here() -> None:
    """A new benchmark joins one of the lists above (or the docstring's list)."""
    named = {q[0] for q in QUICK} | {s[0] for s in SLOW} | {"mail_e2e.py"}
    elsewhere = {"soak.py", "process_instructions.py"}
    helpers = {"cpu_clock.py", "this_tree.py"}  # imported by the others, no scripts
    scripts = {p.name for p in BENCHMARKS.glob("*.py")}
    assert scripts - named - elsewhere - helpers == set()
    assert elsewhere <= scripts and named <= scripts


def _imports_pbm(node: ast.stmt) -> bool:
    """A top-level import of pbm, or of benchmarks/process.py (which imports it)."""
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").split(".")[0] == "pbm"
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] in ("pbm", "process") for alias in node.names)
    return False


def _puts_its_root_first(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and ast.unparse(node.value.func) == "sys.path.insert"
        and ast.unparse(node.value.args[0]) == "0"
    )


def test_a_benchmark_measures_the_pbm_of_its_own_tree() -> None:
    """The venv's pbm is an editable install of one worktree: a benchmark run from
    another tree, to compare the two, measured that one twice. Each script puts its
    tree first on sys.path before it imports pbm, and a `python -m pbm` child it starts
    gets its tree in PYTHONPATH (benchmarks/this_tree.py)."""
    for script in sorted(BENCHMARKS.glob("*.py")):
        source = script.read_text(encoding="utf-8")
        body = ast.parse(source).body
        first = next((i for i, node in enumerate(body) if _imports_pbm(node)), None)
        if first is not None:
            assert any(map(_puts_its_root_first, body[:first])), script.name
        starts_pbm = re.search(r'"-m",\s*"pbm"', source)
        if starts_pbm and script.name != "cli_startup.py":  # it sets PYTHONPATH itself
            assert "env=child_environment()" in source, script.name
