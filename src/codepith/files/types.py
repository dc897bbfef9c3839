"""Which language and content kind a file is, judged by its name alone (no reads, so walks stay fast).

Language names equal the ones ``semble_grammars.available_languages()`` uses wherever a grammar exists,
so the chunker can hand them straight to tree-sitter; other languages get a plain lowercase name and are
chunked without a grammar.
"""

from __future__ import annotations

from ..errors import CodepithError

CODE = "code"
DOCS = "docs"
CONFIG = "config"
CONTENT_TYPES = ("code", "docs", "config", "all")

# language -> extensions (with the dot, lowercase); grouped by kind so the table reads like the docs.
_CODE_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "astro": (".astro",),
    "bash": (".sh", ".bash", ".bats", ".zsh", ".ksh"),
    "batch": (".bat", ".cmd"),
    "c": (".c", ".h"),
    "clojure": (".clj", ".cljs", ".cljc"),
    "cmake": (".cmake",),
    "cpp": tuple(".cc .cpp .cxx .c++ .hpp .hh .hxx .h++ .ipp .inl .tpp .tcc .cu .cuh".split()),
    "csharp": (".cs", ".csx"),
    "css": (".css",),
    "dart": (".dart",),
    "dockerfile": (".dockerfile",),
    "elixir": (".ex", ".exs"),
    "embedded_template": (".erb", ".ejs"),
    "erlang": (".erl", ".hrl"),
    "fortran": (".f", ".for", ".f90", ".f95", ".f03", ".f08"),
    "go": (".go",),
    "gotmpl": (".gotmpl",),
    "graphql": (".graphql", ".gql"),
    "groovy": (".groovy", ".gradle", ".gvy"),
    "haskell": (".hs",),
    "hcl": (".tf", ".hcl"),
    "heex": (".heex",),
    "html": (".html", ".htm"),
    "java": (".java",),
    "javascript": (".js", ".jsx", ".mjs", ".cjs"),
    "jinja2": (".j2", ".jinja", ".jinja2"),
    "jsonnet": (".jsonnet", ".libsonnet"),
    "julia": (".jl",),
    "just": (".just",),
    "kotlin": (".kt", ".kts"),
    "lua": (".lua",),
    "make": (".mk", ".mak"),
    "nix": (".nix",),
    "objc": (".m", ".mm"),
    "ocaml": (".ml", ".mli"),
    "perl": (".pl", ".pm", ".t"),
    "php": (".php", ".phtml"),
    "powershell": (".ps1", ".psm1", ".psd1"),
    "proto": (".proto",),
    "python": (".py", ".pyi", ".pyw"),
    "r": (".r",),
    "racket": (".rkt",),
    "ruby": (".rb", ".rake", ".gemspec", ".ru"),
    "rust": (".rs",),
    "scala": (".scala", ".sc"),
    "scheme": (".scm", ".ss"),
    "scss": (".scss",),
    "solidity": (".sol",),
    "sql": (".sql",),
    "starlark": (".bzl", ".star"),
    "svelte": (".svelte",),
    "swift": (".swift",),
    "tsx": (".tsx",),
    "typescript": (".ts", ".mts", ".cts"),
    "vim": (".vim",),
    "vue": (".vue",),
    "wat": (".wat", ".wast"),
    "zig": (".zig",),
    # No bundled grammar: indexed with grammar-free chunking.
    "ada": (".ada", ".adb", ".ads"),
    "assembly": (".asm", ".s"),
    "awk": (".awk",),
    "crystal": (".cr",),
    "elisp": (".el",),
    "elm": (".elm",),
    "fish": (".fish",),
    "fsharp": (".fs", ".fsi", ".fsx"),
    "gleam": (".gleam",),
    "glsl": (".glsl", ".vert", ".frag", ".wgsl"),
    "less": (".less", ".sass"),
    "lisp": (".lisp", ".lsp"),
    "nim": (".nim",),
    "pascal": (".pas",),
    "purescript": (".purs",),
    "rescript": (".res",),
    "tcl": (".tcl",),
    "verilog": (".sv", ".svh", ".vh"),
    "vhdl": (".vhd", ".vhdl"),
    "visualbasic": (".vb", ".vbs"),
    "cython": (".pyx", ".pxd"),
}

_DOCS_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "asciidoc": (".adoc", ".asciidoc"),
    "latex": (".tex",),
    "markdown": (".md", ".markdown", ".mdx", ".mkd"),
    "org": (".org",),
    "rst": (".rst",),
    "text": (".txt", ".text"),
    "typst": (".typ",),
}

_CONFIG_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "dtd": (".dtd",),
    "ini": (".ini", ".cfg", ".conf"),
    "json": (".json",),
    "json5": (".json5",),
    "jsonc": (".jsonc",),
    "kdl": (".kdl",),
    "properties": (".properties",),
    "toml": (".toml",),
    "xml": (".xml", ".xsd", ".xsl", ".xslt", ".plist", ".csproj", ".fsproj", ".vbproj", ".props", ".targets"),
    "yaml": (".yaml", ".yml"),
}

# Exact file names (checked before extensions, case-sensitive as on disk).
_NAMES: dict[str, tuple[str, str]] = {
    "Makefile": ("make", CODE),
    "makefile": ("make", CODE),
    "GNUmakefile": ("make", CODE),
    "Dockerfile": ("dockerfile", CODE),
    "Containerfile": ("dockerfile", CODE),
    "Justfile": ("just", CODE),
    "justfile": ("just", CODE),
    "CMakeLists.txt": ("cmake", CODE),
    "Rakefile": ("ruby", CODE),
    "Gemfile": ("ruby", CODE),
    "config.ru": ("ruby", CODE),
    "Vagrantfile": ("ruby", CODE),
    "Podfile": ("ruby", CODE),
    "Brewfile": ("ruby", CODE),
    "Guardfile": ("ruby", CODE),
    "Capfile": ("ruby", CODE),
    "Jenkinsfile": ("groovy", CODE),
    "BUILD": ("starlark", CODE),
    "BUILD.bazel": ("starlark", CODE),
    "WORKSPACE": ("starlark", CODE),
    "WORKSPACE.bazel": ("starlark", CODE),
    "MODULE.bazel": ("starlark", CODE),
    "Tiltfile": ("starlark", CODE),
    ".bashrc": ("bash", CODE),
    ".bash_profile": ("bash", CODE),
    ".zshrc": ("bash", CODE),
    ".profile": ("bash", CODE),
    "README": ("text", DOCS),
    "CHANGELOG": ("text", DOCS),
    "CHANGES": ("text", DOCS),
    "CONTRIBUTING": ("text", DOCS),
    "AUTHORS": ("text", DOCS),
    "NEWS": ("text", DOCS),
    "go.mod": ("gomod", CONFIG),
    "go.work": ("gomod", CONFIG),
    ".editorconfig": ("ini", CONFIG),
    ".gitmodules": ("ini", CONFIG),
    ".env.example": ("dotenv", CONFIG),
    ".env.sample": ("dotenv", CONFIG),
    ".env.template": ("dotenv", CONFIG),
    ".env.dist": ("dotenv", CONFIG),
}


def _build_extension_map() -> dict[str, tuple[str, str]]:
    table: dict[str, tuple[str, str]] = {}
    for kind, group in ((CODE, _CODE_EXTENSIONS), (DOCS, _DOCS_EXTENSIONS), (CONFIG, _CONFIG_EXTENSIONS)):
        for language, extensions in group.items():
            for ext in extensions:
                if ext in table:  # a table bug, caught by the tests at import time
                    raise ValueError(f"extension {ext} listed twice")
                table[ext] = (language, kind)
    return table


_EXTENSIONS = _build_extension_map()


# Template suffixes wrapping a real file type: "model.rb.tt" (Thor/Rails), "config.h.in" (autoconf).
_TEMPLATE_SUFFIXES = frozenset({".tt", ".in", ".tmpl", ".template"})

# Interpreters named on a "#!" line, for extensionless scripts (bin/, libexec/).
_INTERPRETERS: dict[str, str] = {
    "sh": "bash", "bash": "bash", "zsh": "bash", "ksh": "bash", "dash": "bash", "bats": "bash",
    "python": "python", "python2": "python", "python3": "python", "node": "javascript", "deno": "typescript",
    "ruby": "ruby", "perl": "perl", "php": "php", "lua": "lua", "Rscript": "r", "elixir": "elixir",
}  # fmt: skip


def classify(rel_path: str) -> tuple[str, str] | None:
    """(language, kind) for a path, or None when codepith does not index that type of file."""
    name = rel_path.rpartition("/")[2]
    hit = _NAMES.get(name)
    if hit is not None:
        return hit
    if name.startswith(("Dockerfile.", "Containerfile.")):  # Dockerfile.dev and friends
        return ("dockerfile", CODE)
    dot = name.rfind(".")
    if dot <= 0:  # no extension, or a dotfile such as ".gitignore"
        return None
    ext = name[dot:].lower()
    if ext in _TEMPLATE_SUFFIXES:
        return classify(name[:dot])
    return _EXTENSIONS.get(ext)


def shebang_language(first_line: str) -> str | None:
    """Language of a script from its ``#!`` line (``#!/usr/bin/env python3 -u`` -> "python"), or None."""
    if not first_line.startswith("#!"):
        return None
    words = first_line[2:].split()
    if not words:
        return None
    program = words[0].rpartition("/")[2]
    if program == "env":
        args = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        if not args:
            return None
        program = args[0]
    language = _INTERPRETERS.get(program)
    if language is None and program.startswith("python"):  # python3.12
        language = "python"
    return language


def check_content(content: str) -> str:
    """Validate a content selection early so a typo is one clear line, not an empty index."""
    if content not in CONTENT_TYPES:
        raise CodepithError(f"unknown content type {content!r}: choose one of {', '.join(CONTENT_TYPES)}")
    return content


def selected(kind: str, content: str) -> bool:
    """Whether a file of this kind belongs to the content selection (``all`` takes every kind)."""
    check_content(content)
    return content == "all" or kind == content


def file_types_table() -> list[tuple[str, str, str]]:
    """(extension-or-name, language, kind) rows sorted by kind then language, for ``codepith file-types``."""
    rows = [(ext, lang, kind) for ext, (lang, kind) in _EXTENSIONS.items()]
    rows += [(name, lang, kind) for name, (lang, kind) in _NAMES.items()]
    rows.append(("Dockerfile.*", "dockerfile", CODE))
    rows += [(f"#!{program}", lang, CODE) for program, lang in _INTERPRETERS.items()]
    order = {CODE: 0, DOCS: 1, CONFIG: 2}
    return sorted(rows, key=lambda row: (order[row[2]], row[1], row[0]))
