"""Errors that reach a person or an agent as one clear line."""

from __future__ import annotations


class CodepithError(Exception):
    """A problem with the user's input or environment; surfaces print ``str(err)`` and exit non-zero."""


class ModelError(CodepithError):
    """The embedding model could not be found or loaded."""


class PathError(CodepithError):
    """A path is missing, of the wrong kind, or outside the allowed root."""
