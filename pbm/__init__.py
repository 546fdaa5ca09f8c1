"""pbm: a play-by-email server for abstract board games."""

__version__ = "0.1.0"
