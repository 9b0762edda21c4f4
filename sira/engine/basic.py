"""Python evaluation of relvars, literals, RESTRICT, PROJECT, EXTEND, RENAME, TRANSFORM."""

from __future__ import annotations

from operator import itemgetter

from ..algebra.basic import Extend, Project, RelationLiteral, RelvarRef, Rename, Restrict, Transform
from ..errors import SiraTypeError
from ..expressions.evaluate import compile_row
from ..expressions.nodes import AttrRef
from ..values import Relation
from . import evaluates, map_rows


def row_getter(positions):
    """A function from a body tuple to the tuple of the values at ``positions``."""
    positions = tuple(positions)
    if len(positions) == 0:
        return lambda row: ()
    if len(positions) == 1:
        (i,) = positions
        return lambda row: (row[i],)
    return itemgetter(*positions)


def key_getter(positions):
    """A hashable key of the values at ``positions``: a scalar for one position (cheaper)."""
    positions = tuple(positions)
    if len(positions) == 1:
        return itemgetter(positions[0])
    return row_getter(positions)


def project_body(body, positions):
    positions = tuple(positions)
    if len(positions) == 0:
        return frozenset({()}) if body else frozenset()
    if len(positions) == 1:
        return frozenset(zip(map(itemgetter(positions[0]), body)))
    return frozenset(map(itemgetter(*positions), body))


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
    src = ctx.eval(node.source)
    cond = compiler(ctx)(node.condition, src.heading)
    rows = list(src.body)
    keep = map_rows(rows, cond, src.heading)
    return Relation(node.heading, frozenset(r for r, k in zip(rows, keep) if k))


@evaluates(Project)
def _project(node, ctx):
    src = ctx.eval(node.source)
    positions = [src.heading.index(n) for n in node.heading.names]
    return Relation(node.heading, project_body(src.body, positions))


def _assemble(out_heading, parts):
    """A function building an output row from ``row + computed values``.

    ``parts`` lists, for the concatenation, the names in order; the result follows the output
    heading's order.
    """
    where = {n: i for i, n in enumerate(parts)}
    return row_getter([where[n] for n in out_heading.names])


@evaluates(Extend)
def _extend(node, ctx):
    src = ctx.eval(node.source)
    h = src.heading
    fns = [compiler(ctx)(e, h) for _, e in node.specs]
    assemble = _assemble(node.heading, h.names + tuple(n for n, _ in node.specs))
    rows = list(src.body)
    if len(fns) == 1:
        (f,) = fns
        values = map_rows(rows, f, h)
        out = [assemble(r + (v,)) for r, v in zip(rows, values)]
    else:
        values = map_rows(rows, lambda r: tuple(f(r) for f in fns), h)
        out = [assemble(r + v) for r, v in zip(rows, values)]
    return Relation(node.heading, frozenset(out))


@evaluates(Rename)
def _rename(node, ctx):
    src = ctx.eval(node.source)
    mapping = dict(node.pairs)
    renamed = [mapping.get(n, n) for n in src.heading.names]
    positions = [renamed.index(n) for n in node.heading.names]
    if positions == list(range(len(positions))):
        return Relation(node.heading, src.body)
    return Relation(node.heading, frozenset(map(row_getter(positions), src.body)))


@evaluates(Transform)
def _transform(node, ctx):
    src = ctx.eval(node.source)
    h = src.heading
    specs = [(n, AttrRef(n) if e is None else e) for n, e in node.specs]
    fns = [compiler(ctx)(e, h) for _, e in specs]
    order = [n for n, _ in specs]
    assemble = _assemble(node.heading, order)
    rows = list(src.body)
    values = map_rows(rows, lambda r: tuple(f(r) for f in fns), h)
    return Relation(node.heading, frozenset(assemble(v) for v in values))
