"""The mail command language (pbmserv's): a finder that turns a message into command
lines, and one declarative command class per verb (name, usage, summary, run)."""
