"""Errors that reach a person or an agent as one clear line."""

from __future__ import annotations


class CodepithError(Exception):
    """A problem with the user's input or environment; surfaces print ``str(err)`` and exit non-zero."""


class ModelError(CodepithError):
    """The embedding model could not be found or loaded."""


class PathError(CodepithError):
    """A path is missing, of the wrong kind, or outside the allowed root."""


class ArgumentError(CodepithError, ValueError):
    """A caller's argument of the right type whose value is refused (a line of 0, an empty query)."""


class ArgumentTypeError(CodepithError, TypeError):
    """A caller's argument of the wrong type (a query of bytes, a line of 1.5, a path of None)."""


SHOWN_CHARS = 80  # the most of a caller's value an error echoes


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for an error line, cut to ``limit`` characters: never a megabyte of a caller's
    string, and never a failure of its own (an int of 5,000 digits has no ``repr`` past Python's limit)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a repr that fails (a huge int, a broken __repr__) still gives a line
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


def whole_number(name: str, value: object, low: int, high: int | None = None) -> int:
    """``value`` as an ``int`` from ``low`` to ``high``: any integer type (numpy's too), never a bool, a
    float or a string; refused in one short line otherwise."""
    span = f"from {low} to {high}" if high is not None else f"of {low} or more"
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        raise ArgumentTypeError(f"{name} must be a whole number {span}, got {shown(value)}")
    try:
        number = value.__index__()  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        raise ArgumentTypeError(f"{name} must be a whole number {span}, got {shown(value)}") from None
    if not isinstance(number, int):
        raise ArgumentTypeError(f"{name} must be a whole number {span}, got {shown(value)}")
    if number < low:
        raise ArgumentError(f"{name} must be {low} or more, got {shown(number)}")
    if high is not None and number > high:
        raise ArgumentError(f"{name} must be at most {high:,}, got {shown(number)}")
    return int(number)


def text_argument(name: str, value: object) -> str:
    """``value`` when it is a ``str`` (bytes, None and the rest refused in one line)."""
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def flag(name: str, value: object) -> bool:
    """``value`` when it is a bool: a truthy string like "no" is not taken for True."""
    if not isinstance(value, bool):
        raise ArgumentTypeError(f"{name} must be True or False, got {shown(value)}")
    return value


def path_argument(name: str, value: object) -> str:
    """``value`` as a path string: a ``str`` or an ``os.PathLike`` naming one (``pathlib.Path``); bytes,
    None, numbers refused in one line."""
    import os

    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be a str or os.PathLike path, got {type(value).__name__}")
    return value
