"""HTML bodies to text: visible text, line breaks, entities, quoted blocks."""

from __future__ import annotations

from email import message_from_bytes, policy
from pathlib import Path

from pbm.mail.html_text import RULE_LINE, html_to_text
from pbm.mail.quoting import fresh_text

DATA = Path(__file__).resolve().parent.parent / "data" / "mail"


def test_breaks_for_br_p_div_tr_and_li() -> None:
    html = (
        "<p>one</p><p>two<br>three</p><div>four</div>"
        "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>"
        "<ul><li>x</li><li>y</li></ul>"
    )
    assert html_to_text(html) == "one\ntwo\nthree\nfour\na b\nc\nx\ny"


def test_style_script_head_and_comments_are_dropped() -> None:
    html = (
        "<html><head><title>T</title><style>p {color: red}</style></head>"
        "<body><script>alert(1)</script><!-- hidden --><p>e3-e4</p></body></html>"
    )
    assert html_to_text(html) == "e3-e4"


def test_entities_and_nbsp_are_unescaped() -> None:
    html = "<div>a &amp; b &lt;c&gt; &#8211; &eacute;&nbsp;&nbsp;x</div>"
    assert html_to_text(html) == "a & b <c> – é  x"


def test_inline_whitespace_collapses_but_pre_keeps_it() -> None:
    html = "<div>move\n   <b>c7-c6</b>  now</div><pre>11  . . .  11\n10  , , ,  10</pre>"
    assert html_to_text(html) == "move c7-c6 now\n11  . . .  11\n10  , , ,  10"


def test_blockquote_content_is_quoted_per_level() -> None:
    html = (
        "<div>g7-g6</div><blockquote>outer<br><blockquote>inner</blockquote>"
        "back out</blockquote><div>after</div>"
    )
    assert html_to_text(html) == "g7-g6\n> outer\n> > inner\n> back out\nafter"
    assert fresh_text(html_to_text(html)) == "g7-g6\n\nafter"


def test_empty_nbsp_block_is_a_blank_line_and_hr_is_a_rule() -> None:
    html = "<p>a</p><p>&nbsp;</p><p>b</p><hr><p>old</p>"
    assert html_to_text(html) == f"a\n\nb\n{RULE_LINE}\nold"
    assert fresh_text(html_to_text(html)) == "a\n\nb"


def test_signature_class_becomes_a_signature_separator() -> None:
    html = '<div>e3-e4</div><div class="gmail_signature">Alice<br>alice.example</div>'
    assert fresh_text(html_to_text(html)) == "e3-e4"


def test_broken_html_does_not_raise() -> None:
    assert html_to_text("<div><p>unclosed <b>bold</div></span><blockquote>q") == (
        "unclosed bold\n> q"
    )


def test_gmail_html_alternative_alone_gives_the_same_fresh_text() -> None:
    msg = message_from_bytes((DATA / "gmail_alternative.eml").read_bytes(), policy=policy.default)
    html_part = next(part for part in msg.walk() if part.get_content_type() == "text/html")
    text = html_to_text(html_part.get_content())
    assert "> 11  . . . . , , , . . . .  11" in text  # nbsp padding preserved, quoted
    assert (
        fresh_text(text) == "e3-e4\n\nYour turn again :) Let's see if you spot the trap this time."
    )


def test_hostile_nesting_stays_quoted_with_a_bounded_prefix() -> None:
    text = html_to_text("<div>e3-e4</div>" + "<blockquote>x" * 500)
    lines = text.split("\n")
    assert lines[0] == "e3-e4"
    assert all(line.startswith(">") for line in lines[1:])
    assert max(len(line) for line in lines) < 100
    assert fresh_text(text) == "e3-e4"


def test_unclosed_head_ends_at_body() -> None:
    assert html_to_text("<html><head><title>T</title><meta x=1><body><p>e3-e4</p>") == "e3-e4"


def test_webmail_quote_containers_count_as_quotes() -> None:
    html = (
        "<div>g7-g6</div><div class='yahoo_quoted'><div>On Sunday, pbm wrote:</div>"
        "<pre>Summary of Quadrature Board 101</pre></div><div>after</div>"
    )
    assert html_to_text(html) == (
        "g7-g6\n> On Sunday, pbm wrote:\n> Summary of Quadrature Board 101\nafter"
    )
