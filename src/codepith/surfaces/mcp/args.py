"""Argument checks for tool calls: one clear line per mistake, raised as CodepithError."""

from __future__ import annotations

from typing import Any

from codepith.errors import CodepithError
from codepith.surfaces.mcp.schemas import SCHEMAS


def check_args(name: str, args: dict[str, Any]) -> None:
    schema = SCHEMAS[name]
    props: dict[str, Any] = schema["properties"]
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise CodepithError(f"{name}: unknown argument {unknown[0]!r}; expected {', '.join(props)}")
    for key in schema.get("required", ()):
        if args.get(key) is None:
            raise CodepithError(f"{name}: missing required argument {key!r}")


_HUGE = 10**18  # beyond any count, line or budget an argument can mean


def get_int(args: dict[str, Any], key: str, default: int | None, low: int, high: int | None = None) -> int:
    value = args.get(key, default)
    if isinstance(value, float) and value.is_integer():
        value = int(value) if abs(value) < _HUGE else _HUGE
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        # int() of a 5,000-digit string raises (Python's limit), and no argument needs 19 digits
        digits = value.strip().lstrip("-")
        value = int(value) if len(digits) <= 18 else _HUGE
    if isinstance(value, bool) or not isinstance(value, int):
        raise CodepithError(f"{key} must be a whole number, got {str(value)[:40]!r}")
    if abs(value) >= _HUGE:
        raise CodepithError(f"{key} is out of range (at least {low}" + (f", at most {high})" if high else ")"))
    if value < low:
        raise CodepithError(f"{key} must be at least {low}, got {value}")
    if high is not None and value > high:
        raise CodepithError(f"{key} must be at most {high}, got {value}")
    return value


def get_str(args: dict[str, Any], key: str, default: str | None = None) -> str | None:
    value = args.get(key, default)
    if value is not None and not isinstance(value, str):
        raise CodepithError(f"{key} must be a string, got {type(value).__name__}")
    return value


def get_repo(args: dict[str, Any]) -> str | list[str] | None:
    value = args.get("repo")
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise CodepithError("repo must be a folder path, a list of folder paths, or an https:// git URL")


def get_content(args: dict[str, Any], default: str) -> str:
    value = get_str(args, "content", default) or default
    if value not in ("code", "docs", "config", "all"):
        raise CodepithError(f"unknown content {value!r}; choose code, docs, config or all")
    return value


DEFAULT_SNIPPET_LINES = 10  # csp's default for JSON results


def get_format(args: dict[str, Any]) -> str:
    value = get_str(args, "format", "packet") or "packet"
    if value not in ("packet", "json"):
        raise CodepithError(f"unknown format {value!r}; choose packet or json")
    return value


def get_snippet_lines(args: dict[str, Any]) -> int | None:
    """csp's tri-state: absent -> 10 lines, null -> the whole chunk, 0 -> location only, N -> N lines."""
    if "max_snippet_lines" not in args:
        return DEFAULT_SNIPPET_LINES
    if args["max_snippet_lines"] is None:
        return None
    return get_int(args, "max_snippet_lines", None, 0)
