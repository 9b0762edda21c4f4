"""Python evaluation of relvars, literals, RESTRICT, PROJECT, EXTEND, RENAME, TRANSFORM."""

from __future__ import annotations

from itertools import compress

from ..algebra.basic import Extend, Project, RelationLiteral, RelvarRef, Rename, Restrict, Transform
from ..errors import SiraTypeError
from ..expressions.evaluate import compile_row
from ..expressions.nodes import AttrRef
from . import Rows, evaluates, map_rows
from .rows import key_getter, project_body, row_getter  # noqa: F401 (imported from here)


def compiler(ctx):
    """compile_row with the context's way of evaluating relational operands."""
    return lambda expr, heading: compile_row(expr, heading, ctx.eval)


@evaluates(RelvarRef)
def _relvar(node, ctx):
    value = ctx.relvar(node.name)
    if value.heading != node.heading:
        raise SiraTypeError(f"relvar '{node.name}' holds a relation with heading {value.heading}, "
                            f"but the expression was built for {node.heading}",
                            operator="RELVAR", expected=str(node.heading), got=str(value.heading))
    return value


@evaluates(RelationLiteral)
def _literal(node, ctx):
    return node.value


@evaluates(Restrict)
def _restrict(node, ctx):
    src = ctx.rows(node.source)
    cond = compiler(ctx)(node.condition, src.heading)
    keep = map_rows(src.rows, cond, src.heading, node.source.heading)
    return Rows(src.heading, list(compress(src.rows, keep)), src.distinct)


@evaluates(Project)
def _project(node, ctx):
    # the input's rows, untouched: they become this node's tuples when a set is needed
    return ctx.rows(node.source, ctx.wanted(node) or node.heading.names)


def _assemble(out_heading, parts):
    """A function building an output row from ``row + computed values``.

    ``parts`` lists, for the concatenation, the names in order; a name listed twice is taken
    from its last place (a computed attribute, not an attribute of the input's rows that a
    PROJECT below left in them); the result follows the output heading's order.
    """
    where = {n: i for i, n in enumerate(parts)}
    return row_getter([where[n] for n in out_heading.names])


@evaluates(Extend)
def _extend(node, ctx):
    src = ctx.rows(node.source)
    h = src.heading
    fns = [compiler(ctx)(e, h) for _, e in node.specs]
    assemble = _assemble(node.heading, h.names + tuple(n for n, _ in node.specs))
    rows = src.rows
    if len(fns) == 1:
        values = map_rows(rows, fns[0], h, node.source.heading)
        out = [assemble(r + (v,)) for r, v in zip(rows, values)]
    else:
        values = map_rows(rows, lambda r: tuple(f(r) for f in fns), h, node.source.heading)
        out = [assemble(r + v) for r, v in zip(rows, values)]
    return Rows(node.heading, out, src.exact(node.source.heading))


@evaluates(Rename)
def _rename(node, ctx):
    src = ctx.rows(node.source)
    back = {new: old for old, new in node.pairs}
    positions = [src.heading.index(back.get(n, n)) for n in node.heading.names]
    distinct = src.exact(node.source.heading)
    if positions == list(range(src.heading.degree)):
        return Rows(node.heading, src.rows, distinct)
    return Rows(node.heading, list(map(row_getter(positions), src.rows)), distinct)


@evaluates(Transform)
def _transform(node, ctx):
    src = ctx.rows(node.source)
    h = src.heading
    specs = [(n, AttrRef(n) if e is None else e) for n, e in node.specs]
    fns = [compiler(ctx)(e, h) for _, e in specs]
    assemble = _assemble(node.heading, [n for n, _ in specs])
    values = map_rows(src.rows, lambda r: tuple(f(r) for f in fns), h, node.source.heading)
    return Rows(node.heading, list(map(assemble, values)), False)
