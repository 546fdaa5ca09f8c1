"""What a message is about, for the order messages are processed in: its sender's
mailbox and each board its command lines name (`GAME VERB BOARD ...`).

Two messages sharing a key are processed in the order they were accepted, whichever
daemon holds them (pbm.store.claims.claim_inbound): a player's move and then his
resignation, or one player's move and then the other's answer to it, never run the
other way round after a crash. A key too many only makes a message wait for an earlier
one that runs anyway, so the reading here is lenient: any game line's third word counts
as a board.
"""

from __future__ import annotations

from pbm.commands.finder import find_commands
from pbm.commands.registry import game_and_variant
from pbm.mail.identity import MailboxRules, mailbox_key
from pbm.mail.inbound import InboundMail

# Keys kept per message: a `multiple` message of many lines orders by its first boards.
MAX_KEYS = 20
# The longest key stored (inbound_keys.key).
KEY_CHARS = 255


def order_keys(mail: InboundMail, rules: MailboxRules) -> list[str]:
    """`from:MAILBOX` for a sender (its mailbox under the operator's `rules`, as consent
    and budgets key it), `board:GAME:BOARD` per board named, each once."""
    keys: list[str] = []
    if mail.sender:
        keys.append(f"from:{mailbox_key(mail.sender, rules)}")
    for line in find_commands(mail.command_subject, mail.fresh_text):
        words = line.text.split()
        found = game_and_variant(words[0]) if len(words) >= 3 else None
        if found is not None:
            keys.append(f"board:{found[0].name}:{words[2].lower()}")
    return [key[:KEY_CHARS] for key in dict.fromkeys(keys)][:MAX_KEYS]
