"""The `codepith` command: parse arguments, call the library, print. Errors are one line and exit 2."""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from codepith._version import __version__
from codepith.errors import CodepithError
from codepith.files.names import show_example, show_name
from codepith.limits import MAX_MAX_CHARS, MAX_TOP_K, MIN_MAX_CHARS

if TYPE_CHECKING:
    from codepith.api import Index
    from codepith.files.source import SkipReport
    from codepith.search.result import SearchResult

EXIT_USAGE = 2
OUTLINE_CHARS = 4000


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"codepith: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _progress_printer(label: str, min_files: int = 1) -> Callable[[int, int], None] | None:
    """A progress bar on stderr when it is a terminal, for batches of at least ``min_files`` files."""
    if not sys.stderr.isatty():
        return None
    last = [0.0]

    def show(done: int, total: int) -> None:
        if total < min_files:
            return
        now = time.monotonic()
        if done != total and now - last[0] < 0.1:
            return
        last[0] = now
        width = 30
        filled = int(width * done / max(total, 1))
        sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} files")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def _open_index(args: argparse.Namespace, paths: Sequence[str], progress_from: int = 1) -> Index:
    from codepith.api import Index
    from codepith.service.repos import resolve_repo

    def status(message: str) -> None:
        print(f"codepith: {message}", file=sys.stderr)

    roots = resolve_repo(list(paths) if paths else None, base=Path.cwd(), status=status)
    return Index.from_paths(
        list(roots),
        content=args.content,
        model=args.model,
        progress=_progress_printer("indexing", progress_from),
        watch=False,  # one search and out: a watcher's start would cost more than the one stat check
    )


def _cli_read_call(index: Index, cwd: Path) -> Callable[[str, int, int], str]:
    from codepith.output.read import cli_read_call

    def call(path: str, start: int, end: int) -> str:
        root, rel = index.locate(path)
        cmd = cli_read_call(rel, start, end)
        if root != cwd:
            cmd += f" --root {shlex.quote(str(root))}"
        return cmd

    return call


def _record(call: str, results: int, text: str, source_chars: int) -> None:
    from codepith.output import savings

    savings.record(call, results, len(text), source_chars)


def _emit_results(
    args: argparse.Namespace,
    index: Index,
    query: str,
    results: list[SearchResult],
    call: str,
    notes: Sequence[str] = (),
    confident: bool = True,
) -> None:
    if args.format == "json":
        from codepith.output.jsonfmt import results_to_json

        data = results_to_json(query, results, max_snippet_lines=args.max_snippet_lines, notes=notes)
        data["confident"] = confident
        text = json.dumps(data, indent=1)
    else:
        from codepith.output.packets import render_packet

        text = render_packet(
            query,
            results,
            max_chars=args.max_chars,
            read_call=_cli_read_call(index, Path.cwd().resolve()),
            notes=notes,
            enclosing=index.enclosing,
            confident=confident,
            file_lines=index.file_lines if call == "search" else None,
        )
    print(text)
    _record(call, len(results), text, index.source_chars(results))


def cmd_search(args: argparse.Namespace) -> int:
    if not args.query.strip():
        raise CodepithError("empty query")
    index = _open_index(args, args.paths, progress_from=100)  # a bar only when it is a long wait
    results = index.search(args.query, top_k=args.top_k, refresh=False)
    confident = index.confidence(args.query).confident
    _emit_results(args, index, args.query, results, "search", index.search_notes(args.query), confident)
    return 0


def cmd_related(args: argparse.Namespace) -> int:
    from codepith.output.packets import related_query

    index = _open_index(args, args.paths, progress_from=100)  # a bar only when it is a long wait
    results = index.find_related(args.file, args.line, top_k=args.top_k, refresh=False)
    seed = index.chunk_at(args.file, args.line)
    query = related_query(seed) if args.format == "text" else f"related to {seed.file_path}:{args.line}"
    _emit_results(args, index, query, results, "related")
    return 0


def cmd_read(args: argparse.Namespace) -> int:
    from codepith.output.read import cli_read_call, format_read, read_lines
    from codepith.output.savings import source_chars

    root = Path(args.root)
    result = read_lines(root, args.path, args.start, args.end, max_chars=args.max_chars)
    text = format_read(result, read_call=_root_kept(cli_read_call, root))
    print(text)
    _record("read", 1, text, source_chars(root, [result.rel_path]))
    return 0


def _root_suffix(root: Path) -> str:
    """`` --root DIR`` when DIR is not the working folder, so a printed command runs as is."""
    try:
        same = root.resolve() == Path.cwd().resolve()
    except OSError:
        same = False
    return "" if same else f" --root {shlex.quote(str(root.resolve()))}"


def _root_kept(call: Callable[[str, int, int], str], root: Path) -> Callable[[str, int, int], str]:
    suffix = _root_suffix(root)
    return lambda path, start, end: call(path, start, end) + suffix


def cmd_outline(args: argparse.Namespace) -> int:
    from codepith.output.outline import cli_outline_call, render_outline
    from codepith.service.tools import outline_limit

    path = args.path
    if args.root is not None:
        root = Path(args.root)
    elif _is_dir(path):  # a folder: inside the working folder, map it within the working folder's index
        folder, cwd = Path(path).resolve(), Path.cwd().resolve()
        inside = folder == cwd or cwd in folder.parents
        root, path = (cwd, folder.relative_to(cwd).as_posix()) if inside else (folder, ".")
    else:
        root = Path(".")
    index = _open_index(args, [str(root)])
    result = index.outline(path, focus=args.focus, limit=outline_limit(args.max_chars))
    suffix = _root_suffix(index.roots[0])
    text = render_outline(
        result,
        max_chars=args.max_chars,
        read_call=_cli_read_call(index, Path.cwd().resolve()),
        outline_call=lambda p: cli_outline_call(p) + suffix,
    )
    print(text)
    return 0


def _is_dir(path: str) -> bool:
    """``Path.is_dir`` without its OSError for a name past the file system's limit (an internal error)."""
    try:
        return Path(path).is_dir()
    except (OSError, ValueError):
        return False


def cmd_index(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    index = _open_index(args, args.paths)
    if args.verify:
        index.verify(progress=_progress_printer("indexing", 1))
    for root, stats in zip(index.roots, index.last_stats, strict=True):
        reason = index.rebuilt.get(str(root))
        shown = show_name(str(root))  # a folder name may hold a newline, which would forge a report line
        if reason:  # warned of as it was found; this says how it ended (a segment's files, or all, redone)
            done = "verified: damage found and repaired" if args.verify else "cached index repaired"
            print(f"{shown}: {done} ({reason})")
        elif args.verify:
            print(f"{shown}: verified: every byte of the index matches its checksums")
        print(
            f"{shown}: {stats.files} files, {stats.chunks} chunks "
            f"(added {stats.added}, changed {stats.changed}, removed {stats.removed}, unchanged {stats.unchanged})"
        )
        _print_report(f"skipped {stats.skipped.total} files", stats.skipped)
        _print_report(f"line windows after a chunking error: {stats.fallbacks.total} files", stats.fallbacks)
        for note in stats.notes:
            print(f"  {note}")
    unsaved = index.unsaved
    for where, why in unsaved.items():
        print(f"codepith: error: {show_name(str(where))}: not saved in the index cache ({why})", file=sys.stderr)
    print(f"done in {time.perf_counter() - t0:.2f}s")
    return 1 if unsaved else 0


def _print_report(title: str, report: SkipReport) -> None:
    if not report.total:
        return
    print(f"  {title}:")
    for why, n in sorted(report.counts.items(), key=lambda kv: -kv[1]):
        examples = ", ".join(show_example(e) for e in report.examples.get(why, []))
        print(f"    {why}: {n}" + (f" (e.g. {examples})" if examples else ""))


def _human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def cmd_cache(args: argparse.Namespace) -> int:
    from codepith.store import layout as store

    entries = store.list_cached()
    print(f"cache folder: {store.cache_root()}")
    if not entries:
        print("no cached indexes")
        return 0
    print(f"{'size':>9}  {'files':>6}  {'chunks':>7}  {'content':<7}  {'model':<20}  {'updated':<16}  source")
    for e in entries:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.updated)) if e.updated else "?"
        flag = "  (orphan: source gone)" if e.orphan else ""
        if not e.finished:
            flag += "  (unfinished: a first build stopped or running; the next build resumes it)"
        if e.outdated:
            flag += f"  (outdated: index format {e.format}, this version reads {store.FORMAT_VERSION})"
        model = e.model if len(e.model) <= 20 else "..." + e.model[-17:]
        print(
            f"{_human_bytes(e.bytes):>9}  {e.files:>6}  {e.chunks:>7}  {e.content:<7}  {model:<20}  "
            f"{when:<16}  {show_name(str(e.root))}{flag}"
        )
    print(f"{len(entries)} indexes, {_human_bytes(sum(e.bytes for e in entries))}")
    _print_clones()
    return 0


def _print_clones() -> None:
    from codepith.service.repos import list_clones

    clones = list_clones()
    if clones:
        size = sum(c.bytes for c in clones)
        print(f"{len(clones)} cloned repositor{'ies' if len(clones) != 1 else 'y'}, {_human_bytes(size)}:")
        for c in clones:
            print(f"  {c.url}" + (f" @{c.ref}" if c.ref else "") + f"  {show_name(str(c.folder))}")


def cmd_clear(args: argparse.Namespace) -> int:
    """Remove what was asked and say exactly what went and what stayed (exit 1 if anything stayed)."""
    from codepith.store import layout as store

    root = store.cache_root()
    if root.exists() and not root.is_dir():
        raise CodepithError(f"cache folder {root} is not a folder; nothing removed")
    entries = store.list_cached()
    if args.what == "orphans":
        entries = [e for e in entries if e.stale]
    failed: list[tuple[str, str]] = []
    removed = 0
    for e in entries:
        why = store.remove(e)
        if why is None:
            removed += 1
            print(f"removed index of {show_name(e.root)} ({e.content}, {e.model}): {e.folder}")
        else:
            failed.append((str(e.folder), why))
    if args.what == "all":
        from codepith.output.savings import stats_path
        from codepith.service.repos import list_clones, remove_clone

        for clone in list_clones():
            why = remove_clone(clone)
            if why is None:
                print(f"removed clone of {clone.url}: {clone.folder}")
            else:
                failed.append((str(clone.folder), why))

        stats = stats_path()
        try:
            stats.unlink()
            print(f"removed savings log: {stats}")
        except FileNotFoundError:
            print(f"no savings log to remove ({stats})")
        except OSError as exc:
            failed.append((str(stats), exc.strerror or str(exc)))
    print(f"removed {removed} cached index{'es' if removed != 1 else ''}")
    for path, why in failed:
        print(f"codepith: could not remove {path}: {why}", file=sys.stderr)
    return 1 if failed else 0


def cmd_file_types(args: argparse.Namespace) -> int:
    from codepith.files.types import file_types_table

    rows = file_types_table()
    print(f"{'extension/name':<22} {'language':<14} kind")
    for ext, lang, kind in rows:
        print(f"{ext:<22} {lang:<14} {kind}")
    return 0


def cmd_savings(args: argparse.Namespace) -> int:
    from codepith.output import savings

    print(savings.format_summary(savings.summary()))
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from codepith.surfaces.mcp.server import serve

    serve(args.paths, content=args.content, model=args.model, allow=args.allow)
    return 0


def cmd_agents(args: argparse.Namespace) -> int:
    """`install` / `uninstall`: wire codepith into agent clients, or take it out again (codepith.agents)."""
    from codepith.agents.clients import KINDS, Env
    from codepith.agents.install import Options, Ui, run

    kinds = KINDS if args.type == "all" else (args.type,)
    opts = Options(tuple(args.agent or ()), kinds, args.scope, args.yes, args.dry_run, args.force)
    ui = Ui(print, lambda m: print(m, file=sys.stderr), input, sys.stdin.isatty() and sys.stdout.isatty())
    return run(args.command, opts, Env.from_os(), ui)


def _agents_parsers(sub: argparse._SubParsersAction) -> None:
    for name, what in (
        ("install", "wire codepith into agent clients (MCP server, instructions, sub-agent)"),
        ("uninstall", "remove exactly what install added"),
    ):
        a = sub.add_parser(name, help=what)
        a.add_argument(
            "--agent",
            action="append",
            metavar="NAME",
            help="claude, codex, cursor, opencode, gemini, vscode (repeatable; default: ask, or detected)",
        )
        a.add_argument("--type", choices=("mcp", "instructions", "subagent", "all"), default="all", help="default: all")
        a.add_argument(
            "--scope",
            choices=("user", "project"),
            default="user",
            help="user: your config files; project: files in the current folder",
        )
        a.add_argument("--yes", action="store_true", help="apply without asking (for scripts)")
        a.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
        a.add_argument("--force", action="store_true", help="replace/remove a 'codepith' entry codepith did not write")
        a.set_defaults(func=cmd_agents)


def _whole(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``minimum`` (and at most ``maximum``)."""

    def parse(value: str) -> int:
        try:
            n = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
        if n < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}: {value}")
        if maximum is not None and n > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum}: {value}")
        return n

    return parse


_positive = _whole(1)
_non_negative = _whole(0)
_top_k = _whole(1, MAX_TOP_K)
_max_chars = _whole(MIN_MAX_CHARS, MAX_MAX_CHARS)


def cmd_test(args: argparse.Namespace) -> int:
    from codepith.runner.process import stop_on_signals
    from codepith.runner.tool import run_cli

    words = [w for w in (args.runner, args.path) if w is not None]
    with stop_on_signals() as stop:  # SIGTERM, SIGINT, SIGHUP: kill the test group, remove its folder
        text, run = run_cli(words, args.select, args.timeout, args.max_chars)
    if stop.exit_code is not None:
        return stop.exit_code
    print(text)
    return run.exit.shell_code


def _add_test_command(sub: argparse._SubParsersAction[_Parser]) -> None:
    t = sub.add_parser("test", help="run the tests (allowlisted runner) and print only what explains failures")
    t.add_argument("runner", nargs="?", metavar="RUNNER", help="pytest, npm, pnpm, yarn, go, cargo (default: detect)")
    t.add_argument("path", nargs="?", metavar="PATH", help="repository folder (default: .)")
    t.add_argument("--select", default=None, help="node id / -k expression, go -run pattern, cargo filter, test file")
    t.add_argument("--timeout", type=_positive, default=300, help="seconds before the whole run is killed (300)")
    t.add_argument("--max-chars", type=_whole(200), default=6000, help="budget for the reply (default 6000)")
    t.set_defaults(func=cmd_test)


def build_parser() -> argparse.ArgumentParser:
    from codepith.files.types import CONTENT_TYPES

    p = _Parser(prog="codepith", description="Fast offline hybrid code search for AI coding agents.")
    p.add_argument("--version", action="version", version=f"codepith {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def index_opts(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--content", choices=CONTENT_TYPES, default="code", help="which files to index (default: code)")
        sp.add_argument(
            "--model", default=None, help="model2vec folder or Hugging Face id (default: bundled; env CODEPITH_MODEL)"
        )

    def output_opts(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("-k", "--top-k", type=_top_k, default=5, help=f"number of results, 1-{MAX_TOP_K} (default: 5)")
        sp.add_argument("--format", choices=("text", "json"), default="text")
        sp.add_argument(
            "--max-snippet-lines", type=_non_negative, default=None, help="JSON: 0 = location only, N = first N lines"
        )
        sp.add_argument(
            "--max-chars",
            type=_max_chars,
            default=6000,
            help=f"text: hard budget for the whole reply, {MIN_MAX_CHARS}-{MAX_MAX_CHARS} (default 6000)",
        )

    s = sub.add_parser("search", help="search one or more repositories")
    s.add_argument("query", help="what to find: words, identifiers, a traceback or an issue text")
    s.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="folders (or https:// git URLs, @ref optional) searched as one corpus (default: .)",
    )
    index_opts(s)
    output_opts(s)
    s.set_defaults(func=cmd_search)

    r = sub.add_parser("related", help="chunks similar to the code at FILE:LINE")
    r.add_argument("file", help="a file as results show it (or a path inside PATH)")
    r.add_argument("line", type=_positive, help="a line of FILE; its chunk is the seed")
    r.add_argument("paths", nargs="*", metavar="PATH", help="folders searched as one corpus (default: .)")
    index_opts(r)
    output_opts(r)
    r.set_defaults(func=cmd_related)

    rd = sub.add_parser("read", help="print numbered lines START..END of a file inside the root")
    rd.add_argument("path", help="file, relative to --root (or absolute, inside it)")
    rd.add_argument("start", type=_positive, help="first line (1-based)")
    rd.add_argument("end", type=_positive, help="last line (inclusive; at most 300 lines are shown)")
    rd.add_argument("--root", default=".", help="folder the path must stay inside (default: .)")
    rd.add_argument(
        "--max-chars",
        type=_whole(1000),
        default=20_000,
        help="budget for the whole reply; a longer line is cut with a marker (default 20000)",
    )
    rd.set_defaults(func=cmd_read)

    i = sub.add_parser("index", help="build or refresh the index of PATHs and report what was done")
    i.add_argument("paths", nargs="*", metavar="PATH", help="folders or https:// git URLs (default: .)")
    i.add_argument(
        "--verify",
        action="store_true",
        help="read every byte of the index against its checksums and redo what is damaged (a normal look "
        "compares sizes only)",
    )
    index_opts(i)
    i.set_defaults(func=cmd_index)

    o = sub.add_parser("outline", help="definitions of a file, or a folder's most referenced definitions")
    o.add_argument("path", help="a file or folder inside --root; '.' maps the whole repository")
    o.add_argument("--root", default=None, help="repository folder (default: PATH when it is a folder, else .)")
    o.add_argument(
        "--max-chars",
        type=_max_chars,
        default=OUTLINE_CHARS,
        help=f"hard budget for the reply, {MIN_MAX_CHARS}-{MAX_MAX_CHARS} (default {OUTLINE_CHARS})",
    )
    o.add_argument("--focus", default=None, help="a query the folder map leans toward")
    index_opts(o)
    o.set_defaults(func=cmd_outline)

    c = sub.add_parser("cache", help="list cached indexes with size and source")
    c.set_defaults(func=cmd_cache)

    cl = sub.add_parser(
        "clear", help="remove cached indexes: index (all indexes), orphans (sources gone or outdated), all"
    )
    cl.add_argument(
        "what",
        choices=("index", "orphans", "all"),
        help="index: every cached index; orphans: those whose source folder is gone or that an older codepith "
        "wrote in another index format; all: indexes and savings log",
    )
    cl.set_defaults(func=cmd_clear)

    ft = sub.add_parser("file-types", help="print which extensions are indexed, as which language and kind")
    ft.set_defaults(func=cmd_file_types)

    sv = sub.add_parser("savings", help="estimated tokens saved: today, last 7 days, all time")
    sv.set_defaults(func=cmd_savings)

    _add_test_command(sub)

    m = sub.add_parser("mcp", help="serve codepith over MCP (stdio)")
    m.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="folders (or https:// git URLs) served, searched as one corpus when no repo is named (default: .)",
    )
    m.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="DIR",
        help="a further folder requests may name with repo= (repeatable); nothing else is reachable",
    )
    index_opts(m)
    m.set_defaults(func=cmd_mcp)

    _agents_parsers(sub)
    return p


def entry() -> int:
    """The ``codepith`` command: ``main``, with the commands that may build supervised."""
    return main(supervise=True)


def main(argv: Sequence[str] | None = None, *, supervise: bool = False) -> int:
    """The command line, in this process (``supervise``: the build commands in a watched child, which
    only a process that is nothing but this command may do: a fork copies its caller too)."""
    logging.basicConfig(level=logging.WARNING, format="codepith: warning: %(message)s", stream=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        # paths are kept exactly, undecodable bytes included: write them back as the same bytes
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="surrogateescape")
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        _restore_dropped_values(parser, args)
    except CodepithError as exc:
        print(f"codepith: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if supervise and args.command in _SUPERVISED:  # a file's parse may kill or hang a build: see index/supervise.py
        from codepith.index.supervise import supervised

        return supervised(lambda: _run(args))
    return _run(args)


def _restore_dropped_values(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """argparse (Python 3.11) drops the value of ``--opt=--`` and stores [] without calling the option's
    type, so a command met a list where it checks a number or a string (an internal error). The value
    given was ``--``: it is put back and judged as any other value would be."""
    groups = parser._subparsers._group_actions if parser._subparsers is not None else []  # noqa: SLF001
    for group in groups:
        sub = (group.choices or {}).get(args.command) if isinstance(group.choices, dict) else None
        for action in getattr(sub, "_actions", ()):
            if not action.option_strings or action.nargs is not None:
                continue
            got = getattr(args, action.dest, None)
            if isinstance(action, argparse._AppendAction):  # noqa: SLF001 - --allow=-- appends []
                if isinstance(got, list) and [] in got:
                    setattr(args, action.dest, [_judged(action) if g == [] else g for g in got])
            elif isinstance(action, argparse._StoreAction) and got == []:  # noqa: SLF001 - --opt=--
                setattr(args, action.dest, _judged(action))


def _judged(action: argparse.Action) -> object:
    """``--`` as ``action`` takes a value: its type and choices applied, one line when they refuse it."""
    name, value = "/".join(action.option_strings), "--"
    if callable(action.type):
        try:
            return action.type(value)
        except (TypeError, ValueError, argparse.ArgumentTypeError) as exc:
            raise CodepithError(f"argument {name}: {exc}") from None
    if action.choices is not None and value not in action.choices:
        raise CodepithError(f"argument {name}: invalid choice: '--'")
    return value


_SUPERVISED = frozenset({"search", "related", "index", "outline"})  # the commands that may build an index


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args.func(args) or 0)
    except CodepithError as exc:
        print(f"codepith: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # never a traceback for a person; CODEPITH_DEBUG=1 shows it
        if os.environ.get("CODEPITH_DEBUG"):
            raise
        print(f"codepith: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(entry())
