"""Records in open formats (docs/records.md): JSON against its schema, import of JSON."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from typer.testing import CliRunner

from pbm.cli import app
from tests.server.conftest import cli_ok as ok

runner = CliRunner()
SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "record.schema.json").read_text())


def _finished_quarto(options: str = "") -> None:
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    ok("user", "add", "bob", "bob@x.example", "--password", "pw", "--confirmed")
    ok("run", f"quarto challenge alice bob {options}", "--as", "alice")
    ok("run", "quarto move 101 alice pw give sdqf", "--as", "alice")
    ok("run", "quarto move 101 bob pw a1 give tdqf", "--as", "bob")
    ok("run", "quarto move 101 bob pw resign", "--as", "bob")


def test_json_record_validates_and_imports(cfg: Path, tmp_path: Path) -> None:
    _finished_quarto("--nagtime=3 --fischer=10/2/20")
    record = json.loads(ok("game", "export", "quarto", "101", "--format", "json"))
    jsonschema.validate(record, SCHEMA)
    assert (record["format"], record["version"], record["game"]) == ("pbm-game-record", 1, "quarto")
    assert record["clock"]["nag_days"] == 3 and record["clock"]["fischer"]["increment_days"] == 2
    assert [p["userid"] for p in record["players"]] == ["alice", "bob"]
    # Rated: both started from the provisional 1600 of a first game.
    assert [p["rating_at_start"]["pbmserv"] for p in record["players"]] == [1600, 1600]
    assert [(m["number"], m["seat"], m["text"]) for m in record["moves"]] == [
        (1, 1, "give SDQF"),
        (2, 2, "a1 TDQF"),
    ]
    assert record["result"] == {
        "kind": "won",
        "winner": "alice",
        "scores": None,
        "reason": record["result"]["reason"],
        "end": "resigned",
    }
    assert "bob resigns" in record["result"]["reason"]
    path = tmp_path / "101.json"
    path.write_text(json.dumps(record))
    preview = ok("game", "preview", str(path))
    assert preview.startswith("quarto board 101: alice bob, 2 moves, finished")
    assert "imported Quarto Board 7" in ok("game", "import", str(path), "--board", "7")
    again = json.loads(ok("game", "export", "quarto", "7", "--format", "json"))
    same = {k: v for k, v in record.items() if k not in ("board", "players")}
    assert {k: v for k, v in again.items() if k not in ("board", "players")} == same
    assert ok("game", "export", "quarto", "7") == ok("game", "export", "quarto", "101").replace(
        "Board: 101", "Board: 7"
    )


def test_a_bad_json_record_says_what_is_wrong(cfg: Path, tmp_path: Path) -> None:
    _finished_quarto()
    record = json.loads(ok("game", "export", "quarto", "101", "--format", "json"))
    path = tmp_path / "bad.json"
    for damage, problem in (
        ({"version": 9}, "version 1"),
        ({"moves": [{**record["moves"][0], "number": 3}]}, "numbered"),
        ({"result": {**record["result"], "winner": "carol"}}, "one of the players"),
        ({"started": "yesterday"}, "not a time"),
    ):
        path.write_text(json.dumps({**record, **damage}))
        bad = runner.invoke(app, ["game", "preview", str(path)])
        assert bad.exit_code == 1 and problem in bad.output, bad.output
    path.write_text("{not json")
    bad = runner.invoke(app, ["game", "import", str(path)])
    assert bad.exit_code == 1 and "does not read" in bad.output


def test_sgf_for_quadrature_only(cfg: Path, tmp_path: Path) -> None:
    _finished_quarto()
    ok("run", "quadrature challenge alice bob", "--as", "alice")
    ok("run", "quadrature move 101 alice pw b3-b4", "--as", "alice")
    ok("run", "quadrature move 101 bob pw b9-b8", "--as", "bob")
    ok("run", "quadrature move 101 bob pw resign", "--as", "bob")
    sgf = ok("game", "export", "quadrature", "101", "--format", "sgf")
    root, first, second = sgf.strip("()\n").split("\n")
    assert root.startswith(";FF[4]GM[15]CA[UTF-8]AP[pbm:1]SZ[11]GN[Quadrature Board 101]")
    assert "PB[alice]PW[bob]" in root and "RE[B+]" in root
    assert first.startswith(";B[b3-b4]MN[1]TS[") and first.endswith("RS[7][7]")
    assert second.startswith(";W[b9-b8]MN[2]TS[")
    path = tmp_path / "101.sgf"
    path.write_text(sgf)
    assert "imported Quadrature Board 9" in ok("game", "import", str(path), "--board", "9")
    assert ok("game", "export", "quadrature", "9", "--format", "sgf") == sgf.replace(
        "Board 101]", "Board 9]"
    ).replace("XB[101]", "XB[9]")
    refused = runner.invoke(app, ["game", "export", "quarto", "101", "--format", "sgf"])
    assert refused.exit_code == 1 and "SGF for Quadrature only" in refused.output
    path.write_text(sgf.replace("GM[15]", "GM[1]"))
    bad = runner.invoke(app, ["game", "preview", str(path)])
    assert bad.exit_code == 1 and "GM[15]" in bad.output


def test_files_that_cannot_be_read_or_written_are_named(cfg: Path, tmp_path: Path) -> None:
    # Each of these ended in a traceback; --output said nothing when it had written.
    _finished_quarto()
    written = tmp_path / "101.txt"
    assert ok("game", "export", "quarto", "101", "--output", str(written)) == f"wrote {written}\n"
    for target, problem in (
        (tmp_path / "no" / "x.txt", "No such file or directory"),
        (tmp_path, "Is a directory"),
    ):
        refused = runner.invoke(app, ["game", "export", "quarto", "101", "-o", str(target)])
        assert refused.exit_code == 1
        assert refused.output == f"error: cannot write {target}: {problem}\n"
    binary = tmp_path / "board.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    for command in ("preview", "import"):
        for path, problem in (
            (tmp_path / "none.txt", "cannot read {}: No such file or directory"),
            (tmp_path, "cannot read {}: Is a directory"),
            (binary, "{} is no record: records are text in UTF-8"),
        ):
            refused = runner.invoke(app, ["game", command, str(path)])
            assert refused.exit_code == 2
            assert refused.output == f"error: {problem.format(path)}\n"
    assert (
        "quarto board 101"
        in runner.invoke(app, ["game", "preview", "-"], input=written.read_text()).output
    )


def test_export_says_what_it_ignored_or_found_nothing_of(cfg: Path) -> None:
    # Each of these printed nothing, or ignored an argument, and exited 0.
    _finished_quarto()
    for args, error in (
        (["quarto", "101", "--player", "alice"], "--player exports all his boards"),
        (["quarto", "101", "--finished"], "--finished goes with --player"),
    ):
        refused = runner.invoke(app, ["game", "export", *args])
        assert refused.exit_code == 2 and refused.stderr.startswith(f"error: {error}")
    nothing = runner.invoke(app, ["game", "export", "--player", "alice", "--format", "sgf"])
    assert nothing.exit_code == 0 and nothing.stdout == ""
    assert nothing.stderr == "alice has no boards to export (SGF holds Quadrature boards only)\n"
    ok("user", "add", "carol", "carol@x.example", "--password", "pw", "--confirmed")
    none = runner.invoke(app, ["game", "export", "--player", "carol"])
    assert (none.stdout, none.stderr) == ("", "carol has no boards to export\n")
