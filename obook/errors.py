"""Errors a user can cause; the CLI prints them without a traceback."""


class ObookError(Exception):
    """Base class of every error caused by bad input rather than a bug."""


class IllegalMoveError(ObookError, ValueError):
    """A move that the rules forbid (occupied point, suicide, ko, superko) or a malformed vertex."""
