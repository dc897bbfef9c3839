"""The house's floors (shared/design/house.md): a room imports only its own floor or lower ones.

Runtime imports and TYPE_CHECKING imports both count: an upward arrow in a type hint is still a
dependency a reader must follow up the stairs.
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "src" / "codepith"

FLOORS = {
    "_version": 0,
    "errors": 0,
    "limits": 0,  # the top_k and budget limits every surface states
    "memory": 0,  # process-wide memory settings (numpy's huge-page advice)
    "files": 0,
    "chunks": 0,
    "model": 0,
    "index": 1,
    "store": 1,
    "search": 2,
    "structure": 2,
    "output": 3,
    "api": 4,
    "service": 5,
    "surfaces": 6,
    "agents": 6,
    "runner": 6,
    "__init__": 7,  # the package's public face re-exports the API
    "__main__": 7,
}

# Same-floor pairs that must stay apart (house.md: "Lines that must never be crossed").
NEVER = {("files", "index"), ("chunks", "index"), ("index", "search"), ("search", "surfaces"), ("output", "surfaces")}


def _room(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "codepith":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> set[str]:
    """Modules ``path`` imports, relative ones (``from ..output import x``) resolved against its package."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ["codepith", *path.relative_to(PKG).parent.parts]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or node.level):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = str(node.module)
            found.add(module)
            found.update(f"{module}.{a.name}" for a in node.names)
    return found


def test_every_room_has_a_floor() -> None:
    rooms = {p.stem for p in PKG.glob("*.py")} | {p.name for p in PKG.iterdir() if (p / "__init__.py").exists()}
    assert sorted(rooms - set(FLOORS)) == []


def test_no_upward_import() -> None:
    bad: list[str] = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG)
        here = rel.parts[0].removesuffix(".py")
        for module in _imports(path):
            there = _room(module)
            if there is None or there == here or there not in FLOORS:
                continue
            if FLOORS[there] > FLOORS[here]:
                bad.append(f"{rel} imports {module} (floor {FLOORS[there]} > {FLOORS[here]})")
            if (here, there) in NEVER:
                bad.append(f"{rel} imports {module} (a line never crossed)")
    assert not bad, "\n".join(bad)
