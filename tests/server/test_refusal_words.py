"""What a refused command says back, as players met it by mail: each refusal says what
was wrong and shows how to write it right, in words the player can copy."""

from __future__ import annotations

from tests.server.conftest import Server


def test_a_usage_of_several_forms_lists_each_as_a_whole_command(server: Server) -> None:
    """`quarto subscribe` was answered "Usage: quarto subscribe board userid password |
    userid password board...|all", the second form without its game and verb and folded
    across lines, so that a player could not tell what to write."""
    alice = server.signup("alice")
    server.send(alice, "quarto subscribe")
    [refused] = server.new_mail()
    assert (
        "Missing arguments.\nUsage, one of:\n"
        "  quarto subscribe board userid password\n"
        "  quarto subscribe userid password board...|all\n"
    ) in refused.body
    server.send(alice, "tournament")
    [refused] = server.new_mail()
    assert "\n  tournament join|leave|start NAME userid password\n" in refused.body
    assert "\n  tournament list\n" in refused.body
