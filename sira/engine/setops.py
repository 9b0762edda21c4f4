"""Python evaluation of UNION, INTERSECT, MINUS, XMINUS: set operations on the bodies."""

from __future__ import annotations

from functools import reduce

from ..algebra.setops import Intersect, Minus, Union, XMinus
from ..values import Relation
from . import Packed, evaluates
from .guards import Guard
from .packing import split_relations


def pointwise_bodies(node, relations, options: dict) -> list:
    """The inputs' bodies, split together on the node's pointwise attributes when it has any
    (within the ``max_tuples`` of ``options``)."""
    names = _pointwise(node)
    if not names:
        return [r.body for r in relations]
    key = [n for n in node.heading.names if n not in names]
    return split_relations(relations, names, key, Guard.of(node, options))


def _pointwise(node) -> list:
    return [n for n in node.pointwise if n in node.heading]


def _operand_bodies(node, ctx, sources) -> list:
    """The operands' tuples: iterables of rows of the node's heading (maybe repeating some)
    when no attribute is pointwise, else their bodies split together."""
    if _pointwise(node):
        return pointwise_bodies(node, [ctx.eval(s) for s in sources], ctx.options)
    return [ctx.rows(s).projected(node.heading) for s in sources]


@evaluates(Union)
def _union(node, ctx):
    return Relation(node.heading,
                    frozenset().union(*(ctx.rows(s).projected(node.heading)
                                        for s in node.sources)))


def by_coverage(node, ctx, sources, operator: str):
    """The result of a set operation pointwise on one interval attribute, packed on it, by
    coverage (``coverage.py``: O(n log n + output), no split); None on several attributes."""
    names = _pointwise(node)
    if len(names) != 1:
        return None
    from .coverage import minus_rows
    relations = [ctx.eval(s) for s in sources]  # one heading, sorted by name: one column order
    return Packed(Relation(node.heading, frozenset(minus_rows(relations, names[0], operator))))


@evaluates(Intersect)
def _intersect(node, ctx):
    swept = by_coverage(node, ctx, node.sources, "intersect")
    if swept is not None:
        return swept
    first, *others = _operand_bodies(node, ctx, node.sources)
    return Relation(node.heading, frozenset(first).intersection(*others))


@evaluates(Minus)
def _minus(node, ctx):
    swept = by_coverage(node, ctx, (node.left, node.right), "minus")
    if swept is not None:
        return swept
    left, right = _operand_bodies(node, ctx, (node.left, node.right))
    return Relation(node.heading, frozenset(left).difference(right))


@evaluates(XMinus)
def _xminus(node, ctx):
    swept = by_coverage(node, ctx, node.sources, "xminus")
    if swept is not None:
        return swept
    bodies = [frozenset(b) for b in _operand_bodies(node, ctx, node.sources)]
    return Relation(node.heading, reduce(frozenset.symmetric_difference, bodies))
