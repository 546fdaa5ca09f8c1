"""The mail command language (pbmserv's): a finder that turns a message into command
lines, and one declarative command class per verb (name, usage, summary, run).

Importing this package registers nothing: the composition root (pbm.app) registers
each module's commands, in the help groups and order `help` lists them in.
"""
