"""Python evaluation of UNION, INTERSECT, MINUS, XMINUS: set operations on the bodies."""

from __future__ import annotations

from functools import reduce

from ..algebra.setops import Intersect, Minus, Union, XMinus
from ..values import Relation
from . import evaluates
from .guards import Guard
from .packing import split_relations


def pointwise_bodies(node, relations, options: dict) -> list:
    """The inputs' bodies, split together on the node's pointwise attributes when it has any
    (within the ``max_tuples`` of ``options``)."""
    names = [n for n in node.pointwise if n in node.heading]
    if not names:
        return [r.body for r in relations]
    key = [n for n in node.heading.names if n not in names]
    return split_relations(relations, names, key, Guard.of(node, options))


@evaluates(Union)
def _union(node, ctx):
    bodies = [ctx.eval(s).body for s in node.sources]
    return Relation(node.heading, frozenset().union(*bodies))


@evaluates(Intersect)
def _intersect(node, ctx):
    bodies = pointwise_bodies(node, [ctx.eval(s) for s in node.sources], ctx.options)
    bodies = sorted(bodies, key=len)
    return Relation(node.heading, frozenset(bodies[0].intersection(*bodies[1:])))


@evaluates(Minus)
def _minus(node, ctx):
    left, right = pointwise_bodies(node, [ctx.eval(node.left), ctx.eval(node.right)],
                                   ctx.options)
    return Relation(node.heading, frozenset(left - right))


@evaluates(XMinus)
def _xminus(node, ctx):
    relations = [ctx.eval(s) for s in node.sources]
    bodies = [frozenset(b) for b in pointwise_bodies(node, relations, ctx.options)]
    return Relation(node.heading, reduce(frozenset.symmetric_difference, bodies))
