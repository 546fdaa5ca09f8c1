"""Use-cases shared by the mail commands and the CLI. No commits inside: callers own
transactions (the pipeline commits once per message)."""
