"""The raw-mail layer: parse inbound mail, find reply tokens, compose replies.

No game rules and no database here; see docs/mail-format.md. Importing this package
runs nothing: each module is imported by its name.
"""
