"""Python evaluation of UNION, INTERSECT, MINUS, XMINUS: set operations on the bodies."""

from __future__ import annotations

from functools import reduce

from ..algebra.setops import Intersect, Minus, Union, XMinus
from ..values import Relation
from . import evaluates


@evaluates(Union)
def _union(node, ctx):
    bodies = [ctx.eval(s).body for s in node.sources]
    return Relation(node.heading, frozenset().union(*bodies))


@evaluates(Intersect)
def _intersect(node, ctx):
    bodies = sorted((ctx.eval(s).body for s in node.sources), key=len)
    return Relation(node.heading, bodies[0].intersection(*bodies[1:]))


@evaluates(Minus)
def _minus(node, ctx):
    return Relation(node.heading, ctx.eval(node.left).body - ctx.eval(node.right).body)


@evaluates(XMinus)
def _xminus(node, ctx):
    bodies = [ctx.eval(s).body for s in node.sources]
    return Relation(node.heading, reduce(frozenset.symmetric_difference, bodies))
