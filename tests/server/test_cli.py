"""The admin CLI through typer's CliRunner, on a database in a temporary directory."""

from __future__ import annotations

import email
import email.policy
import json
import re
import socket
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
import typer

from pbm.cli import app
from pbm.games import get_game
from tests.server.conftest import cli_ok as ok
from tests.server.conftest import runner

RAW = b"From: carol@x.example\r\nSubject: help\r\nMessage-ID: <c1@x.example>\r\n\r\nhi\r\n"


def test_db_upgrade_and_backup(cfg: Path) -> None:
    # The newest revisions, whichever features have added migrations since.
    from alembic.script import ScriptDirectory

    from pbm.store.schema import MIGRATIONS

    heads = ",".join(sorted(ScriptDirectory(str(MIGRATIONS)).get_heads()))
    assert f"-> {heads}" in ok("db", "upgrade")
    assert ok("db", "current").strip() == heads
    target = cfg.parent / "copy.sqlite3"
    assert "backed up" in ok("db", "backup", str(target))
    assert target.stat().st_size > 0


def test_db_backup_never_overwrites_and_names_its_target(cfg: Path) -> None:
    # `pbm db backup var/pbm.sqlite3` said "backed up" onto the live database itself, an
    # existing backup was overwritten silently, and a target that could not be written
    # was reported as "the database cannot be used" (exit 69).
    live = cfg.parent / "pbm.sqlite3"
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    for target in (live, cfg.parent):
        refused = runner.invoke(app, ["db", "backup", str(target)])
        assert refused.exit_code == 1
        assert refused.output == (
            f"error: {target} exists already: name a new file (a backup never overwrites one)\n"
        )
    blocked = cfg.parent / "a-file"
    blocked.write_text("x", encoding="utf-8")
    refused = runner.invoke(app, ["db", "backup", str(blocked / "copy.sqlite3")])
    assert refused.exit_code == 1
    assert refused.output == (
        f"error: cannot write the backup {blocked / 'copy.sqlite3'}: {blocked} is not a directory\n"
    )
    assert "alice" in ok("user", "list")


def test_db_backup_onto_a_full_disk_leaves_nothing_and_says_whose_disk(cfg: Path) -> None:
    # It said "the database cannot be used (full)", of the live database, and left a
    # part of a copy under the backup's name, which a second try then refused.
    from tests.server.conftest import small_tmpfs

    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    with small_tmpfs(cfg.parent / "small", "64k") as small:
        target = small / "copy.sqlite3"
        full = runner.invoke(app, ["db", "backup", str(target)])
        assert (full.exit_code, full.output) == (
            75,
            f"error: cannot write the backup {target}: the disk is full\n",
        )
        assert list(small.iterdir()) == []
    target = cfg.parent / "copy.sqlite3"
    assert ok("db", "backup", str(target)).startswith("backed up ")
    assert sorted(p.name for p in cfg.parent.glob("copy*")) == ["copy.sqlite3"]
    # every player's mail and password hash: the backup was world-readable (0644)
    assert target.stat().st_mode & 0o777 == 0o600


def test_db_backup_onto_a_file_system_without_links(
    cfg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(*_args: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr("pbm.cli.db.os.link", no_links)
    target = cfg.parent / "copy.sqlite3"
    assert ok("db", "backup", str(target)).startswith("backed up ")
    assert sorted(p.name for p in cfg.parent.glob("copy*")) == ["copy.sqlite3"]


def test_users(cfg: Path) -> None:
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    ok("user", "add", "bob", "bob@x.example", "--password", "pw", "--confirmed")
    listed = json.loads(ok("user", "list", "--json"))
    assert [u["userid"] for u in listed] == ["alice", "bob"]
    assert "alice@x.example" in ok("user", "list")
    result = runner.invoke(app, ["user", "add", "alice", "a@x.example", "--password", "pw"])
    assert result.exit_code == 1 and "taken" in result.output
    ok("user", "passwd", "alice", "--password", "new")
    ok("user", "disable", "bob")
    assert json.loads(ok("user", "show", "bob", "--json"))["disabled"] is True
    ok("user", "enable", "bob")
    ok("user", "delete", "bob", "--yes")
    assert runner.invoke(app, ["user", "show", "nobody"]).exit_code == 1


def test_user_list_says_deleted_for_a_deleted_account(cfg: Path) -> None:
    # It said "disabled", and `pbm user enable` then said it knew no such userid.
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    ok("user", "add", "bob", "bob@x.example", "--password", "pw", "--confirmed")
    ok("user", "disable", "alice")
    ok("user", "delete", "bob", "--yes")
    listed = json.loads(ok("user", "list", "--json"))
    assert [(u["userid"], u["status"]) for u in listed] == [
        ("alice", "disabled"),
        ("bob", "deleted"),
    ]
    assert "bob     deleted " in ok("user", "list")
    # Deleted, the account is nobody's: a second delete names no account.
    again = runner.invoke(app, ["user", "delete", "bob", "--yes"])
    assert (again.exit_code, again.output) == (1, "error: Userid not known here: bob\n")


def test_a_refusal_made_for_mail_is_one_error_line(cfg: Path) -> None:
    # The mail's layout came through: "Userid not known here:" and the userid on a
    # tabbed line of its own; a bad userid went on with how to write one and a `signup`
    # example for a mail's reader.
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    unknown = runner.invoke(app, ["game", "new", "quarto", "alice", "ghost"])
    assert (unknown.exit_code, unknown.output) == (1, "error: Userid not known here: ghost\n")
    bad = runner.invoke(app, ["user", "add", "x y", "x@x.example", "--password", "pw"])
    assert bad.output == "error: 'x y' cannot be a userid: it holds U+0020 SPACE.\n"


def test_run_with_no_sender_prints_the_operators_answers(cfg: Path) -> None:
    # With neither --as nor --from, `pbm run "quarto show 101"` printed nothing at all.
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    ok("user", "add", "bob", "bob@x.example", "--password", "pw", "--confirmed")
    ok("game", "new", "quarto", "alice", "bob")
    shown = ok("run", "quarto show 101")
    assert shown.startswith("To: (nobody: not mailed)\nSubject: Quarto Board 101 alice\n")
    assert "Summary of Quarto Board 101" in shown
    assert "not found:\n\t999" in ok("run", "quarto show 999")
    # --as with --from: --from was dropped without a word
    both = runner.invoke(app, ["run", "help", "--as", "alice", "--from", "bob@x.example"])
    assert both.exit_code == 2
    assert both.output == (
        "error: --as runs from the player's first address: give --as or --from, not both\n"
    )
    queued = json.loads(ok("mail", "outbox", "--json"))
    assert queued and all(m["recipients"] for m in queued)  # the board mails, no answer


def test_game_list_names_the_statuses_it_knows(cfg: Path) -> None:
    # `--status activ` listed no board and exited 0, as if there were none.
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    ok("user", "add", "bob", "bob@x.example", "--password", "pw", "--confirmed")
    ok("game", "new", "quarto", "alice", "bob")
    assert "alice bob" in ok("game", "list", "--status", "active")
    bad = runner.invoke(app, ["game", "list", "--status", "activ"])
    assert bad.exit_code == 2
    assert "'activ': write active, finished or removed" in bad.output


def test_user_add_prints_the_addresses_as_stored(cfg: Path) -> None:
    # It echoed the arguments: "added lena <Lena@X.example, lena@x.example>" for one address.
    added = ok("user", "add", "lena", "Lena@X.example", "lena@x.example", "--password", "pw")
    assert added == "added lena <lena@x.example> (confirmation requested)\n"
    assert json.loads(ok("user", "show", "lena", "--json"))["addresses"] == ["lena@x.example"]


def test_a_board_name_no_mail_could_name_is_refused(cfg: Path, tmp_path: Path) -> None:
    # "my board" was started, and no "quarto show my board" could ever reach it; a name
    # past 32 characters overflowed games.board (PostgreSQL: the store failed).
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    ok("user", "add", "bob", "bob@x.example", "--password", "pw", "--confirmed")
    for bad in ("my board", "x" * 33, "#3", ""):
        refused = runner.invoke(app, ["game", "new", "quarto", "alice", "bob", "--board", bad])
        assert refused.exit_code == 1
        assert refused.output.startswith(f"error: {bad!r} is no board name: write one word")
    assert ok("game", "new", "quarto", "alice", "bob", "--board", "Cup-1") == (
        "started Quarto Board cup-1\n"
    )
    record = tmp_path / "cup.txt"
    record.write_text(ok("game", "export", "quarto", "cup-1").replace("Board: cup-1", "Board: a b"))
    refused = runner.invoke(app, ["game", "import", str(record), "--board", "a b"])
    assert refused.exit_code == 1 and "'a b' is no board name" in refused.output
    assert ok("game", "import", str(record)) == "imported Quarto Board 101 (0 moves)\n"
    listed = json.loads(ok("game", "list", "--json"))
    assert sorted(g["board"] for g in listed) == ["101", "cup-1"]


def test_abort_and_adjudicate_take_a_reason_that_fits(cfg: Path) -> None:
    # A reason past games.result_reason's 200 characters was taken (PostgreSQL: a store
    # failure), and an empty one mailed the players a blank line for a reason.
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    ok("user", "add", "bob", "bob@x.example", "--password", "pw", "--confirmed")
    ok("game", "new", "quarto", "alice", "bob")
    for command in (["abort", "quarto", "101"], ["adjudicate", "quarto", "101", "tie"]):
        for bad in ("x" * 201, " "):
            refused = runner.invoke(app, ["game", *command, "--reason", bad])
            assert refused.exit_code == 2
            assert refused.output == "error: --reason: write one sentence of 1 to 200 characters\n"
    ok("game", "abort", "quarto", "101", "--reason", "  Both  asked for it.  ", "--yes")
    shown = json.loads(ok("game", "show", "quarto", "101", "--json"))
    assert shown["status"] == "removed"
    assert any(
        "Both asked for it." in m["body"] for m in json.loads(ok("mail", "outbox", "--json"))
    )


def test_user_show_says_which_addresses_wait_for_confirmation(cfg: Path) -> None:
    # An unconfirmed address showed as "mailed", though pbm mails it only its request.
    ok("user", "add", "mia", "mia@x.example", "mia@y.example", "--password", "pw")
    ok("user", "confirm", "mia", "mia@y.example")
    shown = ok("user", "show", "mia")
    assert "\n  mia@x.example: not confirmed: mailed nothing but its confirmation request," in (
        shown
    )
    assert "\n  mia@y.example: mailed, bounce score 0\n" in shown
    mail = json.loads(ok("user", "show", "mia", "--json"))["mail"]
    assert [(m["address"], m["confirmed"]) for m in mail] == [
        ("mia@x.example", False),
        ("mia@y.example", True),
    ]


def test_user_show_heads_the_boards_and_says_none(cfg: Path) -> None:
    # The boards ran on under the last address's line, a bot's "addresses: " was blank
    # and "created:" had microseconds.
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    ok("user", "add", "bob", "bob@x.example", "--password", "pw", "--confirmed")
    ok("game", "new", "quarto", "alice", "bob")
    lines = ok("user", "show", "alice").splitlines()
    assert re.fullmatch(r"created:   \d{4}-\d\d-\d\d \d\d:\d\d UTC", lines[2])
    assert lines[3:] == [
        "addresses: alice@x.example",
        "  alice@x.example: mailed, bounce score 0",
        "boards:    1",
        "  quarto          101  active",
    ]
    ok("bot", "add", "plainbot")
    assert ok("user", "show", "plainbot").splitlines()[3:] == [
        "addresses: none",
        "boards:    none",
    ]


def test_user_erase_says_whom_it_erased(cfg: Path) -> None:
    # It printed "erased; the games now name him erased-1": erased whom?
    ok("user", "add", "Carol", "carol@x.example", "--password", "pw", "--confirmed")
    assert ok("user", "erase", "carol", "--yes") == (
        "erased Carol: the games now name him erased-1\n"
    )
    assert runner.invoke(app, ["user", "show", "carol"]).exit_code == 1


def test_user_erase_asks_first(cfg: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # It erased at once, for good, and resigned the player's running boards.
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    ok("user", "add", "bob", "bob@x.example", "--password", "pw", "--confirmed")
    ok("game", "new", "quarto", "alice", "bob")
    script = runner.invoke(app, ["user", "erase", "alice"])
    assert (script.exit_code, script.output) == (
        2,
        "error: erasing alice cannot be undone: run it again with --yes\n",
    )
    monkeypatch.setattr("pbm.cli.questions.on_terminal", lambda: True)
    declined = runner.invoke(app, ["user", "erase", "alice"], input="\n")
    assert declined.exit_code == 1
    assert declined.output == (
        "alice's addresses, mails and settings go for good, and his running board is "
        "resigned.\nErase alice? [y/N]: \nerror: alice not erased\n"
    )
    assert json.loads(ok("game", "list", "--json"))[0]["status"] != "finished"
    assert ok("user", "show", "alice").startswith("userid:    alice\n")
    agreed = runner.invoke(app, ["user", "erase", "alice"], input="y\n")
    assert agreed.exit_code == 0
    assert agreed.output.endswith("erased alice: the games now name him erased-1\n")


def test_run_games_and_outbox(cfg: Path) -> None:
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    ok("user", "add", "bob", "bob@x.example", "--password", "pw", "--confirmed")
    out = ok("run", "quarto challenge alice bob", "--as", "alice")
    assert "Subject: New Quarto Board 101 alice" in out
    listed = json.loads(ok("game", "list", "--json"))
    assert listed[0]["board"] == "101" and listed[0]["players"] == ["alice", "bob"]
    dry = ok("run", "quarto move 101 alice pw give sdqf", "--as", "alice", "--dry-run")
    assert "It is bob's turn." in dry
    assert json.loads(ok("game", "show", "quarto", "101", "--json"))["moves"] == []
    ok("run", "quarto move 101 alice pw give sdqf", "--as", "alice")
    assert json.loads(ok("game", "show", "quarto", "101", "--json"))["moves"] == ["give SDQF"]
    bad = runner.invoke(app, ["run", "quarto move 101 alice wrong x", "--as", "alice"])
    assert bad.exit_code == 1 and "Invalid password" in bad.output
    queued = json.loads(ok("mail", "outbox", "--json"))
    assert {tuple(m["recipients"]) for m in queued} >= {("alice@x.example",), ("bob@x.example",)}
    assert all(m["subject"] and m["body"] for m in queued)
    # Each mail's RFC 5322 source beside its parts: its headers and its body (with the
    # quoted original an error mail adds below it).
    for m in queued:
        parsed = email.message_from_string(m["raw"], policy=email.policy.default)
        assert parsed["Subject"] == m["subject"] and parsed["Message-ID"] == m["message_id"]
        plain = parsed.get_body(preferencelist=("plain",))
        assert plain is not None
        assert plain.get_content().replace("\r\n", "\n").startswith(m["body"])
    assert "1 boards checked, 0 differ" in ok("game", "replay")
    ok("game", "undo", "quarto", "101")
    assert json.loads(ok("game", "show", "quarto", "101", "--json"))["moves"] == []
    # A refusal about a board names it: the operator's one line has no board below it.
    again = runner.invoke(app, ["game", "undo", "quarto", "101"])
    assert again.exit_code == 1
    assert again.output == "error: Quarto Board 101: There is no move to undo.\n"
    ok("game", "adjudicate", "quarto", "101", "bob")
    shown = json.loads(ok("game", "show", "quarto", "101", "--json"))
    assert shown["status"] == "finished" and shown["winner"] == 1
    ok("game", "new", "quarto", "bob", "alice")
    ok("game", "abort", "quarto", "102", "--yes")
    assert json.loads(ok("game", "show", "quarto", "102", "--json"))["status"] == "removed"


def test_mail_process_failed_and_retry(cfg: Path) -> None:
    raw = (
        b"From: carol@x.example\r\nTo: pbm@example.org\r\nSubject: help\r\n"
        b"Message-ID: <m1@x.example>\r\n\r\nhi\r\n"
    )
    assert ok("mail", "process", input=raw).strip() == "done"
    assert ok("mail", "process", input=raw).strip() == "done"  # stored once, run once
    assert len(json.loads(ok("mail", "outbox", "--json"))) == 1
    assert json.loads(ok("mail", "failed", "--json")) == []
    assert "no failed messages" in ok("mail", "retry")
    # `pbm mail retry 1 99` said "no failed messages" for ids that were none (exit 0).
    wrong = runner.invoke(app, ["mail", "retry", "1", "99"])
    assert wrong.exit_code == 1
    assert wrong.stderr == (
        "error: 1 is no failed message (pbm mail failed lists them)\n"
        "error: 99 is no failed message (pbm mail failed lists them)\n"
    )


def test_mail_process_store_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    path = tmp_path / "bad.toml"
    path.write_text(f'[store]\ndatabase_url = "sqlite:///{blocker}/db/pbm.sqlite3"\n')
    monkeypatch.setenv("PBM_CONFIG", str(path))
    result = runner.invoke(app, ["mail", "process"], input=b"Subject: help\r\n\r\nhi\r\n")
    assert result.exit_code == 75


def test_bad_arguments_exit_2(cfg: Path) -> None:
    assert runner.invoke(app, ["game", "show"]).exit_code == 2
    assert runner.invoke(app, ["game", "show", "quarto", "101"]).exit_code == 1  # no board


@pytest.mark.parametrize(
    "command",
    [
        ["rules", "help", "chess"],
        ["rules", "play", "chess"],
        ["rules", "perft", "chess", "1"],
        ["game", "list", "chess"],
        ["game", "show", "chess", "1"],
        ["game", "new", "chess", "alice", "bob"],
        ["game", "abort", "chess", "1"],
        ["game", "adjudicate", "chess", "1", "draw"],
        ["game", "undo", "chess", "1"],
        ["game", "replay", "chess"],
        ["game", "export", "chess", "1"],
        ["ratings", "show", "chess"],
        ["ratings", "recompute", "chess"],
        ["tournament", "create", "open", "chess"],
        ["bot", "add", "chessbot", "--games", "quarto,chess"],
    ],
)
def test_a_game_word_that_names_no_game_is_a_usage_error_everywhere(
    cfg: Path, command: list[str]
) -> None:
    # `pbm rules help chess` exited 2, `pbm game show chess 1` and `ratings show chess` 1.
    result = runner.invoke(app, command)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: there is no game called 'chess'; the games are: ")


# --- the configuration, the context object, one error style ---------------------------


def test_a_typo_in_the_configuration_is_one_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "pbm.toml"
    path.write_text("[security]\npasword_cost = 4\n", encoding="utf-8")
    line = f"error: {path}: [security] unknown setting 'pasword_cost'\n"
    listed = runner.invoke(app, ["--config", str(path), "user", "list"])
    assert (listed.exit_code, listed.stderr) == (78, line)
    served = runner.invoke(app, ["--config", str(path), "serve"])  # the same loader
    assert (served.exit_code, served.stderr) == (78, line)
    # the MTA keeps the message while the file is fixed
    piped = runner.invoke(app, ["--config", str(path), "mail", "process"], input=RAW)
    assert (piped.exit_code, piped.stderr) == (75, line)
    # the rules at the terminal need no configuration
    assert runner.invoke(app, ["--config", str(path), "rules", "list"]).exit_code == 0


def test_config_goes_before_the_command_and_wins_over_the_environment(
    cfg: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    bad = tmp_path / "bad.toml"
    bad.write_text("[sever]\n", encoding="utf-8")
    monkeypatch.setenv("PBM_CONFIG", str(bad))
    assert runner.invoke(app, ["user", "list"]).exit_code == 78
    assert "alice" in ok("--config", str(cfg), "user", "list")
    late = runner.invoke(app, ["user", "list", "--config", str(cfg)])
    assert late.exit_code == 2 and "--config" in late.stderr


def command_paths(
    group: typer.core.TyperGroup, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, ...]]:
    yield path
    for name, command in group.commands.items():
        if isinstance(command, typer.core.TyperGroup):
            yield from command_paths(command, (*path, name))
        else:
            yield (*path, name)


def test_every_help_shows_no_stray_metavar() -> None:
    root = typer.main.get_command(app)
    assert isinstance(root, typer.core.TyperGroup)
    paths = list(command_paths(root))
    assert ("game", "replay") in paths and ("mail", "send") in paths and ("serve",) in paths
    for path in paths:
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "<bool>" not in result.output and "[[" not in result.output, result.output


def test_game_replay_finds_and_fixes_a_wrong_cached_position(cfg: Path) -> None:
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    ok("user", "add", "bob", "bob@x.example", "--password", "pw", "--confirmed")
    ok("run", "quarto challenge alice bob", "--as", "alice")
    ok("run", "quarto move 101 alice pw give sdqf", "--as", "alice")
    good = json.loads(ok("game", "show", "quarto", "101", "--json"))["position"]
    quarto = get_game("quarto")
    for wrong in (quarto.dump(quarto.new_state()), "garbage"):
        with closing(sqlite3.connect(cfg.parent / "pbm.sqlite3")) as db, db:
            db.execute("UPDATE games SET position = ?", (wrong,))
        found = runner.invoke(app, ["game", "replay"])
        assert found.exit_code == 1
        assert "Quarto 101: cache differs from the replay" in found.stdout
        assert found.stderr == "error: 1 boards differ from their replay\n"
        assert "1 boards checked, 1 differ (fixed)" in ok("game", "replay", "quarto", "--fix")
        assert json.loads(ok("game", "show", "quarto", "101", "--json"))["position"] == good
        assert "1 boards checked, 0 differ" in ok("game", "replay", "quarto", "101")


def test_mail_send_errors_are_one_line_with_a_sysexits_code(cfg: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    command = ["mail", "send", "--from", "alice@x.example", "help"]
    refused = runner.invoke(app, [*command, "--server", f"127.0.0.1:{port}"])
    assert refused.exit_code == 69
    assert refused.stderr.startswith(f"error: cannot submit to 127.0.0.1:{port}: ")
    assert len(refused.stderr.splitlines()) == 1
    nonsense = runner.invoke(app, [*command, "--server", "nowhere"])
    assert (nonsense.exit_code, nonsense.stderr) == (
        2,
        "error: --server: 'nowhere' is not host:port\n",
    )


def test_user_words_say_what_happened(cfg: Path) -> None:
    # enable of an active account said "enabled"; a taken userid of the same case said
    # "(by alice: case does not matter in userids)"; the "games" column counted active
    # boards only.
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    assert ok("user", "enable", "alice") == "alice was not disabled\n"
    assert ok("user", "disable", "alice") == "alice disabled\n"
    assert ok("user", "disable", "alice") == "alice was disabled already\n"
    assert ok("user", "enable", "alice") == "alice enabled\n"
    same = runner.invoke(app, ["user", "add", "alice", "a2@x.example", "--password", "pw"])
    assert (same.exit_code, same.output) == (
        1,
        "error: The userid alice is taken; choose another.\n",
    )
    other = runner.invoke(app, ["user", "add", "ALICE", "a2@x.example", "--password", "pw"])
    assert other.exit_code == 1 and "(by alice: case does not matter" in other.output
    header = ok("user", "list").splitlines()[0]
    assert header.split("  ")[:3] == ["userid", "status", "active boards"]
