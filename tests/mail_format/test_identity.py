"""pbm.mail.identity: every spelling of one mailbox has one key; other mailboxes differ."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbm.mail.identity import MailboxRules, mailbox_key


@pytest.mark.parametrize(
    "spelling",
    [
        "alice@bücher.example",
        "Alice@BÜCHER.example",
        "alice@xn--bcher-kva.example",
        "alice@XN--BCHER-KVA.EXAMPLE",
        "alice@bu\u0308cher.example",  # NFD
        "alice+chess@bücher.example",
        "alice+0@bücher.example.",
        "ALICE+a+b@bücher.example",
    ],
)
def test_spellings_of_one_mailbox_share_a_key(spelling: str) -> None:
    assert mailbox_key(spelling) == "alice@xn--bcher-kva.example"


def test_different_mailboxes_differ() -> None:
    assert mailbox_key("alice@example.org") != mailbox_key("alicia@example.org")
    assert mailbox_key("alice@example.org") != mailbox_key("alice@example.com")


def test_rules_are_the_operators() -> None:
    strict = MailboxRules(tag_separators="", fold_local_case=False)
    assert mailbox_key("Alice+x@example.org", strict) == "Alice+x@example.org"
    dash = MailboxRules(tag_separators="+-")
    assert mailbox_key("alice-news@example.org", dash) == "alice@example.org"


def test_a_local_part_that_is_all_tag_keeps_its_text() -> None:
    assert mailbox_key("+x@example.org") == "+x@example.org"


@given(st.text(alphabet="abcXYZ+.-é", min_size=1, max_size=12))
def test_key_is_idempotent(local: str) -> None:
    key = mailbox_key(f"{local}@Example.org")
    assert mailbox_key(key) == key
