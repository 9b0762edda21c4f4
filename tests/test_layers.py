"""The packages are layered (design.md, section 3): a module never imports a higher layer, at
module level or inside a function, except the two accepted lazy façades."""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / "sira"

#: lowest first; a module may import its own layer and the ones before it. ``collector`` (no
#: imports) and ``display`` (errors, types) are utilities of the bottom layers. types, intervals
#: and values are one layer: the type of a relation-valued attribute checks Relation values.
LAYERS = [
    ["errors", "collector"], ["types", "intervals", "values", "display"], ["expressions"],
    ["algebra"], ["engine"], ["syntax"], ["streams"], ["io"], ["rewrite"],
    ["__init__", "explain", "plot", "demo", "cli", "__main__"],
]
RANK = {name: i for i, names in enumerate(LAYERS) for name in names}

#: (importing part, imported part): the lazy façades design.md accepts, as pandas and ibis
#: have them -- a relation's ``to_pandas``/``write_*`` delegate to io; the ``repr`` of a node or
#: an expression is its text (the printer); an expression may hold a relational operand
#: (``RelationArg``), so building one from a node needs the algebra's Node class.
FACADES = {("values.py", "io"), ("algebra/node.py", "syntax"), ("algebra/windowby.py", "syntax"),
           ("expressions/nodes.py", "syntax"), ("expressions/nodes.py", "algebra")}


def _part(module_path: pathlib.Path) -> str:
    rel = module_path.relative_to(ROOT)
    return rel.parts[0].removesuffix(".py")


def _imported_parts(tree, module_path) -> set:
    """The top-level parts of sira each import statement of a module names."""
    package = module_path.relative_to(ROOT.parent).with_suffix("").parts
    if module_path.name != "__init__.py":
        package = package[:-1]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "sira":
                    out.add((parts[1] if len(parts) > 1 else "__init__", node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[:len(package) - node.level + 1])
                parts = base + (node.module.split(".") if node.module else [])
            else:
                parts = (node.module or "").split(".")
            if parts and parts[0] == "sira":
                if len(parts) > 1:
                    out.add((parts[1], node.lineno))
                else:  # from sira import x / from . import x at the top of sira
                    for alias in node.names:
                        out.add((alias.name if alias.name in RANK else "__init__", node.lineno))
    return out


def _violations() -> list:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        own = _part(path)
        if own not in RANK:
            continue
        tree = ast.parse(path.read_text())
        for part, line in _imported_parts(tree, path):
            if part not in RANK or (str(path.relative_to(ROOT)), part) in FACADES:
                continue
            if RANK[part] > RANK[own]:
                found.append(f"{path.relative_to(ROOT.parent)}:{line} imports sira.{part}")
    return found


def test_every_module_of_sira_has_a_layer():
    parts = {_part(p) for p in ROOT.rglob("*.py")}
    assert parts <= set(RANK), sorted(parts - set(RANK))


def test_no_import_climbs_a_floor():
    assert _violations() == []


@pytest.mark.parametrize("source, part", [("sira/engine/x.py", "from ..rewrite.facts import y"),
                                          ("sira/streams/x.py", "import sira")])
def test_the_check_sees_a_climbing_import(source, part):
    path = ROOT.parent / source
    found = _imported_parts(ast.parse(f"def f():\n    {part}\n"), path)
    own = _part(path)
    assert any(RANK[p] > RANK[own] for p, _ in found)
