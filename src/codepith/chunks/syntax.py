"""Syntax-aware chunking: definitions become chunks, big ones split into members, small statements grouped.

Budget: a chunk holds at most MAX_LINES lines and MAX_BYTES bytes. 60 lines / 2400 bytes keeps a typical
function or small class whole (the unit an agent wants to read) while staying short enough that a static
embedding (a mean of token vectors) is not diluted and BM25 length normalisation stays meaningful.

The walk only descends into nodes that are too big, so a file costs roughly one pass over its top-level
nodes plus the members of its large definitions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from tree_sitter import Node

MAX_LINES = 60
MAX_BYTES = 2400
# A long doc comment above a split definition (tokio's 390-line `select!` guide) is prose: cut in windows
# half as long as code's, each stays about one topic for BM25 and for its embedding (benchmarks/README.md,
# "Round two, part fourteen").
COMMENT_LINES = MAX_LINES // 2
TINY_LINES = 3  # members this short group with their neighbours inside a split class
# Depth caps: real code nests definitions a handful of levels; generated or hostile files nest
# thousands. Below the cap a definition is cut into line windows, keeping the walk's recursion bounded.
MAX_NESTING = 40  # definitions inside definitions, each split into members
MAX_WRAPPERS = 16  # wrappers around one definition (decorators, export, template<...>)
FUNCTION_KINDS = frozenset({"function", "method", "macro", "test", "constructor"})
_BINDING_SCOPES = frozenset({"module", "namespace"})  # where a plain assignment names a module-level value
# kinds whose members are worth listing as symbols of the chunk that holds them
MEMBER_KINDS = frozenset(
    {"class", "struct", "trait", "impl", "module", "namespace", "object", "protocol", "instance", "extension"}
)

_IDENT = frozenset(
    {
        "identifier", "type_identifier", "field_identifier", "property_identifier", "simple_identifier",
        "constant", "name", "word", "namespace_identifier", "package_identifier", "variable", "module_id",
        "alias", "private_property_identifier", "destructor_name", "operator_name", "constructor",
        "shorthand_property_identifier", "type_constructor",
    }
)  # fmt: skip
_NAME_FIELDS = ("name", "declarator", "method", "field", "type")


def _text(node: Node) -> str:
    raw = node.text
    return raw.decode("utf-8", "replace") if raw else ""


def _ident(node: Node | None, depth: int = 0) -> str:
    """The bare name inside a name-ish node: `a::b::c` -> c, `*f(int)` -> f, `M:bar` -> bar."""
    if node is None or depth > 6:
        return ""
    if node.type in _IDENT or node.child_count == 0:
        return _text(node)
    if node.type in ("string", "string_literal", "interpreted_string_literal"):
        return _text(node).strip("\"'`")
    for field_name in _NAME_FIELDS:
        child = node.child_by_field_name(field_name)
        if child is not None:
            return _ident(child, depth + 1)
    for child in node.named_children:
        if child.type in _IDENT:
            return _text(child)
    return ""


def _def_name(node: Node) -> str:
    for field_name in _NAME_FIELDS:
        child = node.child_by_field_name(field_name)
        if child is not None:
            return _ident(child)
    for child in node.named_children:
        if child.type in _IDENT:
            return _text(child)
    return ""


Classified = tuple[str, str, Node]  # (kind, name, node whose children hold the body)
Special = Callable[[Node], "Classified | None"]


@dataclass(frozen=True)
class LangSpec:
    """Which node types are definitions in one grammar, and how to read their names."""

    defs: dict[str, str]  # node type -> kind
    wrappers: frozenset[str] = frozenset()  # nodes that wrap a definition (decorators, export, template)
    prefixes: frozenset[str] = frozenset({"comment"})  # attach to the next definition when adjacent
    transparent: frozenset[str] = frozenset()  # containers that are always opened (haskell `declarations`)
    needs_body: frozenset[str] = frozenset()  # a definition only if it has a body (C `struct x;` is not)
    special: dict[str, Special] = field(default_factory=dict)
    # names a module-level statement binds without being a definition (``g = LocalProxy(...)``,
    # ``var ErrGone = errors.New(...)``): named by the chunk holding it (Chunk.binds), not chunks of their own
    binds: Callable[[Node], list[str]] | None = None
    # words that name no definition: a grammar's recovery can read one as a name (C's reads
    # ``__visible struct {...} x;`` as a function named ``struct``, the kernel's most "referenced" name)
    reserved: frozenset[str] = frozenset()
    # preprocessor blocks (an include guard) kept whole when they fit: the chunk lists what they define
    conditionals: frozenset[str] = frozenset()


_C_CONDITIONALS = frozenset({"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"})

# -- special cases -------------------------------------------------------------------------------------

_JS_FUNC_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function", "class"})


def _js_declaration(node: Node) -> Classified | None:
    """`const f = () => ...` / `const C = class {...}` define f / C."""
    declarators = [c for c in node.named_children if c.type == "variable_declarator"]
    if len(declarators) != 1:
        return None
    value = declarators[0].child_by_field_name("value")
    if value is None or value.type not in _JS_FUNC_VALUES:
        return None
    kind = "class" if value.type == "class" else "function"
    return kind, _ident(declarators[0].child_by_field_name("name")), value


def _js_field(node: Node) -> Classified | None:
    value = node.child_by_field_name("value")
    if value is None or value.type not in _JS_FUNC_VALUES:
        return None
    return "method", _ident(node.child_by_field_name("name")), value


def _go_type(node: Node) -> Classified | None:
    for spec in node.named_children:
        if spec.type in ("type_spec", "type_alias"):
            body = spec.child_by_field_name("type")
            kind = {"struct_type": "struct", "interface_type": "interface"}.get(body.type if body else "", "type")
            return kind, _ident(spec.child_by_field_name("name")), node
    return None


_CPP_CLASS_KEYS = {"class_specifier": "class", "struct_specifier": "struct", "union_specifier": "union"}


def _cpp_function(node: Node) -> Classified | None:
    """A function, except ``class EXPORT_MACRO Name {...}``: tree-sitter-cpp reads the macro as the class's
    name and the rest as a function returning it (spdlog's ``class SPDLOG_API logger``); that is a class."""
    head = node.child_by_field_name("type")
    declarator = node.child_by_field_name("declarator")
    if (
        head is not None
        and head.type in _CPP_CLASS_KEYS
        and head.child_by_field_name("body") is None
        and declarator is not None
        and declarator.type == "identifier"
    ):
        return _CPP_CLASS_KEYS[head.type], _text(declarator), node
    return "function", _def_name(node), node


def _zig_var(node: Node) -> Classified | None:
    kinds = {"struct_declaration": "struct", "enum_declaration": "enum", "union_declaration": "union",
             "opaque_declaration": "struct"}  # fmt: skip
    for child in node.named_children:
        if child.type in kinds:
            return kinds[child.type], _def_name(node), node
    return None


def _zig_test(node: Node) -> Classified | None:
    for child in node.named_children:
        if child.type in ("string", "identifier"):
            return "test", _text(child).strip('"'), node
    return "test", "", node


_ELIXIR_DEFS = {
    "defmodule": "module", "defprotocol": "protocol", "defimpl": "impl", "def": "function",
    "defp": "function", "defmacro": "macro", "defmacrop": "macro", "defguard": "function",
    "defguardp": "function", "defdelegate": "function",
}  # fmt: skip


def _elixir_call(node: Node) -> Classified | None:
    target = node.child_by_field_name("target")
    if target is None or target.type != "identifier":
        return None
    kind = _ELIXIR_DEFS.get(_text(target))
    if kind is None:
        return None
    args = next((c for c in node.named_children if c.type == "arguments"), None)
    first = args.named_children[0] if args is not None and args.named_child_count else None
    if first is not None and first.type == "binary_operator":  # `def f(x) when guard`
        first = first.child_by_field_name("left")
    if first is not None and first.type == "call":
        first = first.child_by_field_name("target")
    return kind, _text(first) if first is not None else "", node


def _lua_assign(node: Node) -> Classified | None:
    """`M.f = function() ... end` and `local f = function() ... end`."""
    assign = (
        node
        if node.type == "assignment_statement"
        else next((c for c in node.named_children if c.type == "assignment_statement"), None)
    )
    if assign is None:
        return None
    values = next((c for c in assign.named_children if c.type == "expression_list"), None)
    names = next((c for c in assign.named_children if c.type == "variable_list"), None)
    if values is None or names is None or values.named_child_count != 1 or names.named_child_count != 1:
        return None
    if values.named_children[0].type != "function_definition":
        return None
    return "function", _ident(names.named_children[0]), node


# -- language tables -----------------------------------------------------------------------------------

_C_DEFS = {
    "function_definition": "function", "struct_specifier": "struct", "union_specifier": "union",
    "enum_specifier": "enum", "type_definition": "type", "preproc_function_def": "macro",
}  # fmt: skip
_C_RESERVED = frozenset(
    """auto break case char const continue default do double else enum extern float for goto if inline int
    long register restrict return short signed sizeof static struct switch typedef union unsigned void
    volatile while _Bool _Complex _Atomic _Noreturn _Static_assert _Thread_local""".split()
)
_JS_DEFS = {
    "function_declaration": "function", "generator_function_declaration": "function",
    "class_declaration": "class", "abstract_class_declaration": "class", "method_definition": "method",
    "interface_declaration": "interface", "type_alias_declaration": "type", "enum_declaration": "enum",
    "internal_module": "namespace", "module": "module", "function_signature": "function",
}  # fmt: skip
_JS_SPECIAL: dict[str, Special] = {
    "lexical_declaration": _js_declaration, "variable_declaration": _js_declaration,
    "public_field_definition": _js_field, "field_definition": _js_field,
}  # fmt: skip
_JS = LangSpec(
    defs=_JS_DEFS,
    wrappers=frozenset({"export_statement", "expression_statement", "ambient_declaration"}),
    prefixes=frozenset({"comment", "decorator"}),
    special=_JS_SPECIAL,
)


def _public(name: str) -> bool:
    return bool(name) and not (name.startswith("__") and name.endswith("__"))  # not __all__, __version__


def _py_binds(node: Node) -> list[str]:
    """`g = LocalProxy(...)`, `session: Session = ...`: one plain name on the left."""
    if node.type != "expression_statement" or node.named_child_count != 1:
        return []
    assign = node.named_children[0]
    left = assign.child_by_field_name("left") if assign.type == "assignment" else None
    name = _text(left) if left is not None and left.type == "identifier" else ""
    return [name] if _public(name) else []


def _go_binds(node: Node) -> list[str]:
    """`var ErrNotFound = errors.New(...)`, `const Version = "1"`, and each name of a `var (...)` block."""
    if node.type not in ("var_declaration", "const_declaration"):
        return []
    specs = [c for c in node.named_children if c.type in ("var_spec", "const_spec")]
    for group in (c for c in node.named_children if c.type in ("var_spec_list", "const_spec_list")):
        specs += [c for c in group.named_children if c.type in ("var_spec", "const_spec")]
    return [_text(n) for spec in specs for n in spec.children_by_field_name("name") if n.type == "identifier"]


def _rust_binds(node: Node) -> list[str]:
    """`const MAX: usize = ...`, `static REGISTRY: ... = ...`."""
    if node.type not in ("const_item", "static_item"):
        return []
    name = node.child_by_field_name("name")
    return [_text(name)] if name is not None else []


def _c_binds(node: Node) -> list[str]:
    """A global with an initialiser (`static const struct file_operations ext4_fops = {...}`); not a
    prototype, and not an `extern` declaration without a value."""
    if node.type != "declaration":
        return []
    names = []
    for child in node.named_children:
        if child.type == "init_declarator":
            target = child.child_by_field_name("declarator")
            while target is not None and target.type in ("pointer_declarator", "array_declarator"):
                target = target.child_by_field_name("declarator")
            if target is not None and target.type == "identifier":
                names.append(_text(target))
    return names


def _ruby_binds(node: Node) -> list[str]:
    """`VERSION = "1.0"`, `DEFAULT_OPTIONS = {...}`: a constant assigned at module level."""
    if node.type != "assignment":
        return []
    left = node.child_by_field_name("left")
    return [_text(left)] if left is not None and left.type == "constant" else []


def _kotlin_swift_binds(node: Node) -> list[str]:
    """Kotlin's top-level `val Default = ...` / `const val MAX = 4`, Swift's `let maxCount = 3`."""
    if node.type != "property_declaration":
        return []
    for child in node.named_children:
        if child.type in ("variable_declaration", "pattern"):
            name = next((c for c in child.named_children if c.type in ("identifier", "simple_identifier")), None)
            return [_text(name)] if name is not None else []
    return []


def _php_binds(node: Node) -> list[str]:
    """`const VERSION = '1';` at namespace level."""
    if node.type != "const_declaration":
        return []
    elements = (c for c in node.named_children if c.type == "const_element")
    return [_text(n) for e in elements for n in e.named_children[:1] if n.type == "name"]


_R_ASSIGN = frozenset({"<-", "=", "<<-", ":="})


def _r_target(node: Node) -> tuple[str, Node] | None:
    """(name, value) of ``name <- value`` / ``name = value`` (a backticked or quoted name too)."""
    if node.type != "binary_operator":
        return None
    left, op = node.child_by_field_name("lhs"), node.child_by_field_name("operator")
    right = node.child_by_field_name("rhs")
    if left is None or right is None or op is None or _text(op) not in _R_ASSIGN:
        return None
    if left.type not in ("identifier", "string"):
        return None
    return _text(left).strip("`'\""), right


def _r_methods(call: Node, depth: int = 0) -> bool:
    """Whether a call's arguments hold named functions (``ggproto("X", Parent, draw = function(...) ...)``,
    R6's ``R6Class("X", public = list(initialize = function(...) ...))``): an object made of methods."""
    args = call.child_by_field_name("arguments")
    for arg in args.named_children if args is not None else ():
        value = arg.child_by_field_name("value")
        if value is None:
            continue
        if value.type == "function_definition" and arg.child_by_field_name("name") is not None:
            return True
        if value.type == "call" and depth < 1 and _r_methods(value, depth + 1):
            return True
    return False


def _r_assign(node: Node) -> Classified | None:
    """``f <- function(...)`` defines f; ``Geom <- ggproto("Geom", ...)`` and R6/reference classes, a call
    whose arguments are named functions, define an object whose methods are those arguments."""
    target = _r_target(node)
    if target is None:
        return None
    name, value = target
    if value.type == "function_definition":
        return "function", name, node
    if value.type == "call" and _r_methods(value):
        args = value.child_by_field_name("arguments")
        return "class", name, args if args is not None else node
    return None


def _r_argument(node: Node) -> Classified | None:
    """A named function inside an object's constructor call: ``draw_panel = function(...) {...}``; and
    a group of them (R6's ``public = list(add = function(n) ...)``), opened for its methods."""
    value = node.child_by_field_name("value")
    name = node.child_by_field_name("name")
    if value is None or name is None:
        return None
    if value.type == "call" and _r_methods(value, 1):
        args = value.child_by_field_name("arguments")
        return "object", "", args if args is not None else node
    if value.type != "function_definition":
        return None
    return "method", _text(name).strip("`'\""), node


_R_S4 = {"setClass": "class", "setRefClass": "class", "setGeneric": "function", "setMethod": "method",
         "setValidity": "method"}  # fmt: skip


def _r_call(node: Node) -> Classified | None:
    """S4: ``setClass("Name", ...)``, ``setGeneric("name", ...)``, ``setMethod("name", "Class", ...)``."""
    head = node.child_by_field_name("function")
    kind = _R_S4.get(_text(head)) if head is not None and head.type == "identifier" else None
    args = node.child_by_field_name("arguments")
    if kind is None or args is None:
        return None
    first = next((a.child_by_field_name("value") for a in args.named_children if a.type == "argument"), None)
    if first is None or first.type != "string":
        return None
    return kind, _text(first).strip("'\""), node


def _r_binds(node: Node) -> list[str]:
    """``default_width <- 0.9``: a value bound at file level, not a function."""
    target = _r_target(node)
    if target is None or target[1].type == "function_definition":
        return []
    return [target[0]]


def _ocaml_value(node: Node) -> Classified | None:
    """``let f x = ...`` is a function, ``let default = ...`` a value; ``let rec a = ... and b = ...``
    is named by its first binding."""
    binding = next((c for c in node.named_children if c.type == "let_binding"), None)
    if binding is None:
        return None
    pattern = binding.child_by_field_name("pattern")
    name = _text(pattern) if pattern is not None and pattern.type == "value_name" else ""
    body = binding.child_by_field_name("body")
    takes = any(c.type == "parameter" for c in binding.named_children) or (
        body is not None and body.type in ("fun_expression", "function_expression")
    )
    return ("function" if takes else "value"), name, node


def _ocaml_named(kind: str, *path: str) -> Special:
    """``type t = ...``, ``module M = struct ... end``, ``exception E``: named by the node reached through
    ``path`` (child types, first match at each step; a ``name`` field on the way is taken at once)."""

    def classify_named(node: Node) -> Classified | None:
        at = node
        for step in path:
            named = at.child_by_field_name("name") if at is not node else None
            if named is not None:
                return kind, _text(named), node
            found = next((c for c in at.named_children if c.type == step), None)
            if found is None:
                return kind, "", node
            at = found
        named = at.child_by_field_name("name")
        return kind, _text(named if named is not None else at), node

    return classify_named


def _erlang_define(node: Node) -> Classified | None:
    """``-define(MAX, 10).`` / ``-define(F(X), ...).``: a macro named by its left-hand side."""
    lhs = node.child_by_field_name("lhs")
    name = lhs.child_by_field_name("name") if lhs is not None else None
    return "macro", _text(name) if name is not None else "", node


def _erlang_function(node: Node) -> Classified | None:
    clause = next((c for c in node.named_children if c.type == "function_clause"), None)
    name = clause.child_by_field_name("name") if clause is not None else None
    return "function", _text(name) if name is not None else "", node


SPECS: dict[str, LangSpec] = {
    "python": LangSpec(
        defs={"function_definition": "function", "class_definition": "class"},
        wrappers=frozenset({"decorated_definition"}),
        binds=_py_binds,
    ),
    "javascript": _JS,
    "typescript": _JS,
    "tsx": _JS,
    "go": LangSpec(
        defs={"function_declaration": "function", "method_declaration": "method"},
        special={"type_declaration": _go_type},
        binds=_go_binds,
    ),
    "rust": LangSpec(
        defs={
            "function_item": "function",
            "function_signature_item": "function",
            "struct_item": "struct",
            "enum_item": "enum",
            "union_item": "union",
            "trait_item": "trait",
            "impl_item": "impl",
            "mod_item": "module",
            "macro_definition": "macro",
            "type_item": "type",
        },
        prefixes=frozenset({"line_comment", "block_comment", "attribute_item"}),
        needs_body=frozenset({"mod_item"}),
        binds=_rust_binds,
    ),  # fmt: skip
    "c": LangSpec(
        defs=_C_DEFS,
        needs_body=frozenset({"struct_specifier", "union_specifier", "enum_specifier"}),
        binds=_c_binds,
        reserved=_C_RESERVED,
        conditionals=_C_CONDITIONALS,
    ),
    "cpp": LangSpec(
        defs={
            **{k: v for k, v in _C_DEFS.items() if k != "function_definition"},
            "class_specifier": "class",
            "namespace_definition": "namespace",
            "concept_definition": "type",
            "alias_declaration": "type",
        },
        wrappers=frozenset({"template_declaration", "declaration"}),
        needs_body=frozenset({"struct_specifier", "union_specifier", "enum_specifier", "class_specifier"}),
        special={"function_definition": _cpp_function},
        binds=_c_binds,
        reserved=_C_RESERVED,
        conditionals=_C_CONDITIONALS,
    ),  # fmt: skip
    "csharp": LangSpec(
        defs={
            "class_declaration": "class",
            "struct_declaration": "struct",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "record_declaration": "class",
            "namespace_declaration": "namespace",
            "method_declaration": "method",
            "constructor_declaration": "constructor",
            "destructor_declaration": "method",
            "operator_declaration": "method",
            "property_declaration": "property",
            "delegate_declaration": "type",
            "local_function_statement": "function",
        },
        prefixes=frozenset({"comment", "attribute_list"}),
    ),  # fmt: skip
    "java": LangSpec(
        defs={
            "class_declaration": "class",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "record_declaration": "class",
            "annotation_type_declaration": "interface",
            "method_declaration": "method",
            "constructor_declaration": "constructor",
            "compact_constructor_declaration": "constructor",
        },
        prefixes=frozenset({"line_comment", "block_comment"}),
    ),  # fmt: skip
    "kotlin": LangSpec(
        defs={
            "class_declaration": "class",
            "object_declaration": "object",
            "companion_object": "object",
            "function_declaration": "function",
            "type_alias": "type",
            "secondary_constructor": "constructor",
        },
        prefixes=frozenset({"line_comment", "block_comment", "comment"}),
        binds=_kotlin_swift_binds,
    ),  # fmt: skip
    "scala": LangSpec(
        defs={
            "class_definition": "class",
            "object_definition": "object",
            "trait_definition": "trait",
            "enum_definition": "enum",
            "function_definition": "function",
            "function_declaration": "function",
            "type_definition": "type",
            "given_definition": "object",
            "extension_definition": "extension",
        },
        prefixes=frozenset({"comment", "block_comment"}),
    ),  # fmt: skip
    "swift": LangSpec(
        defs={
            "class_declaration": "class",
            "protocol_declaration": "protocol",
            "function_declaration": "function",
            "init_declaration": "constructor",
            "deinit_declaration": "method",
            "subscript_declaration": "method",
            "typealias_declaration": "type",
            "protocol_function_declaration": "function",
        },
        prefixes=frozenset({"comment", "multiline_comment"}),
        binds=_kotlin_swift_binds,
    ),  # fmt: skip
    "objc": LangSpec(
        defs={
            **_C_DEFS,
            "class_interface": "class",
            "class_implementation": "class",
            "protocol_declaration": "protocol",
            "method_definition": "method",
            "method_declaration": "method",
        },
        wrappers=frozenset({"implementation_definition"}),
        needs_body=frozenset({"struct_specifier", "union_specifier", "enum_specifier"}),
        binds=_c_binds,
        reserved=_C_RESERVED,
        conditionals=_C_CONDITIONALS,
    ),  # fmt: skip
    "lua": LangSpec(
        defs={"function_declaration": "function"},
        special={"variable_declaration": _lua_assign, "assignment_statement": _lua_assign},
    ),
    "zig": LangSpec(
        defs={"function_declaration": "function"},
        special={"variable_declaration": _zig_var, "test_declaration": _zig_test},
    ),
    "bash": LangSpec(defs={"function_definition": "function"}),
    "elixir": LangSpec(defs={}, prefixes=frozenset({"comment", "unary_operator"}), special={"call": _elixir_call}),
    "haskell": LangSpec(
        defs={
            "function": "function",
            "bind": "function",
            "signature": "function",
            "data_type": "type",
            "newtype": "type",
            "type_synomym": "type",
            "type_family": "type",
            "data_family": "type",
            "class": "class",
            "instance": "instance",
            "foreign_import": "function",
        },
        prefixes=frozenset({"comment", "haddock", "pragma"}),
        transparent=frozenset({"declarations", "imports"}),
    ),  # fmt: skip
    "ruby": LangSpec(
        defs={
            "method": "method",
            "singleton_method": "method",
            "class": "class",
            "module": "module",
            "singleton_class": "class",
        },
        binds=_ruby_binds,
    ),  # fmt: skip
    "php": LangSpec(
        defs={
            "function_definition": "function",
            "class_declaration": "class",
            "interface_declaration": "interface",
            "trait_declaration": "trait",
            "enum_declaration": "enum",
            "method_declaration": "method",
            "namespace_definition": "namespace",
        },
        needs_body=frozenset({"namespace_definition"}),
        binds=_php_binds,
    ),  # fmt: skip
    "r": LangSpec(
        defs={},
        special={"binary_operator": _r_assign, "argument": _r_argument, "call": _r_call},
        binds=_r_binds,
    ),
    "ocaml": LangSpec(
        defs={"class_definition": "class"},
        special={
            # ``val f : t -> t`` (an interface's) and ``external f : ...``: the ``type`` field is no name
            "value_specification": _ocaml_named("function", "value_name"),
            "external": _ocaml_named("function", "value_name"),
            "value_definition": _ocaml_value,
            "type_definition": _ocaml_named("type", "type_binding"),
            "module_definition": _ocaml_named("module", "module_binding", "module_name"),
            "module_type_definition": _ocaml_named("interface", "module_type_name"),
            "exception_definition": _ocaml_named("type", "constructor_declaration", "constructor_name"),
        },
    ),
    "erlang": LangSpec(
        defs={"record_decl": "type", "type_alias": "type", "opaque": "type"},
        prefixes=frozenset({"comment", "spec"}),
        special={"fun_decl": _erlang_function, "pp_define": _erlang_define},
    ),
    "solidity": LangSpec(
        defs={
            "contract_declaration": "class",
            "interface_declaration": "interface",
            "library_declaration": "module",
            "function_definition": "function",
            "modifier_definition": "function",
            "constructor_definition": "constructor",
            "fallback_receive_definition": "function",
            "event_definition": "type",
            "error_declaration": "type",
            "struct_declaration": "struct",
            "enum_declaration": "enum",
            "user_defined_type_definition": "type",
        },
    ),
}


def classify(node: Node, spec: LangSpec, depth: int = 0) -> Classified | None:
    """(kind, name, body node) if ``node`` defines something, else None."""
    kind = spec.defs.get(node.type)
    if kind is not None:
        if node.type in spec.needs_body and node.child_by_field_name("body") is None:
            return None
        name = _def_name(node)
        return None if name in spec.reserved else (kind, name, node)
    special = spec.special.get(node.type)
    if special is not None:
        found = special(node)
        return None if found is not None and found[1] in spec.reserved else found
    if node.type in spec.wrappers and depth < MAX_WRAPPERS:
        for child in reversed(node.named_children):
            found = classify(child, spec, depth + 1)
            if found is not None:
                return found
    return None


# -- the walk ------------------------------------------------------------------------------------------


@dataclass
class _Item:
    node: Node
    start: int  # 0-based rows, inclusive
    end: int
    sbyte: int
    ebyte: int
    kind: str | None = None  # None: a plain statement or token
    name: str = ""
    prefix: bool = False
    named: bool = True


@dataclass
class Piece:
    """A chunk-to-be: 0-based inclusive rows plus what it defines."""

    start: int
    end: int
    symbols: list[str]
    kind: str
    group: bool = False  # made of grouped statements rather than one definition
    anon_only: bool = False  # only punctuation/keywords (a lone closing brace)
    binds: list[str] = field(default_factory=list)  # module-level values bound here (LangSpec.binds)


def _rows(node: Node) -> tuple[int, int]:
    start = node.start_point[0]
    end_row, end_col = node.end_point
    if end_col == 0 and end_row > start:  # node ends with its newline
        end_row -= 1
    return start, end_row


def _fits(start: int, end: int, sbyte: int, ebyte: int) -> bool:
    return end - start < MAX_LINES and ebyte - sbyte <= MAX_BYTES


def _windows(
    start: int, end: int, symbols: list[str], kind: str, binds: Sequence[str] = (), size: int = MAX_LINES
) -> list[Piece]:
    return [
        Piece(s, min(s + size - 1, end), list(symbols), kind, binds=list(binds)) for s in range(start, end + 1, size)
    ]


class _Walker:
    def __init__(self, spec: LangSpec) -> None:
        self.spec = spec

    def expand(self, nodes: Iterable[Node], out: list[_Item]) -> list[_Item]:
        """Items for ``nodes``; oversized non-definitions are opened so their parts can be grouped.

        An explicit stack rather than recursion: a 3,000-deep parenthesis nest or a 1,000-branch
        ``else if`` chain is as deep in the tree, and must not reach Python's recursion limit.
        """
        spec = self.spec
        stack: list[Iterator[Node]] = [iter(nodes)]
        while stack:
            node = next(stack[-1], None)
            if node is None:
                stack.pop()
                continue
            if node.type in spec.transparent:
                stack.append(iter(node.children))
                continue
            start, end = _rows(node)
            sbyte, ebyte = node.start_byte, node.end_byte
            found = classify(node, spec) if node.is_named else None
            if found is not None:
                out.append(_Item(found[2], start, end, sbyte, ebyte, found[0], found[1]))
            elif not _fits(start, end, sbyte, ebyte) and node.child_count:
                stack.append(iter(node.children))
            else:
                out.append(
                    _Item(node, start, end, sbyte, ebyte, prefix=node.type in spec.prefixes, named=node.is_named)
                )
        return out

    def attach(self, items: list[_Item]) -> list[_Item]:
        """Glue comments/attributes to the definition right below them; join same-name clauses."""
        out: list[_Item] = []
        for item in items:
            if item.kind is not None:
                first = len(out)
                while (
                    first > 0
                    and out[first - 1].prefix
                    and out[first - 1].end >= (out[first].start if first < len(out) else item.start) - 1
                ):
                    first -= 1
                if first < len(out):
                    item.start, item.sbyte = out[first].start, out[first].sbyte
                    del out[first:]
                prev = out[-1] if out else None
                if (
                    prev is not None
                    and prev.kind is not None
                    and item.name
                    and prev.name == item.name
                    and prev.kind == item.kind
                    and _fits(prev.start, item.end, prev.sbyte, item.ebyte)
                ):  # haskell equations + signature, elixir multi-clause defs, overloads
                    prev.end, prev.ebyte = item.end, item.ebyte
                    continue
            out.append(item)
        return out

    def member_names(self, node: Node, out: list[str], depth: int = 0, nest: int = 0) -> None:
        """Names defined directly inside a container (methods of a class, items of an impl), and inside the
        preprocessor blocks it holds (``LangSpec.conditionals``).

        Only the body is scanned (or the direct children when the grammar has no body field), so the
        cost is one look at each member, not a walk of the whole subtree.
        """
        body = node.child_by_field_name("body") if depth == 0 else None
        for child in (body if body is not None else node).named_children:
            found = classify(child, self.spec)
            if found is not None:
                if found[1]:
                    out.append(found[1])
                if found[0] in MEMBER_KINDS and nest < MAX_NESTING:
                    self.member_names(found[2], out, 0, nest + 1)
            elif child.type in self.spec.conditionals and nest < MAX_NESTING:  # members under #if
                self.member_names(child, out, 1, nest + 1)
            elif depth < 1 and body is None and child.named_child_count:
                self.member_names(child, out, depth + 1, nest)

    def sequence(self, items: list[_Item], level: int, ctx_kind: str) -> list[Piece]:
        """Pieces for sibling items: definitions alone, everything else grouped up to the budget."""
        pieces: list[Piece] = []
        group: list[_Item] = []

        binds = self.spec.binds if ctx_kind in _BINDING_SCOPES else None

        def flush() -> None:
            if group:
                names = [i.name for i in group if i.kind is not None and i.name]
                inner: list[str] = []
                for i in group:
                    if i.kind is None and i.node.type in self.spec.conditionals:
                        self.member_names(i.node, inner, 1)  # a small header's include guard: what it defines
                names.extend(n for n in _dedupe(inner) if n not in names)
                bound = [n for i in group if i.kind is None for n in binds(i.node)] if binds is not None else []
                anon = not any(i.named for i in group)
                pieces.append(Piece(group[0].start, group[-1].end, names, ctx_kind, True, anon, _dedupe(bound)))
                group.clear()

        for item in self.attach(items):
            size = item.end - item.start + 1
            if item.kind is not None and (level == 0 or size > TINY_LINES):
                flush()
                pieces.extend(self.definition(item, level))
            elif not _fits(item.start, item.end, item.sbyte, item.ebyte):
                flush()
                bound = binds(item.node) if binds is not None and not item.name else []
                pieces.extend(_windows(item.start, item.end, [item.name] if item.name else [], ctx_kind, bound))
            else:
                if group and not _fits(group[0].start, item.end, group[0].sbyte, item.ebyte):
                    flush()
                group.append(item)
        flush()
        if len(pieces) > 1 and pieces[-1].anon_only:  # a lone closing brace joins the piece above
            tail = pieces.pop()
            pieces[-1].end = max(pieces[-1].end, tail.end)
        return pieces

    def definition(self, item: _Item, level: int) -> list[Piece]:
        name, kind = item.name, item.kind or "code"
        if _fits(item.start, item.end, item.sbyte, item.ebyte):
            symbols = [name] if name else []
            if kind in MEMBER_KINDS:
                self.member_names(item.node, symbols)
            return [Piece(item.start, item.end, _dedupe(symbols), kind)]
        if level >= MAX_NESTING:
            return _windows(item.start, item.end, [name] if name else [], kind)
        pieces = self.sequence(self.expand(item.node.children, []), level + 1, kind)
        if not pieces:
            return _windows(item.start, item.end, [name] if name else [], kind)
        head = pieces[0]
        if name and kind not in FUNCTION_KINDS and head.group and len(pieces) > 1:
            if head.end - head.start < 2 and not head.symbols:
                # a bare `class Foo {` line joins its first member (before its doc comment joins it, so
                # the comment does not make the line look like a piece of its own)
                pieces[1].start = head.start
                pieces.pop(0)
        declaring = pieces[0]  # the piece with the definition's own first line (``class Engine < Railtie``)
        if pieces[0].start > item.start:
            if _fits(item.start, pieces[0].end, item.sbyte, item.sbyte):
                pieces[0].start = item.start
            else:  # a long comment or decorator run above a split definition becomes its own piece
                pieces[:0] = _windows(item.start, pieces[0].start - 1, [name] if name else [], kind, size=COMMENT_LINES)
        pieces[-1].end = max(pieces[-1].end, item.end)
        if name and declaring is not pieces[0]:  # it names the definition too, not only the comment above it
            declaring.symbols = _dedupe([name, *declaring.symbols])
        if not name:
            return pieces
        if kind in FUNCTION_KINDS:
            for piece in pieces:
                piece.symbols = _dedupe([name, *piece.symbols])
                piece.kind = kind
            return pieces
        head = pieces[0]
        head.symbols = _dedupe([name, *head.symbols])
        if head.group:
            head.kind = kind
        for piece in pieces[1:]:
            if not piece.symbols:  # fields and other plain parts of the definition
                piece.symbols = [name]
        return pieces


def _dedupe(names: list[str]) -> list[str]:
    return list(dict.fromkeys(n for n in names if n))


def _broken_bytes(root: Node) -> int:
    """Bytes of the file that did not parse: its bare tokens under an ERROR node, not the definitions
    tree-sitter recovered inside one. An include guard around a C++ header makes one ERROR of the whole
    file for one macro the grammar cannot read (fmt's format.h: 4,200 lines, 200 definitions inside)."""
    broken = 0
    stack = [(c, root.type == "ERROR") for c in root.children]
    while stack:
        node, bare = stack.pop()
        if node.is_missing:
            broken += 1
        elif node.type == "ERROR":
            stack.extend((c, True) for c in node.children)
        elif bare and node.child_count == 0 and "comment" not in node.type:
            broken += node.end_byte - node.start_byte
    return broken


def syntax_pieces(root: Node, language: str) -> list[Piece] | None:
    """Pieces for a parsed file, or None when the language has no table or the parse is mostly errors."""
    spec = SPECS.get(language)
    if spec is None:
        return None
    if root.has_error:
        # Judged by how much of the file is broken, not by the root's type: tree-sitter may give a whole
        # file an ERROR root for one bad spot (the kernel's kernel/sched/core.c: 2.5 KB broken of 293 KB),
        # which sent its 11,000 lines to line windows without a single definition. Under an ERROR root,
        # bare tokens count as broken too: that is what a file the grammar cannot read at all looks like.
        total = max(1, root.end_byte - root.start_byte)
        if _broken_bytes(root) * 2 > total:
            return None
    walker = _Walker(spec)
    return walker.sequence(walker.expand(root.children, []), 0, "module")
